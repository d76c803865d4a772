import LockstepLocks
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// Seeks on a frame-code clip (30 fps, a keyframe every 30 frames), checked by the frame number
/// the prerolled picture carries.
final class SeekTests: XCTestCase {
    func testSeek_whenZeroTolerance_landsOnTheExactFrame() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        for frame: Int64 in [47, 61, 119, 3, 89] {
            let finished = await player.seek(to: frames(frame), toleranceBefore: .zero, toleranceAfter: .zero)
            XCTAssertTrue(finished)
            XCTAssertEqual(try player.shownFrame(), Int(frame), "zero-tolerance seek to frame \(frame)")
            XCTAssertEqual(player.currentTime().nanoseconds ?? 0, frames(frame).nanoseconds ?? 0, accuracy: 1)
        }
    }

    func testSeek_whenDefaultTolerance_landsOnKeyframeAtOrBefore() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        for (target, keyframe) in [(47, 30), (61, 60), (29, 0), (90, 90)] {
            let finished = await player.seek(to: frames(Int64(target)))
            XCTAssertTrue(finished)
            XCTAssertEqual(try player.shownFrame(), keyframe, "default seek to frame \(target)")
        }
    }

    func testSeek_whenToleranceCoversKeyframe_usesIt_elseExact() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let wide = await player.seek(
            to: frames(47), toleranceBefore: MediaTime(value: 1, timescale: 1), toleranceAfter: .zero)
        XCTAssertTrue(wide)
        XCTAssertEqual(try player.shownFrame(), 30, "keyframe 30 lies within 1 s before frame 47")
        let narrow = await player.seek(to: frames(47), toleranceBefore: frames(3), toleranceAfter: frames(3))
        XCTAssertTrue(narrow)
        XCTAssertEqual(try player.shownFrame(), 47, "no keyframe within 3 frames of 47: exact")
    }

    func testSeek_whenSupersededBeforeFinishing_firstCompletesFalse() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let results = Mutex<[Int: Bool]>([:])
        let both = expectation(description: "both seeks complete")
        both.expectedFulfillmentCount = 2
        player.seek(to: frames(20), toleranceBefore: .zero, toleranceAfter: .zero) { finished in
            results.withLock { $0[1] = finished }
            both.fulfill()
        }
        player.seek(to: frames(100), toleranceBefore: .zero, toleranceAfter: .zero) { finished in
            results.withLock { $0[2] = finished }
            both.fulfill()
        }
        await fulfillment(of: [both], timeout: 10)
        XCTAssertEqual(results.withLock { $0 }, [1: false, 2: true])
        XCTAssertEqual(try player.shownFrame(), 100)
    }

    func testCancelPendingSeeks_completesWithFalse() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let done = expectation(description: "seek completes")
        let result = Mutex<Bool?>(nil)
        player.seek(to: frames(70), toleranceBefore: .zero, toleranceAfter: .zero) { finished in
            result.withLock { $0 = finished }
            done.fulfill()
        }
        player.currentItem!.cancelPendingSeeks()
        await fulfillment(of: [done], timeout: 10)
        XCTAssertEqual(result.withLock { $0 }, false)
    }

    func testSeek_whenTimeNotNumeric_completesFalse() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let finished = await player.seek(to: .indefinite)
        XCTAssertFalse(finished)
    }
}
