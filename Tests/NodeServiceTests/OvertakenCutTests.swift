import Foundation
import LockstepTime
import Logging
import NodeService
import TestSupport
import WallPlayer
import WallProtocol
import WallTimeline
import XCTest

/// A node's whole chain in process (its `Node`, the follower, the screen and three players on
/// fakesinks, on this machine's clock): a cut prepared in standby for its time, then an edit that
/// comes before that time. The seed 12 chaos hour (2026-12-01) met it: a cue arrived 40 ms after
/// one node had prepared a load's start, the load's start after the cue's cut; that node kept the
/// stale cut, and went where the wall was only once its time had passed (0.6 s out of step).
final class OvertakenCutTests: XCTestCase {
    func testAnEditBeforeACutPreparedForLater_isOnTheScreenAtItsTime_andOnlyIt() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-overtaken-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clips = try ["a.mp4", "b.mp4", "c.mp4"].map { name in
            let clip = folder.appendingPathComponent(name)
            try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 4), to: clip)
            return clip.path
        }
        let config = try TestWall(
            name: "lobby", clockPort: 9, media: clips[0], canvas: (160, 90),
            stateDirectory: folder.appendingPathComponent("state").path,
            nodes: [TestWall.Node(id: "a", controlPort: 7000, tile: (0, 0, 160, 90), output: (160, 90))]
        ).write(to: folder.appendingPathComponent("wall.yaml"))
        let settings = try NodeSettings(
            config: try WallConfig.load(path: config.path), id: "a",
            overrides: NodeSettings.Overrides(useLocalClock: true))
        let logger = Logger(label: "test")
        let players = (0..<3).map { _ in
            QueuePlayer(items: [], video: settings.video, audioSinkDescription: nil, logger: logger)
        }
        let clock = await ClockFollower.start(settings: settings, players: players, logger: logger)
        let screen = NodeScreen(settings: settings, players: players, frames: FrameLog(), window: nil, logger: logger)
        let node = Node(settings: settings, screen: screen, clock: clock, logger: logger)
        let running = Task { await node.run() }
        func scenario() async throws {
            let now = { LocalClock.monotonic.now() }
            let seconds = { (value: Double) in MediaTime(seconds: value, preferredTimescale: 1_000_000_000) }
            let playing = { players.filter { $0.timeControlStatus == .playing }.count }

            let first = try Timeline(
                wall: "lobby", epoch: 0,
                playlist: Playlist(entries: clips.map { TimelineEntry(media: $0, outPoint: seconds(4)) }),
                start: now() + seconds(1))
            try await node.adopt(first)
            try await eventually(within: 10, "entry a playing") { playing() == 1 }

            // A cut to entry b 1.5 s from now, prepared in standby and started for its time (on a busy
            // machine a preparation ready too late is anchored again further on: the time it was
            // started for is the node's last start).
            let cut = try first.applying(.goTo(entry: 1), at: now() + seconds(1.5))
            try await node.adopt(cut)
            try await eventually(
                within: 4, "the cut prepared, its player waiting for its time", every: .milliseconds(5)
            ) {
                players.contains { $0.timeControlStatus == .waitingToPlayAtSpecifiedRate }
            }
            let started = await node.status().timeline
            XCTAssertEqual(started?.lastStartVersion, 2)
            let later = try XCTUnwrap(started?.lastStartAt, "the cut's time")
            // The cut is prepared a lead ahead (about 0.3 s after a quick first start) and started
            // for its time: the test has that long.
            let left = later - now()

            // Then an edit before it: entry c from its start, 80 ms from now, prepared and on the
            // screen at its time, while the overtaken cut's time is still ahead.
            let sooner = now() + seconds(0.08)
            try await node.adopt(try cut.applying(.goTo(entry: 2), at: sooner))
            try await Task.sleep(for: .milliseconds(150))
            let statuses = players.map { ($0.timeControlStatus, $0.currentItem?.asset.url.lastPathComponent) }
            XCTAssertLessThan(now(), later, "judged before the overtaken cut's time (\(left.seconds) s were left)")
            XCTAssertEqual(
                statuses.filter { $0.0 == .playing }.map(\.1), ["c.mp4"],
                "only the edit's player plays; before, the overtaken cut's screen played on to its time: \(statuses)")
            let status = await node.status()
            XCTAssertEqual(status.timeline?.version, 3)
        }
        var failure: (any Error)?
        do { try await scenario() } catch { failure = error }
        // Nothing plays on when the test ends: a pipeline still running at the test process's exit
        // can crash it there.
        running.cancel()
        await running.value
        for player in players { player.removeAllItems() }
        PipelineTeardowns.wait()
        if let failure { throw failure }
    }
}
