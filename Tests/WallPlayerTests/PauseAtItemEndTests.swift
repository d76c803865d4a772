import Foundation
import GroundTruth
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// The item-end boundary as a wall node meets it: a pause whose time falls inside an item's last
/// frame, with the next item already queued behind it. The node pauses the player at the pause's
/// time and then moves exactly to it (the follower's `showExactFrame`); the sink must show the
/// item's last frame throughout, not the next item's first (the glass once showed frame 0 of the
/// next pass while every node reported the item's end).
final class PauseAtItemEndTests: XCTestCase {
    private let quarterSecond = MediaTime(value: 1, timescale: 4)

    func testAPauseInsideTheLastFrame_holdsThatFrame_withTheNextItemQueued() async throws {
        let first = try TestMedia.frameCode(seconds: 2)
        let second = try TestMedia.frameCode(seconds: 3)
        let end = MediaTime(value: 2, timescale: 1)
        // The last frame is 1.9667 s to 2 s (frame 59 of 30 a second).
        for beforeEnd in [30, 25, 10, 1] {
            let held = end - MediaTime(value: Int64(beforeEnd), timescale: 1000)
            let (player, item) = try await playAndPause(
                at: held, video: Headless.video, first: first, second: second)
            // Before the move: the frame after the pause's waits at the sink, the last frame stays.
            XCTAssertEqual(try player.shownFrame(), 59, "\(beforeEnd) ms before the end: the last frame stays on")
            XCTAssertEqual(player.rate, 0)
            // The player makes the next item current once the last frame is presented (the
            // follower then prepares the held pass afresh: FollowerScenarioTests); while it is on
            // the first, the exact move shows the last frame.
            if player.currentItem === item {
                let exact = await player.seek(to: held, toleranceBefore: .zero, toleranceAfter: .zero)
                XCTAssertTrue(exact, "the exact move to \(held.seconds) s")
                XCTAssertEqual(
                    try player.shownFrame(), 59, "\(beforeEnd) ms before the end: the sink shows the last frame")
                XCTAssertLessThan(player.currentTime(), end, "the position is inside the item")
            }
            player.pause()
        }
    }

    /// The same pause on a real window (ximagesink on Xvfb), read from screenshots: once the player
    /// paused, before any move, the glass still shows the item's last frame. (The frame after the
    /// pause's, the next item's first, waits at the gate; it used to go on to the sink as the pipeline
    /// paused, and the sink drew it as its preroll: frame 0 on the glass.)
    func testAPauseInsideTheLastFrame_leavesTheLastFrameOnTheGlass() async throws {
        let display = ":74"
        let xvfb = try await startXvfb(display: display, width: 320, height: 180)
        // Xlib ends the process when the server of a connection still open goes away: every
        // player is let go and its pipeline stopped (its sink disconnected) before the server is.
        var players: [WeakBox<QueuePlayer>] = []
        defer {
            let gone = players.allSatisfy { $0.value == nil } && PipelineTeardowns.wait()
            if gone {
                // It starts with the test's signal mask, SIGTERM blocked.
                xvfb.signal(SIGKILL)
                _ = xvfb.finish()
            }
        }
        let first = try TestMedia.frameCode(seconds: 2)
        let second = try TestMedia.frameCode(seconds: 3)
        let end = MediaTime(value: 2, timescale: 1)
        let window = VideoOutputSettings(sinkDescription: "ximagesink display=\(display) sync=true")
        for beforeEnd in [25, 1] {
            let held = end - MediaTime(value: Int64(beforeEnd), timescale: 1000)
            let (player, _) = try await playAndPause(at: held, video: window, first: first, second: second)
            XCTAssertEqual(
                try glassFrame(display, source: first), 59,
                "\(beforeEnd) ms before the end: the glass keeps the last frame")
            player.pause()
            players.append(WeakBox(player))
        }
        try await eventually(within: 10, "every player let go") { players.allSatisfy { $0.value == nil } }
    }

    private final class WeakBox<Value: AnyObject> {
        weak var value: Value?
        init(_ value: Value) { self.value = value }
    }

    /// A 2 s item with a 3 s one queued behind it, played from 1.5 s and paused (once it plays, as
    /// a node schedules it: a rate set before the start's time would replace the start) at the host
    /// time the item reaches `held`; returned 0.3 s after the pause, with no move made.
    private func playAndPause(
        at held: MediaTime, video: VideoOutputSettings, first: URL, second: URL
    ) async throws -> (player: QueuePlayer, item: PlayerItem) {
        let item = PlayerItem(url: first)
        let player = QueuePlayer(
            items: [item, PlayerItem(url: second)], video: video, audioSinkDescription: Headless.audio)
        player.automaticallyWaitsToMinimizeStalling = false
        try await item.waitUntilReady()
        let from = MediaTime(value: 3, timescale: 2)
        let sought = await player.seek(to: from, toleranceBefore: .zero, toleranceAfter: .zero)
        XCTAssertTrue(sought)
        let prerolled = await player.preroll(atRate: 1)
        XCTAssertTrue(prerolled)
        let startAt = MasterClock.host.now() + quarterSecond
        try player.setRate(1, time: from, atHostTime: startAt)
        let pauseAt = startAt + (held - from)
        try await Task.sleep(for: .seconds((startAt - MasterClock.host.now()).seconds + 0.1))
        XCTAssertEqual(player.rate, 1, "playing before the pause at \(held.seconds) s")
        try player.setRate(0, time: .invalid, atHostTime: pauseAt)
        try await Task.sleep(for: .seconds((pauseAt - MasterClock.host.now()).seconds + 0.3))
        return (player, item)
    }

    /// The frame on the glass: of `source`'s frames, the one whose colour (each frame is one flat
    /// colour) is nearest the window's, at the screen's corner. The codes are read in RGB, as the
    /// sink's conversion clips them, so the colours are compared, not decoded.
    private func glassFrame(_ display: String, source: URL) throws -> Int {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("glass-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func colours(_ arguments: [String]) throws -> [[Int]] {
            let raw = folder.appendingPathComponent("colours.rgb")
            try TestMedia.run(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-loglevel", "error", "-y"] + arguments + [
                    "-vf", "scale=1:1", "-pix_fmt", "rgb24", "-f", "rawvideo", raw.path,
                ])
            let bytes = [UInt8](try Data(contentsOf: raw))
            return stride(from: 0, to: bytes.count - 2, by: 3).map {
                [Int(bytes[$0]), Int(bytes[$0 + 1]), Int(bytes[$0 + 2])]
            }
        }
        let frames = try colours(["-i", source.path])
        let glass = try XCTUnwrap(
            colours(["-f", "x11grab", "-video_size", "160x90", "-i", display, "-frames:v", "1"]).first)
        func distance(_ frame: [Int]) -> Int { zip(frame, glass).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) }
        return frames.indices.min { distance(frames[$0]) < distance(frames[$1]) }!
    }
}
