import Foundation
import GroundTruth
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

/// A three-node wall following a timeline, judged by ground truth alone: every node's video sink
/// sends each frame over UDP as it renders, the test stamps arrivals in the kernel and reads the
/// frame numbers from the pixels. Nothing the nodes say about themselves is trusted.
///
/// The playlist has three clips of different lengths, one of them pre-split per node, where node
/// c's file has audio running 300 ms past its video (its container is 300 ms longer). The wall
/// loops it; one node is killed and restarted, then stopped for five seconds; the third joins
/// after the wall has played for a minute; the wall pauses, seeks and resumes.
final class TimelineWallTests: XCTestCase {
    private let ids = ["a", "b", "c"]
    private let masterPort = 15651
    private let firstControlPort = 17741
    /// One frame at 30 fps.
    private let period = MediaTime(value: 1, timescale: 30)
    /// A frame held past this was held over a frame period: a gap.
    private let longestHold = MediaTime(value: 50, timescale: 1000)
    /// Two nodes show the same frame when their arrivals are this close.
    private let sameTime = MediaTime(value: 3, timescale: 1000)

    func testTimeline_loopsJoinsRejoinsAndPausesInLockstep_byGroundTruth() async throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-timeline-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let media = try prepareMedia(in: folder)
        let receiver = try FrameReceiver(count: ids.count)
        let arrivals = Arrivals()
        let stalls = StallWatch()
        defer { stalls.stop() }
        let collecting = Task {
            for await arrival in receiver.arrivals {
                guard let index = receiver.ports.firstIndex(of: arrival.port),
                    let code = FrameCode.decode(i420: arrival.payload, width: 8, height: 8)
                else { continue }
                arrivals.add(node: index, code: code, at: arrival.arrivedAt)
            }
        }
        defer {
            receiver.stop()
            collecting.cancel()
        }
        let wall = TestWall(
            name: "timeline-test", clockPort: masterPort, media: media.first, canvas: (480, 90),
            playlist: [media.first, media.split, media.last].map { "{media: \"\($0)\"}" },
            stateDirectory: folder.appendingPathComponent("state").path,
            extra: ["clock-lock-timeout: 20s", "loop: true"],
            nodes: ids.enumerated().map { index, id in
                .groundTruth(
                    id: id, controlPort: firstControlPort + index, tile: (index * 160, 0, 160, 90),
                    port: receiver.ports[index], audio: id == "c")
            })
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        let master = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:\(masterPort)"])
        var nodes: [ChildProcess?] = [nil, nil, nil]
        /// The logs of node processes that were killed, for the failure report.
        var earlierLogs: [String] = []
        func start(_ index: Int) throws {
            nodes[index] = try ChildProcess(
                wallnode,
                [
                    "run", "--config", config.path, "--id", ids[index], "--log-format", "text",
                    "--simulate-clock-offset", "\(index * 1800 - 1800)", "--simulate-clock-drift-ppm",
                    "\(index * 100 - 100)",
                ])
        }
        defer {
            for process in nodes.compactMap({ $0 }) + [master] { process.signal(SIGTERM) }
            // On failure, the nodes' logs say what each did.
            if (testRun?.failureCount ?? 0) > 0 {
                for log in earlierLogs { print(log.split(separator: "\n").suffix(25).joined(separator: "\n")) }
                for (index, process) in nodes.enumerated() {
                    guard let process else { continue }
                    let log = process.finish().errors.split(separator: "\n").filter { !$0.contains("lockstep.clock") }
                        .suffix(400).joined(separator: "\n")
                    print("node \(ids[index]) log:\n\(log)")
                }
            }
        }
        try start(0)
        try start(1)

        // Two nodes play (wallctl waits for their control APIs and clocks by itself). During the
        // first minute one is killed and restarted, then stopped for five seconds; after a full
        // minute the third joins the running wall.
        let play = try ChildProcess.run(wallctl, ["play", "--config", config.path, "--nodes", "a,b"])
        XCTAssertEqual(play.status, 0, "wallctl play: \(play.output)\n\(play.errors)")
        guard play.status == 0 else { return }
        let played = LocalClock.monotonic.now()
        try await eventually(within: 15, "two loop boundaries on node a") {
            arrivals.boundaries(node: 0, in: played..<LocalClock.monotonic.now()).count >= 2
        }

