import Foundation
import GroundTruth
import LockstepLocks
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

final class SynchronizedStartTests: XCTestCase {
    private let margin = MediaTime(value: 1, timescale: 2)
    /// The bound from the issue: first frame within 2 ms of the host time.
    private let bound = 0.002

    func testSetRateAtHostTime_whenWaitingToMinimizeStalls_throws() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 1))
        XCTAssertTrue(player.automaticallyWaitsToMinimizeStalling)
        XCTAssertThrowsError(try player.setRate(1, time: .zero, atHostTime: MasterClock.host.now())) {
            XCTAssertEqual($0 as? PlayerError, .waitsToMinimizeStalling)
        }
    }

    func testSetRateAtHostTime_whenItemNotFileBased_throws() {
        let player = Player(
            playerItem: PlayerItem(url: URL(string: "http://media.example/clip.mp4")!), video: Headless.video,
            audioSinkDescription: nil)
        player.automaticallyWaitsToMinimizeStalling = false
        XCTAssertThrowsError(try player.setRate(1, time: .zero, atHostTime: MasterClock.host.now())) {
            XCTAssertEqual($0 as? PlayerError, .notFileBased("http://media.example/clip.mp4"))
        }
    }

    func testSetRateAtHostTime_whenTimeIndefinite_throws() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 1))
        player.automaticallyWaitsToMinimizeStalling = false
        XCTAssertThrowsError(try player.setRate(1, time: .indefinite, atHostTime: MasterClock.host.now())) {
            XCTAssertEqual($0 as? PlayerError, .invalidTime(argument: "time", time: .indefinite))
        }
    }

    func testPreroll_completesWithTheFirstFrameInTheSink() async throws {
        let player = Player(
            playerItem: PlayerItem(url: try TestMedia.frameCode(seconds: 1)), video: Headless.video,
            audioSinkDescription: Headless.audio)
        let prerolled = await player.preroll(atRate: 1)
        XCTAssertTrue(prerolled)
        XCTAssertEqual(player.currentItem?.status, .readyToPlay)
        XCTAssertTrue(player.isReadyForDisplay)
        XCTAssertEqual(try player.shownFrame(), 0)
        XCTAssertEqual(player.timeControlStatus, .paused)
    }

    func testCancelPendingPrerolls_completesThemWithFalse() async throws {
        let player = Player(
            playerItem: PlayerItem(url: try TestMedia.frameCode(seconds: 1)), video: Headless.video,
            audioSinkDescription: nil)
        let done = expectation(description: "preroll completes")
        let result = Mutex<Bool?>(nil)
        player.preroll(atRate: 1) { finished in
            result.withLock { $0 = finished }
            done.fulfill()
        }
        player.cancelPendingPrerolls()
        await fulfillment(of: [done], timeout: 5)
        XCTAssertEqual(result.withLock { $0 }, false)
    }

    /// Issue 10: a rate of 0 with an item time ignored the time. At the host time the item is now
    /// paused at that item time, showing its frame.
    func testSetRateZeroAtHostTime_pausesAtTheItemTime() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4))
        player.automaticallyWaitsToMinimizeStalling = false
        player.rate = 1
        try await player.waitUntilTime(frames(10))
        let hostTime = MasterClock.host.now() + MediaTime(value: 200, timescale: 1000)
        try player.setRate(0, time: frames(75), atHostTime: hostTime)
        try await withTimeout(5, "the player paused at frame 75") {
            while !(player.rate == 0 && player.currentTime() == frames(75) && (try? player.shownFrame()) == 75) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertEqual(player.currentTime(), frames(75), "it stays there")
        XCTAssertEqual(player.timeControlStatus, .paused)
    }

    func testSetRateAtHostTime_presentsItemTimeAtHostTime() async throws {
        try await assertScheduledStart(clock: nil, itemFrame: 45, prerollAtItemTime: false)
    }

    func testSetRateAtHostTime_whenPrerolledAtItemTime_startsWithoutSeeking() async throws {
        try await assertScheduledStart(clock: nil, itemFrame: 60, prerollAtItemTime: true)
    }

    func testSetRateAtHostTime_onADriftingMasterClock_presentsOnTheMasterTimeline() async throws {
        let local = LocalClock.process.now()
        let mapping = ClockMapping(
            localTime: local, masterTime: local + MediaTime(value: 3600, timescale: 1), rate: 1 + 150e-6)
        try await assertScheduledStart(
            clock: MasterClock(name: "drifting-master", following: mapping), itemFrame: 30, prerollAtItemTime: true)
    }

    /// Starts a frame-code clip at item frame `itemFrame` at a host time half a second ahead,
    /// and checks when the sink really sent each of the first frames: a `udpsink` sends each
    /// frame as it renders, and the receiver stamps arrivals in the kernel.
    /// H.264 with B-frames starts its timestamps a reordering delay (here two frames) after zero; an
    /// MP4 edit list says the first frame is at item time zero. A frame presented is reported at its
    /// item time, so a node judging its frames against the wall's timeline sees it in step.
    func testPresentedFrames_ofMediaWithBFrames_areInItemTime() async throws {
        let clip = try TestMedia.audioVideo(seconds: 3)
        let player = try await Player.ready(
            clip, video: VideoOutputSettings(sinkDescription: "fakesink sync=true"), audio: Headless.audio)
        player.automaticallyWaitsToMinimizeStalling = false
        // The item is ready before its first frame reaches the sink: that frame (item time 0) is
        // reported when it gets there, so the start's frames are watched only once it has.
        let prerolled = await player.preroll(atRate: 1)
        XCTAssertTrue(prerolled)
        let itemTime = frames(30)
        let hostTime = MasterClock.host.now() + margin
        let presented = player.presentedFrames
        try player.setRate(1, time: itemTime, atHostTime: hostTime)
        let shown = try await collect(5, from: presented, within: 5, "the first frames")
        for (index, frame) in shown.enumerated() {
            XCTAssertEqual(
                frame.presentationTimestamp.seconds, frames(30 + Int64(index)).seconds, accuracy: 0.001,
                "frame \(index) of the start")
            XCTAssertEqual(
                frame.dueAt.seconds, (hostTime + frames(Int64(index))).seconds, accuracy: 0.001, "frame \(index) due")
        }
        player.pause()
    }

    private func assertScheduledStart(clock: MasterClock?, itemFrame: Int64, prerollAtItemTime: Bool) async throws {
        let receiver = try FrameReceiver(count: 1)
        let video = VideoOutputSettings(
            sinkDescription: "udpsink host=127.0.0.1 port=\(receiver.ports[0]) sync=true", videoGravity: .resize,
            outputSize: PixelSize(width: 8, height: 8))
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 4), video: video, audio: Headless.audio)
        player.automaticallyWaitsToMinimizeStalling = false
        player.realtimeRenderPriority = 50
        player.masterClock = clock
        let itemTime = frames(itemFrame)
        if prerollAtItemTime {
            let sought = await player.seek(to: itemTime, toleranceBefore: .zero, toleranceAfter: .zero)
            XCTAssertTrue(sought)
        }
        let prerolled = await player.preroll(atRate: 1)
        XCTAssertTrue(prerolled)

        let master = clock ?? MasterClock.host
        let hostTime = master.now() + margin
        try player.setRate(1, time: itemTime, atHostTime: hostTime)
        _ = try await first(in: player.timeControlStatusUpdates, within: 1, "waiting for the host time") {
            $0 == .waitingToPlayAtSpecifiedRate
        }
        XCTAssertEqual(player.reasonForWaitingToPlay, .scheduledStart)

        let arrivals = try await collect(15, from: receiver.arrivals, within: 5, "the first frames")
        receiver.stop()
        if case .normal(let reason) = player.renderThreadPriority {
            print("render thread not real-time (\(reason)): later frames may wait for the CPU")
        }
        // Where each frame should appear on this machine's clock, and how far from it it did.
        let mapping = master.mapping
        var errors: [Double] = []
        for (index, arrival) in arrivals.enumerated() {
            let frame = FrameCode.decode(i420: arrival.payload, width: 8, height: 8)
            XCTAssertEqual(frame, Int(itemFrame) + index, "frame \(index) of the start")
            let due = mapping.localTime(atMaster: hostTime + frames(Int64(index)))
            errors.append((arrival.arrivedAt - due).seconds)
        }
        XCTAssertLessThanOrEqual(
            abs(errors[0]), bound, "the first frame appeared \(errors[0] * 1000) ms from the host time")
        let median = errors.map(abs).sorted()[errors.count / 2]
        XCTAssertLessThanOrEqual(median, bound / 2, "frames after it, ms from due: \(errors.map { $0 * 1000 })")
        _ = try await first(in: player.timeControlStatusUpdates, within: 2, "playing") { $0 == .playing }
        player.pause()
    }
}
