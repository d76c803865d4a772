import Dispatch
import Foundation
import LockstepLocks
import XCTest

@testable import WallPlayer

final class ChangeStreamTests: XCTestCase {
    func testSubscriber_getsTheCurrentValueThenEveryChangeInOrder() async {
        let stream = ChangeStream(0)
        var values = stream.values().makeAsyncIterator()
        for value in 1...3 { stream.update(value) }
        stream.update(3)
        var seen: [Int] = []
        for _ in 0..<4 { seen.append(await values.next() ?? -1) }
        XCTAssertEqual(seen, [0, 1, 2, 3], "an unchanged value is not sent again")
    }

    func testStagedValues_areInPlaceBeforeAnyIsDelivered() async {
        let rate = ChangeStream(1)
        let status = ChangeStream("playing")
        var rates = rate.values().makeAsyncIterator()
        var statuses = status.values().makeAsyncIterator()
        _ = await rates.next()
        _ = await statuses.next()
        rate.stage(0)
        status.stage("paused")
        XCTAssertEqual(rate.value, 0)
        XCTAssertEqual(status.value, "paused")
        rate.deliverStaged()
        let told = await rates.next()
        XCTAssertEqual(told, 0)
        XCTAssertEqual(status.value, "paused", "the other value is in place when the first is told")
        status.deliverStaged()
        let toldStatus = await statuses.next()
        XCTAssertEqual(toldStatus, "paused")
        // Staging the value already there stages nothing; an update after a stage delivers once.
        rate.stage(0)
        rate.stage(2)
        rate.update(3)
        rate.deliverStaged()
        rate.update(4)
        let updated = await rates.next()
        let updatedAgain = await rates.next()
        XCTAssertEqual(updated, 3)
        XCTAssertEqual(updatedAgain, 4, "the stage the update overtook is not delivered again")
    }

    /// A subscriber cancelled while a value is being sent to it: the runtime holds the task's
    /// status lock while it tells the stream it ended, and the sender holds the stream's lock while
    /// it resumes the task. With the ended subscriber removed under the stream's lock, the two
    /// waited on each other for good (seen as a `wallnode play` that never exited).
    func testCancellingASubscriberWhileValuesArrive_neverDeadlocks() {
        let stream = ChangeStream(0)
        let events = EventStream<Int>()
        let done = DispatchSemaphore(value: 0)
        let sending = Atomic(true)
        Thread.detachNewThread {
            var value = 0
            while sending.load(ordering: .relaxed) {
                value += 1
                stream.update(value)
                events.send(value)
            }
        }
        Task.detached {
            for _ in 0..<3000 {
                let listening = Task {
                    for await _ in stream.values() {}
                }
                let hearing = Task {
                    for await _ in events.events() {}
                }
                await Task.yield()
                listening.cancel()
                hearing.cancel()
                await listening.value
                await hearing.value
            }
            done.signal()
        }
        let finished = done.wait(timeout: .now() + 60) == .success
        sending.store(false, ordering: .relaxed)
        XCTAssertTrue(finished, "3000 subscribers cancelled while values arrive, within 60 s")
    }

    /// Subscribers that stopped listening are let go, so a long-running node that subscribes per
    /// request does not keep them all.
    func testEndedSubscribers_areLetGo() async {
        let stream = ChangeStream(0)
        for _ in 0..<100 {
            let listening = Task {
                for await _ in stream.values() {}
            }
            await Task.yield()
            listening.cancel()
            await listening.value
        }
        stream.update(1)
        XCTAssertEqual(stream.subscriberCount, 0)
        let events = EventStream<Int>()
        for _ in 0..<100 {
            let hearing = Task {
                for await _ in events.events() {}
            }
            await Task.yield()
            hearing.cancel()
            await hearing.value
        }
        events.send(1)
        XCTAssertEqual(events.subscriberCount, 0)
    }
}