        // kill -9 and the same command again: back in step within 3 s, the other undisturbed.
        nodes[1]?.signal(SIGKILL)
        earlierLogs.append("node b before SIGKILL:\n" + (nodes[1]?.finish().errors ?? ""))
        let restarted = LocalClock.monotonic.now()
        try start(1)
        let rejoined = try await inStep(1, with: 0, since: restarted, arrivals: arrivals, within: 10)
        print("timeline test: killed node in step \(rejoined.seconds) s after its restart")
        XCTAssertLessThanOrEqual(rejoined.seconds, 3, "a killed node restarted is in step within 3 s")
        let disturbed = arrivals.holds(node: 0, in: restarted..<(restarted + rejoined), longerThan: longestHold)
            .filter { stalls.longestStall(overlapping: $0.lowerBound - period..<$0.upperBound) == .zero }
        XCTAssertTrue(
            disturbed.isEmpty,
            "node a held frames while another rejoined: \(disturbed); "
                + stalls.describe(since: restarted))

        // SIGSTOP for 5 s (the fault's length), then SIGCONT: back in step within 3 s.
        nodes[1]?.signal(SIGSTOP)
        try await Task.sleep(for: .seconds(5))
        nodes[1]?.signal(SIGCONT)
        let continued = LocalClock.monotonic.now()
        let recovered = try await inStep(1, with: 0, since: continued, arrivals: arrivals, within: 10)
        print("timeline test: stopped node in step \(recovered.seconds) s after SIGCONT")
        XCTAssertLessThanOrEqual(recovered.seconds, 3, "a stopped node is in step within 3 s of SIGCONT")
        // It says so: its metrics count the rejoins its status reports (none when the sink caught up
        // by dropping late frames alone), and it is in step again.
        let nodeB = wall.client("b")
        let status = try await nodeB.waitForStatus(within: 5, "node b in step by its own judgement") { status in
            (status["timeline"] as? [String: Any])?["inStep"] as? Bool == true
        }
        let rejoins = (status["timeline"] as? [String: Any])?["rejoins"] as? Int
        let metrics = try nodeB.get("/metrics").body
        let counted = metrics.split(separator: "\n").first { $0.hasPrefix("lockstep_timeline_rejoins_total{") }
        XCTAssertEqual(
            counted.flatMap { Int($0.split(separator: " ").last ?? "") }, rejoins, "rejoins in /metrics:\n\(metrics)")
        XCTAssertTrue(
            metrics.contains("lockstep_timeline_in_step{wall=\"timeline-test\",node=\"b\"} 1"),
            "in step in /metrics:\n\(metrics)")

        // A node started after the wall has played for a minute joins at the right frame.
        let minute = played + MediaTime(value: 60, timescale: 1)
        let wait = minute - LocalClock.monotonic.now()
        if wait > .zero { try await Task.sleep(for: .milliseconds(Int64(wait.seconds * 1000))) }
        let joinStarted = LocalClock.monotonic.now()
        try start(2)
        let joined = try await inStep(2, with: 0, since: joinStarted, arrivals: arrivals, within: 10)
        print("timeline test: node started after a minute in step \(joined.seconds) s after starting")
        XCTAssertLessThanOrEqual(
            joined.seconds, 3, "a node started on a running wall is in step within 3 s of starting")

        // Three loops of the playlist: no gap, and the same frame on every node, boundaries too.
        let windowStart = LocalClock.monotonic.now() + MediaTime(value: 1, timescale: 1)
        try await eventually(within: 30, "three loops of three entries after the join") {
            let now = LocalClock.monotonic.now()
            return now > windowStart && arrivals.boundaries(node: 0, in: windowStart..<now).count >= 9
        }
        let window = windowStart..<LocalClock.monotonic.now()
        // A gap the machine itself caused (it stalled meanwhile, every node missing the same frame)
        // is said, not counted; any other is a failure.
        let stalled = { (range: Range<MediaTime>) in
            stalls.longestStall(overlapping: range.lowerBound - self.period..<range.upperBound) > .zero
        }
        for node in ids.indices {
            let holds = arrivals.holds(node: node, in: window, longerThan: longestHold)
            let unexplained = holds.filter { !stalled($0) }
            if holds.count > unexplained.count {
                print(
                    "timeline test: node \(ids[node]) held \(holds.count - unexplained.count) frames while the machine stalled"
                )
            }
            XCTAssertTrue(
                unexplained.isEmpty,
                "node \(ids[node]) held a frame: \(unexplained.map { ($0.upperBound - $0.lowerBound).seconds }) s; "
                    + stalls.describe(since: windowStart))
        }
        let boundaries = arrivals.boundaries(node: 0, in: window)
        for other in [1, 2] {
            let match = arrivals.match(other, with: 0, in: window, within: sameTime)
            XCTAssertGreaterThanOrEqual(match.fraction, 0.99, "node \(ids[other]) shows node a's frame at its time")
            let missed = boundaries.filter { !arrivals.shows(other, code: $0.code, near: $0.at, within: sameTime) }
            let unexplained = missed.filter { !stalled($0.at - longestHold..<$0.at + longestHold) }
            XCTAssertTrue(
                unexplained.isEmpty,
                "node \(ids[other]) at boundaries: \(unexplained.count) of \(boundaries.count) differ; "
                    + stalls.describe(since: windowStart))
        }

