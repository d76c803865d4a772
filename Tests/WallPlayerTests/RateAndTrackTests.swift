import Foundation
import GroundTruth
import LockstepLocks
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

final class RateAndTrackTests: XCTestCase {
    func testNegativeRate_playsBackwards() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        XCTAssertTrue(player.currentItem!.canPlayReverse)
        _ = await player.seek(to: frames(90), toleranceBefore: .zero, toleranceAfter: .zero)
        let presented = player.presentedFrames
        player.rate = -1
        let shown = try await collect(10, from: presented, "frames played backwards")
        let timestamps = shown.map(\.presentationTimestamp)
        XCTAssertTrue(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 > $1 }, "\(timestamps)")
        XCTAssertLessThanOrEqual(timestamps.first ?? .positiveInfinity, frames(90))
        player.pause()
    }

    func testFastReverse_playsBackwardsFromAnMP4() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        XCTAssertTrue(player.currentItem!.canPlayFastReverse)
        _ = await player.seek(to: frames(100), toleranceBefore: .zero, toleranceAfter: .zero)
        let presented = player.presentedFrames
        player.rate = -2
        let shown = try await collect(20, from: presented, "frames played fast backwards")
        let timestamps = shown.map(\.presentationTimestamp)
        XCTAssertTrue(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 > $1 }, "\(timestamps)")
        player.pause()
    }

    /// An MPEG transport stream cannot be played backwards (tsdemux refuses the seek): the item says
    /// so, and a negative rate is refused rather than accepted with nothing shown.
    func testTransportStream_saysItCannotPlayBackwards_andRefusesANegativeRate() async throws {
        // Six seconds: tsdemux says a two-second file cannot be sought (it finds too few clock references).
        let player = try await Player.ready(try TestMedia.frameCodeTransportStream(seconds: 6))
        let item = try XCTUnwrap(player.currentItem)
        XCTAssertTrue(item.canPlayFastForward && item.canPlaySlowForward)
        XCTAssertFalse(item.canPlayReverse || item.canPlaySlowReverse || item.canPlayFastReverse)
        XCTAssertFalse(item.canPlay(atRate: -1))
        let refused = await player.preroll(atRate: -1)
        XCTAssertFalse(refused, "a preroll at a rate the item cannot play")
        player.rate = -1
        await player.settle()
        XCTAssertEqual(player.rate, 0, "the rate is refused, as AVPlayer refuses one its item cannot play")
    }

    /// `preroll(atRate:)` prerolls in the rate's direction: backwards after a forward preroll it
    /// completes (it never did), on the frame at the current time; playing backwards then starts
    /// from there without another seek.
    func testPrerollAtANegativeRate_afterAForwardPreroll_completes() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        _ = await player.seek(to: frames(60), toleranceBefore: .zero, toleranceAfter: .zero)
        let forward = await player.preroll(atRate: 1)
        XCTAssertTrue(forward)
        // Through a stream, so that a preroll that never completes fails the test instead of holding it.
        let (done, report) = AsyncStream.makeStream(of: Bool.self)
        player.preroll(atRate: -1) { report.yield($0) }
        let backward = try await first(in: done, within: 10, "the preroll backwards") { _ in true }
        XCTAssertTrue(backward)
        XCTAssertEqual(try player.shownFrame(), 60)
        let events = player.currentItem!.events
        let presented = player.presentedFrames
        player.rate = -1
        let shown = try await collect(5, from: presented, "frames played backwards")
        XCTAssertEqual(shown.first?.presentationTimestamp, frames(60), "\(shown.map(\.presentationTimestamp))")
        XCTAssertTrue(zip(shown, shown.dropFirst()).allSatisfy { $0.presentationTimestamp > $1.presentationTimestamp })
        player.pause()
        // Playing at the prerolled rate needed no seek: no time jump was posted.
        let jumped = Task {
            for await event in events where event == .timeJumped { return true }
            return false
        }
        try await Task.sleep(for: .milliseconds(200))
        jumped.cancel()
        let didJump = await jumped.value
        XCTAssertFalse(didJump, "playing at the prerolled rate seeked again")
    }

    func testPrerollAtARateTheItemCannotPlay_isRefused() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 1))
        let refused = await player.preroll(atRate: .nan)
        XCTAssertFalse(refused)
    }

    func testSetRateAtHostTime_whenTheRateCannotBePlayed_throwsUnsupportedRate() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 1))
        player.automaticallyWaitsToMinimizeStalling = false
        for rate in [Float.nan, .infinity, -.infinity] {
            XCTAssertThrowsError(try player.setRate(rate, time: .zero, atHostTime: .invalid)) { error in
                guard case PlayerError.unsupportedRate = error else {
                    return XCTFail("rate \(rate): expected unsupportedRate, got \(error)")
                }
            }
        }
        XCTAssertEqual(player.rate, 0, "a refused rate leaves the player as it was")
    }

    func testFastForward_advancesFasterThanRealTime() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        let presented = player.presentedFrames
        player.rate = 2
        let shown = try await collect(20, from: presented, "frames at rate 2")
        let span = (shown.last!.presentationTimestamp - shown.first!.presentationTimestamp).seconds
        let took = (shown.last!.presentedAt - shown.first!.presentedAt).seconds
        XCTAssertEqual(span / took, 2, accuracy: 0.2, "item seconds per host second")
        player.pause()
    }

    func testDisablingTheAudioTrack_stopsAudioWhilePlaying() async throws {
        let receiver = try FrameReceiver(count: 1)
        let player = try await Player.ready(
            try TestMedia.audioVideo(seconds: 3), audio: "udpsink host=127.0.0.1 port=\(receiver.ports[0]) sync=true")
        let audio = try XCTUnwrap(player.currentItem?.tracks.first { $0.assetTrack.mediaType == .audio })
        player.play()
        _ = try await collect(5, from: receiver.arrivals, "audio buffers while the track is on")
        audio.isEnabled = false
        // Buffers already past the selection may still play out; nothing may come after that.
        let settled = LocalClock.monotonic.now() + MediaTime(value: 1, timescale: 4)
        let late = Mutex<[MediaTime]>([])
        let counter = Task {
            for await arrival in receiver.arrivals where arrival.arrivedAt > settled {
                late.withLock { $0.append(arrival.arrivedAt - settled) }
            }
        }
        try await player.waitUntilTime(player.currentTime() + MediaTime(value: 3, timescale: 2))
        receiver.stop()
        await counter.value
        XCTAssertEqual(late.withLock { $0 }, [], "audio buffers 250 ms and more after the track was disabled")
        XCTAssertEqual(player.timeControlStatus, .playing, "video plays on")
    }

    func testVolumeAndMute_areKept() async throws {
        let player = try await Player.ready(try TestMedia.audioVideo(seconds: 1), audio: Headless.audio)
        player.volume = 0.25
        player.isMuted = true
        XCTAssertEqual(player.volume, 0.25)
        XCTAssertTrue(player.isMuted)
        player.volume = 7
        XCTAssertEqual(player.volume, 1, "volume is clamped to 0...1")
    }
}

