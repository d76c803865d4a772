import Foundation
import GroundTruth
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// A wall that plays by the calendar with no controller: two nodes with `autoplay` compute their
/// timeline from the config's schedule and the master's UTC. The master serves real time shifted
/// to just before each transition worth trying (a weekday opening, the hour daylight saving time
/// skips, Christmas closed, the hour it repeats), and ground truth at the sinks says when each
/// screen's picture changed, in master time.
final class ScheduleWallTests: XCTestCase {
    private let ids = ["a", "b"]
    private let masterPort = 15671
    private let firstControlPort = 17781

    /// A transition to try: the master is started `lead` before `at`, and the first frame of the
    /// loop (frame 0) must be on every screen at `at`, or, when `opens` is false, no frame of it may
    /// be shown around `at`.
    private struct Trial {
        var name: String
        var at: String
        var opens: Bool
        /// Whether the loop is playing before `at` (and stops then).
        var closes = false
    }

    private let trials = [
        Trial(name: "Monday 09:00 CET opens the weekday loop", at: "2026-11-30T08:00:00Z", opens: true),
        Trial(
            name: "the 02:30 part on the day 02:00-03:00 is skipped begins when the clocks jump",
            at: "2027-03-28T01:00:00Z", opens: true),
        Trial(name: "Christmas Day (a Friday) stays closed at 09:00", at: "2026-12-25T08:00:00Z", opens: false),
        Trial(
            name: "the night part ending at 02:30 ends at the first 02:30 when it comes twice",
            at: "2026-10-25T00:30:00Z", opens: false, closes: true),
    ]

    func testSchedule_switchesAtItsMasterTimes_onEveryScreen_withNoController() async throws {
        let wallnode = ChildProcess.product("wallnode")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-schedule-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 20), to: clip)
        // The outside is a still, held to the clip's standard at the transition.
        let white = try TestMedia.whiteImage(in: folder)
        let receiver = try FrameCodeCollector(count: ids.count)
        defer { receiver.stop() }
        let schedule = [
            "schedule:",
            "  time-zone: Europe/Paris",
            "  outside: {still: \(white.path)}",
            "  playlists:",
            "    loop: [{media: \(clip.path), out: 4s}]",
            "    reel: [{media: \(clip.path), in: 10s, out: 13s}]",
            "  day-parts:",
            "    - {playlist: loop, days: weekdays, from: \"09:00\", to: \"17:00\"}",
            "    - {playlist: reel, days: [sat], from: \"10:00\", to: \"18:00\"}",
            "    - {playlist: loop, days: daily, from: \"02:30\", to: \"03:10\", dates: {from: 2027-03-01, to: 2027-03-31}}",
            "    - {playlist: loop, days: daily, from: \"01:00\", to: \"02:30\", dates: {from: 2026-10-01, to: 2026-10-31}}",
            "  exceptions:",
            "    - {name: Christmas, dates: 2026-12-25}",
        ]
        for trial in trials {
            receiver.clear()
            let state = folder.appendingPathComponent("state-\(trial.at)")
            let wall = TestWall(
                name: "schedule-test", clockPort: masterPort, media: clip.path, canvas: (320, 90),
                stateDirectory: state.path, extra: ["clock-lock-timeout: 20s", "autoplay: true"] + schedule,
                nodes: ids.enumerated().map { index, id in
                    .groundTruth(
                        id: id, controlPort: firstControlPort + index, tile: (index * 160, 0, 160, 90),
                        port: receiver.ports[index])
                })
            let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
            // The master's UTC reads `at` this long after it starts.
            let transition = instant(trial.at)
            let lead = 8.0
            let shifted = try ShiftedRealtimeMaster(port: masterPort, reading: transition, after: lead)
            let master = shifted.process
            let nodes = try ids.enumerated().map { index, id in
                try ChildProcess(
                    wallnode,
                    [
                        "run", "--config", config.path, "--id", id, "--log-format", "text", "--log-level", "debug",
                        "--simulate-clock-offset", "\(index * 900)", "--simulate-clock-drift-ppm", "\(index * 80)",
                    ])
            }
            let toMaster = shifted.toMaster
            try await Task.sleep(for: .seconds(lead + 1.5))
            for process in nodes + [master] { process.signal(SIGTERM) }
            // A failure shows the nodes' own account (their log goes to standard output).
            let logs = nodes.map { node in
                let finished = node.finish()
                return finished.errors + finished.output
            }
            _ = master.finish()
            let seen = receiver.seen
            for (index, id) in ids.enumerated() {
                let frames = seen[index].map { (code: $0.code, at: $0.at + toMaster) }
                let loopFrames = frames.filter { $0.code < 120 }
                let after = loopFrames.filter { $0.at >= transition - MediaTime(value: 5, timescale: 1000) }
                let events = logs[index].split(separator: "\n").filter { !$0.contains("lockstep.clock") }
                let early = loopFrames.filter { $0.at < transition }.prefix(20).map {
                    "\($0.code)@" + String(format: "%+.1f", ($0.at - transition).seconds * 1000)
                }
                let context =
                    "\(trial.name), node \(id): \(frames.count) frames; before the transition (ms): "
                    + early.joined(separator: " ") + "\n"
                    + events.suffix(60).joined(separator: "\n")
                if trial.opens {
                    let first = try XCTUnwrap(after.first, "no frame of the loop after the transition: \(context)")
                    print(
                        "schedule test: \(trial.name): node \(id) showed frame \(first.code) "
                            + String(format: "%+.3f ms", (first.at - transition).seconds * 1000)
                            + " from the transition")
                    XCTAssertEqual(first.code, 0, "the loop starts at its first frame: \(context)")
                    XCTAssertEqual(
                        (first.at - transition).seconds, 0, accuracy: 0.004,
                        "the loop's first frame at the transition's master time: \(context)")
                    XCTAssertFalse(
                        loopFrames.contains { $0.at < transition - MediaTime(value: 5, timescale: 1000) },
                        "nothing of the loop before: \(context)")
                } else {
                    XCTAssertTrue(after.isEmpty, "no frame of the loop after \(trial.at): \(context)")
                    if trial.closes {
                        let last = try XCTUnwrap(loopFrames.last, "the loop played before: \(context)")
                        XCTAssertLessThan(
                            (transition - last.at).seconds, 0.040, "the loop ran until the transition: \(context)")
                        // The schedule's outside (a white still) takes over at the transition, within a frame.
                        let still = receiver.pictures[index].map { (picture: $0, at: $0.at + toMaster) }.first {
                            $0.picture.flat && $0.picture.y > 200 && $0.at > last.at
                        }
                        let stillAt = try XCTUnwrap(still?.at, "the still after the loop: \(context)")
                        XCTAssertEqual(
                            (stillAt - transition).seconds, 0, accuracy: 1.0 / 30,
                            "the outside's still at the transition's master time: \(context)")
                        print(
                            "schedule test: \(trial.name): node \(id) showed its last frame "
                                + String(format: "%.3f ms", (transition - last.at).seconds * 1000)
                                + " before, the still "
                                + String(format: "%+.3f ms", (stillAt - transition).seconds * 1000) + " from it")
                    }
                }
            }
        }
    }

    private func instant(_ text: String) -> MediaTime {
        MediaTime(nanoseconds: Int64(ISO8601DateFormatter().date(from: text)!.timeIntervalSince1970) * 1_000_000_000)
    }
}
