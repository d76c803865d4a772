import Dispatch
import LockstepLocks
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

final class TimeObserverTests: XCTestCase {
    private let interval = MediaTime(value: 1, timescale: 4)

    func testPeriodicObserver_firesAtEachMultipleOfTheInterval() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let times = Mutex<[MediaTime]>([])
        let five = expectation(description: "five periodic callbacks while playing")
        five.assertForOverFulfill = false
        let token = player.addPeriodicTimeObserver(forInterval: interval, queue: nil) { time in
            let count = times.withLock { times in
                times.append(time)
                return times.count
            }
            if count >= 6 { five.fulfill() }
        }
        player.play()
        await fulfillment(of: [five], timeout: 10)
        player.removeTimeObserver(token)
        let seen = times.withLock { $0 }
        // The first callback is the start; the ones after it land on multiples of 0.25 s.
        let onGrid = seen.dropFirst().prefix(4).map { time -> Double in
            let quarters = (time.seconds / 0.25).rounded()
            return abs(time.seconds - quarters * 0.25)
        }
        XCTAssertTrue(onGrid.allSatisfy { $0 < 0.03 }, "periodic times off the 0.25 s grid: \(seen)")
        XCTAssertTrue(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "times go forward: \(seen)")
    }

    func testPeriodicObserver_firesOnSeek() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let jumped = expectation(description: "callback at the seek target")
        jumped.assertForOverFulfill = false
        let target = MediaTime(value: 3, timescale: 1)
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 10, timescale: 1), queue: nil) {
            if abs($0.seconds - target.seconds) < 0.05 { jumped.fulfill() }
        }
        defer { player.removeTimeObserver(token) }
        _ = await player.seek(to: target, toleranceBefore: .zero, toleranceAfter: .zero)
        await fulfillment(of: [jumped], timeout: 5)
    }

    func testBoundaryObserver_firesOnceWhenCrossed() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let crossings = Mutex<[MediaTime]>([])
        let crossed = expectation(description: "boundary crossed")
        let token = player.addBoundaryTimeObserver(forTimes: [MediaTime(value: 1, timescale: 2)], queue: nil) {
            crossings.withLock { $0.append(player.currentTime()) }
            crossed.fulfill()
        }
        defer { player.removeTimeObserver(token) }
        player.play()
        await fulfillment(of: [crossed], timeout: 5)
        try await player.waitUntilTime(MediaTime(value: 3, timescale: 2))
        let seen = crossings.withLock { $0 }
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(seen.first?.seconds ?? 0, 0.5, accuracy: 0.05)
    }

    func testRemoveTimeObserver_stopsCallbacks() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let count = Mutex(0)
        let started = expectation(description: "first periodic callbacks")
        started.assertForOverFulfill = false
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 10), queue: nil) { _ in
            if count.withLock({ value in
                value += 1
                return value
            }) >= 3 {
                started.fulfill()
            }
        }
        player.play()
        await fulfillment(of: [started], timeout: 5)
        player.removeTimeObserver(token)
        let atRemoval = count.withLock { $0 }
        // Callbacks would come every 0.1 s: playing on for 0.5 s would bring about five.
        try await player.waitUntilTime(player.currentTime() + MediaTime(value: 1, timescale: 2))
        XCTAssertEqual(count.withLock { $0 }, atRemoval)
    }

    /// Issue 10: the periodic observer fired twice when playback stopped. A stop is one change of
    /// the timebase: one callback, at the time playback stopped.
    func testPeriodicObserver_firesOnceAtStop() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let times = Mutex<[MediaTime]>([])
        // An interval longer than the test: only the timebase's changes fire it.
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 60, timescale: 1), queue: nil) {
            time in times.withLock { $0.append(time) }
        }
        defer { player.removeTimeObserver(token) }
        player.play()
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 2))
        try await Task.sleep(for: .milliseconds(200))
        let beforeStop = times.withLock { $0.count }
        player.pause()
        try await Task.sleep(for: .milliseconds(800))
        let atStop = times.withLock { Array($0.dropFirst(beforeStop)) }
        XCTAssertEqual(atStop.count, 1, "callbacks at the stop: \(atStop)")
        XCTAssertEqual(atStop.first, player.currentTime(), "at the time playback stopped")
    }
}
