import Dispatch
import LockstepLocks
import XCTest

@testable import LockstepTime

/// Longer than any test waits: reaching it would be a failure.
private let longLimit = MediaTime(value: 60, timescale: 1)

final class DeadlineTests: XCTestCase {
    func testFirstAnswer_whenAnsweredAtOnce_returnsIt() async {
        let answer = await Deadline.firstAnswer(within: longLimit) { (done: @escaping @Sendable (Int) -> Void) in
            done(7)
        }
        XCTAssertEqual(answer, 7)
    }

    func testFirstAnswer_whenAnsweredLaterOnAnotherThread_returnsIt() async {
        let answer = await Deadline.firstAnswer(within: longLimit) { (done: @escaping @Sendable (String) -> Void) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { done("late") }
        }
        XCTAssertEqual(answer, "late")
    }

    func testFirstAnswer_whenNeverAnswered_returnsNilAtTheLimit() async {
        let started = ContinuousClock.now
        let answer = await Deadline.firstAnswer(within: MediaTime(value: 50, timescale: 1000)) {
            (_: @escaping @Sendable (Bool) -> Void) in
        }
        XCTAssertNil(answer)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(50))
    }

    func testFirstAnswer_answersAfterTheFirst_areIgnored() async {
        let answer = await Deadline.firstAnswer(within: longLimit) { (done: @escaping @Sendable (Int) -> Void) in
            done(1)
            done(2)
        }
        XCTAssertEqual(answer, 1)
    }

    func testFirstAnswer_whenTheTaskIsCancelled_returnsNilWithoutWaitingForTheLimit() async {
        let started = ContinuousClock.now
        let waiting = Task {
            await Deadline.firstAnswer(within: longLimit) { (_: @escaping @Sendable (Bool) -> Void) in }
        }
        try? await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        let answer = await waiting.value
        XCTAssertNil(answer)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
    }

    func testFirstAnswer_whenCancelledBeforeStarting_returnsNilAndStillStartsTheWork() async {
        let started = Atomic<Bool>(false)
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await Deadline.firstAnswer(within: longLimit) { (_: @escaping @Sendable (Bool) -> Void) in
                started.store(true, ordering: .relaxed)
            }
        }
        let answer = await waiting.value
        XCTAssertNil(answer)
        XCTAssertTrue(started.load(ordering: .relaxed))
    }
}