        // Pause, seek, resume: every node on exactly the same frame. A udpsink sends frames it
        // renders, not one it draws as a preroll: paused, a node renders nothing, and a seek while
        // paused presents the frame sought through the sink at the seek's time (after a seek to
        // 1.5 s of the first clip, its frame 45), everywhere at once; resuming starts from it.
        // Each command returns once every screen carries it out.
        let pause = try ChildProcess.run(wallctl, ["pause", "--config", config.path])
        XCTAssertEqual(pause.status, 0, "wallctl pause: \(pause.output)\n\(pause.errors)")
        let pausedFrom = LocalClock.monotonic.now()
        let seek = try ChildProcess.run(wallctl, ["seek", "--config", config.path, "1.5", "--entry", "0"])
        XCTAssertEqual(seek.status, 0, "wallctl seek: \(seek.output)\n\(seek.errors)")
        try await Task.sleep(for: .milliseconds(500))
        for node in ids.indices {
            let paused = arrivals.arrivals(node, in: pausedFrom..<LocalClock.monotonic.now())
            XCTAssertEqual(
                paused.map(\.code), [45],
                "node \(ids[node]) rendered the frame sought, once, while paused: "
                    + paused.map { "\($0.code) at \($0.at.nanoseconds ?? 0)" }.joined(separator: ", "))
        }
        let resumedFrom = LocalClock.monotonic.now()
        let resume = try ChildProcess.run(wallctl, ["resume", "--config", config.path])
        XCTAssertEqual(resume.status, 0, "wallctl resume: \(resume.output)\n\(resume.errors)")
        try await eventually(within: 5, "every node rendering again") {
            self.ids.indices.allSatisfy { arrivals.first(node: $0, after: resumedFrom) != nil }
        }
        let firsts = ids.indices.map { arrivals.first(node: $0, after: resumedFrom) }
        XCTAssertEqual(firsts.map { $0?.code }, [45, 45, 45], "the first frame each node shows on resuming")
        for other in [1, 2] {
            let settled = try await inStep(other, with: 0, since: resumedFrom, arrivals: arrivals, within: 8)
            XCTAssertLessThanOrEqual(settled.seconds, 3, "node \(ids[other]) in step after resume")
        }
    }

    // MARK: Helpers

    /// The playlist's files: a 2 s clip, a 3 s clip split per node (node c's with audio 300 ms
    /// past its video), and a 1 s clip, all in `folder` (the wall's media root).
    private func prepareMedia(in folder: URL) throws -> (first: String, split: String, last: String) {
        let copy = { (source: URL, name: String) throws -> String in
            let target = folder.appendingPathComponent(name)
            try FileManager.default.copyItem(at: source, to: target)
            return target.path
        }
        let first = try copy(TestMedia.frameCode(seconds: 2, size: "160x90"), "first.mp4")
        let split = try TestMedia.frameCode(seconds: 3, size: "160x90")
        _ = try copy(split, "split-a.mp4")
        _ = try copy(split, "split-b.mp4")
        _ = try copy(TestMedia.frameCode(seconds: 3, size: "160x90", audioMilliseconds: 3300), "split-c.mp4")
        let last = try copy(TestMedia.frameCode(seconds: 1, size: "160x90"), "last.mp4")
        return (first, folder.appendingPathComponent("split-{id}.mp4").path, last)
    }

    /// How long after `since` node `node` started showing `reference`'s frames at their times, for
    /// 15 frames in a row; waits at most `seconds`.
    private func inStep(
        _ node: Int, with reference: Int, since: MediaTime, arrivals: Arrivals, within seconds: Double
    ) async throws -> MediaTime {
        let deadline = since + MediaTime(seconds: seconds, preferredTimescale: 1000)
        while LocalClock.monotonic.now() < deadline {
            if let from = arrivals.firstRun(node, with: reference, after: since, length: 15, within: sameTime) {
                return from - since
            }
            // Arrivals come on their own: this asks again, it does not wait to assert.
            try await Task.sleep(for: .milliseconds(200))
        }
        // Recorded before it is thrown, so that the test's teardown sees a failure and prints the nodes' logs.
        let status = (try? RawHTTP.request(port: firstControlPort + node, "GET", "/status").body) ?? "none"
        let message = """
            node \(ids[node]) was not in step \(seconds) s after \(since): \
            \(arrivals.describe(node, with: reference, after: since, within: sameTime)); its status: \(status)
            """
        XCTFail(message)
        throw TestSupportError(message)
    }
}