final class MasterClockTests: XCTestCase {
    func testFollow_whenTheMappingSlews_theClockDoesNotJump() {
        let local = LocalClock.process.now()
        let clock = MasterClock(name: "slewing", following: ClockMapping(localTime: local, masterTime: local, rate: 1))
        var previous = clock.now()
        // A servo's successive mappings: each passes through the previous line at its update time.
        var mapping = clock.mapping
        for step in 1...20 {
            let now = LocalClock.process.now()
            mapping = ClockMapping(
                localTime: now, masterTime: mapping.masterTime(atLocal: now), rate: 1 + Double(step % 5) * 100e-6)
            clock.follow(mapping)
            // The reading lies on the new mapping, between the local times read around it (a
            // thread descheduled between the reads widens the window, not the error).
            let before = LocalClock.process.now()
            let reading = clock.now()
            let after = LocalClock.process.now()
            XCTAssertGreaterThanOrEqual(reading, previous, "master time never runs backwards")
            let slack = MediaTime(value: 50, timescale: 1_000_000)
            XCTAssertGreaterThanOrEqual(reading, mapping.masterTime(atLocal: before) - slack, "step \(step)")
            XCTAssertLessThanOrEqual(reading, mapping.masterTime(atLocal: after) + slack, "step \(step)")
            previous = reading
        }
    }

    func testHost_readsTheProcessClock() {
        let before = LocalClock.process.now()
        let reading = MasterClock.host.now()
        let after = LocalClock.process.now()
        XCTAssertTrue(before <= reading && reading <= after, "\(before) <= \(reading) <= \(after)")
    }
}