/// Frames as they arrived from each node: frame code and kernel arrival time.
private final class Arrivals: Sendable {
    struct Arrival: Sendable {
        let code: Int
        let at: MediaTime
    }

    private let state = Mutex([[Arrival]](repeating: [], count: 3))

    func add(node: Int, code: Int, at: MediaTime) {
        state.withLock { $0[node].append(Arrival(code: code, at: at)) }
    }

    func count(node: Int, in window: Range<MediaTime>) -> Int { arrivals(node, in: window).count }

    func first(node: Int, after time: MediaTime) -> Arrival? { state.withLock { $0[node].first { $0.at > time } } }

    func arrivals(_ node: Int, in window: Range<MediaTime>) -> [Arrival] {
        state.withLock { $0[node].filter { window.contains($0.at) } }
    }

    /// The longest time between two frames of `node` in `window`.
    func longestHold(node: Int, in window: Range<MediaTime>) -> MediaTime {
        holds(node: node, in: window).map { $0.upperBound - $0.lowerBound }.max() ?? .positiveInfinity
    }

    /// Each time between two frames of `node` in `window` longer than `limit`.
    func holds(node: Int, in window: Range<MediaTime>, longerThan limit: MediaTime = .zero) -> [Range<MediaTime>] {
        let frames = arrivals(node, in: window)
        return zip(frames, frames.dropFirst()).map { $0.at..<$1.at }.filter { $0.upperBound - $0.lowerBound > limit }
    }

    /// Frames at which `node` started a clip again (its frame code fell).
    func boundaries(node: Int, in window: Range<MediaTime>) -> [Arrival] {
        let frames = arrivals(node, in: window)
        return zip(frames, frames.dropFirst()).filter { $1.code < $0.code }.map { $1 }
    }

    /// Whether `node` showed frame `code` within `tolerance` of `time`.
    func shows(_ node: Int, code: Int, near time: MediaTime, within tolerance: MediaTime) -> Bool {
        state.withLock { $0[node] }.contains { $0.code == code && ($0.at - time).magnitude <= tolerance }
    }

    /// The share of `reference`'s frames in `window` that `node` showed within `tolerance`.
    func match(_ node: Int, with reference: Int, in window: Range<MediaTime>, within tolerance: MediaTime) -> (
        fraction: Double, count: Int
    ) {
        let theirs = arrivals(reference, in: window)
        let mine = arrivals(node, in: window.lowerBound - tolerance..<window.upperBound + tolerance)
        guard !theirs.isEmpty else { return (0, 0) }
        var index = 0
        var matched = 0
        for frame in theirs {
            while index < mine.count, mine[index].at < frame.at - tolerance { index += 1 }
            var probe = index
            while probe < mine.count, mine[probe].at <= frame.at + tolerance {
                if mine[probe].code == frame.code {
                    matched += 1
                    break
                }
                probe += 1
            }
        }
        return (Double(matched) / Double(theirs.count), theirs.count)
    }

    /// What `node` showed after `after`, against `reference`: for a failure's message.
    func describe(_ node: Int, with reference: Int, after: MediaTime, within tolerance: MediaTime) -> String {
        let mine = state.withLock { $0[node] }.filter { $0.at > after }
        let theirs = state.withLock { $0[reference] }.filter { $0.at > after - MediaTime(value: 1, timescale: 1) }
        let matching = mine.filter { shows(reference, code: $0.code, near: $0.at, within: tolerance) }.count
        // For its last frames: when the reference showed the same code, relative to it (ms).
        let last = mine.suffix(8).map { frame -> String in
            let same = theirs.filter { $0.code == frame.code }.min {
                ($0.at - frame.at).magnitude < ($1.at - frame.at).magnitude
            }
            let offset = same.map { String(format: "%+.1f ms", (frame.at - $0.at).seconds * 1000) } ?? "never"
            return "\(frame.code)@\(String(format: "%.3f", (frame.at - after).seconds)) s (\(offset))"
        }
        return "\(mine.count) frames, \(matching) matching; last: \(last.joined(separator: ", "))"
    }

    /// When `node` began a run of `length` frames each matching `reference`'s, after `after`.
    func firstRun(
        _ node: Int, with reference: Int, after: MediaTime, length: Int, within tolerance: MediaTime
    ) -> MediaTime? {
        let mine = state.withLock { $0[node] }.filter { $0.at > after }
        var run = 0
        for (index, frame) in mine.enumerated() {
            if shows(reference, code: frame.code, near: frame.at, within: tolerance) {
                run += 1
                if run == length { return mine[index - length + 1].at }
            } else {
                run = 0
            }
        }
        return nil
    }
}
