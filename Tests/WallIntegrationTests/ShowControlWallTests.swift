import Foundation
import GroundTruth
import LockstepLocks
import LockstepNet
import LockstepTime
import TestSupport
import XCTest

/// Show control from a stock sender: python-osc (OSC over UDP) and plain UDP strings drive a
/// four-node wall through 50 cues in random order in a minute, through the control daemon. Ground
/// truth at the sinks finds every cut: each cue's first frame on every screen, how far apart the
/// screens showed it, how long after the trigger, and that the frame before it was not held. Then
/// a flood of malformed messages and of well-formed ones from an address the config does not allow
/// changes nothing.
final class ShowControlWallTests: XCTestCase {
    private let ids = ["a", "b", "c", "d"]
    private let masterPort = 15691
    private let firstControlPort = 17901
    private let daemonPort = 17911
    private let oscPort = 17912
    private let udpPort = 17913
    private let tcpPort = 17914
    /// The loop is the clip's first 4 s (codes 0–119); each cue's first frame code is its own.
    private let firstCode = ["intro": 300, "chapter": 60, "finale": 450]
    /// What failed, said again after the logs: CI shows the end of the output.
    private let failures = Mutex<[String]>([])

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        failures.withLock { $0.append("line \(lineNumber): \(description)") }
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }
    private let interval = 1.2

    func testFiftyCues_overOSCAndUDP_cutEveryScreenTogether_andAFloodChangesNothing() async throws {
        let python = ChildProcess.checkout.appendingPathComponent(".build/test-python/bin/python3").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            XCTFail("no python-osc: make setup (scripts/setup.sh) makes .build/test-python")
            return
        }
        let sender = ChildProcess.checkout.appendingPathComponent("scripts/show-send.py").path
        let wallctl = ChildProcess.product("wallctl")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-show-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 20), to: clip)
        let receiver = try FrameCodeCollector(count: ids.count)
        defer { receiver.stop() }
        let stalls = StallWatch()
        defer { stalls.stop() }
        let wall = TestWall(
            name: "show-test", clockPort: masterPort, media: clip.path, canvas: (640, 90),
            playlist: ["{media: \(clip.path), out: 4s}"], stateDirectory: folder.appendingPathComponent("state").path,
            extra: [
                "clock-lock-timeout: 20s", "loop: true",
                "controller: {listen: \"127.0.0.1:\(daemonPort)\"}",
                "show-control: {osc: \"127.0.0.1:\(oscPort)\", udp: \"127.0.0.1:\(udpPort)\", tcp: \"127.0.0.1:\(tcpPort)\", allow: [127.0.0.1], rate: 20}",
                "cues:",
                "  intro: {media: \(clip.path), in: 10s, out: 12s, then: return}",
                "  chapter: {entry: 0, at: 2s, then: next}",
                "  finale: {media: \(clip.path), in: 15s, out: 16s, then: hold}",
            ],
            nodes: TestWall.Node.groundTruthRow(ids, firstControlPort: firstControlPort, ports: receiver.ports))
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        let (master, nodes) = try wall.start(config: config, clockPort: masterPort)
        let daemon = try ChildProcess(wallctl, ["serve", "--config", config.path])
        // The daemon's lines as they come: each command's outcome says whether it was held in standby.
        let daemonLines = Mutex<[String]>([])
        nonisolated(unsafe) let reading = daemon
        Thread { while let line = reading.readLine() { daemonLines.withLock { $0.append(line) } } }.start()
        defer {
            for process in nodes + [master, daemon] { process.signal(SIGTERM) }
            if (testRun?.failureCount ?? 0) > 0 {
                print("daemon:\n" + daemonLines.withLock { $0 }.suffix(80).joined(separator: "\n"))
                for (index, node) in nodes.enumerated() {
                    let lines = node.finish().errors.split(separator: "\n").filter { !$0.contains("lockstep.clock") }
                    print(
                        "node \(ids[index]):\n"
                            + lines.filter {
                                $0.contains("too late") || $0.contains("rejoin") || $0.contains("error")
                                    || $0.contains("warning") || $0.contains("notice")
                            }.prefix(60).joined(separator: "\n"))
                }
                print("show control test failed: " + failures.withLock { $0 }.joined(separator: "\n"))
            }
        }
        let play = try ChildProcess.run(wallctl, ["play", "--config", config.path])
        XCTAssertEqual(play.status, 0, "wallctl play: \(play.output)\n\(play.errors)")
        guard play.status == 0 else { return }

        try await Task.sleep(for: .seconds(3))
        // 50 cues in random order, alternately over OSC (python-osc) and as UDP strings.
        var generator = SystemRandomNumberGenerator()
        let names = firstCode.keys.sorted()
        let plan = (0..<(Int(ProcessInfo.processInfo.environment["SHOW_CUES"] ?? "") ?? 50)).map { index in
            (index % 2 == 0 ? "osc:cue:" : "udp:cue:") + names.randomElement(using: &generator)!
        }
        let sending = try ChildProcess(
            python,
            [
                sender, "--osc", "127.0.0.1:\(oscPort)", "--udp", "127.0.0.1:\(udpPort)", "--interval", "\(interval)",
            ] + plan)
        var triggers: [(cue: String, at: MediaTime)] = []
        while let line = sending.readLine() {
            let words = line.split(separator: " ")
            guard words.first == "sent", words.count >= 5, let nanoseconds = Int64(words[2]) else { continue }
            triggers.append((String(words.last!), MediaTime(nanoseconds: nanoseconds)))
        }
        let sent = sending.finish()
        XCTAssertEqual(sent.status, 0, sent.errors)
        XCTAssertEqual(triggers.count, plan.count, sent.output)
        try await Task.sleep(for: .seconds(3))

        // Every cut by ground truth: on every screen, where the cue's clip starts playing (its first
        // frame followed a frame period later by the next), within the window the lead allows. What
        // the screen showed before it is measured: how long the old picture was held (a frame period:
        // the cut is prepared in standby while the screen plays on), and whether the new first frame
        // appeared early (it must not).
        let seen = receiver.seen
        let period = MediaTime(value: 1, timescale: 30)
        var skews: [Double] = []
        var latencies: [Double] = []
        // Which cues every node held in standby, as the daemon said, in the order they came.
        let said = daemonLines.withLock { $0 }.filter { $0.contains("show control: cue ") && $0.contains(" version ") }
        let heldCues = said.map { $0.contains("held in standby") }
        var heldLatencies: [Double] = []
        var lateHeld: [String] = []
        var holds: [Double] = []
        var early = 0
        var problems: [String] = []
        for (index, trigger) in triggers.enumerated() {
            let code = firstCode[trigger.cue]!
            // From the trigger: the sender stamps it before sending, and a cue held in standby cuts
            // about 20 ms later (a floor of 20 ms, from when cuts took 60 ms, missed the fastest).
            // The loop passing the chapter's first frame just after its trigger counts as its cut:
            // on the glass the two are the same. A first frame shown late (a node that armed its
            // start late shows it then, the next on time) is the cut all the same, a frame period
            // or less before the next: its lateness is the skew below, not a cut missed.
            // A cue every node held cuts within 150 ms (asserted below): its window ends well before
            // the next trigger, so a screen that missed it is said to have missed it, with what it
            // showed, not matched to the next cue's cut of the same clip.
            let held = heldCues.indices.contains(index) && heldCues[index]
            let window =
                trigger.at..<(trigger.at + MediaTime(seconds: held ? 0.6 : interval + 0.6, preferredTimescale: 1000))
            var cuts: [MediaTime] = []
            for (node, frames) in seen.enumerated() {
                guard
                    let cut = frames.indices.dropFirst().dropLast().first(where: { i in
                        window.contains(frames[i].at) && frames[i].code == code && frames[i + 1].code == code + 1
                            && frames[i + 1].at > frames[i].at
                            && frames[i + 1].at - frames[i].at < period + MediaTime(value: 8, timescale: 1000)
                    })
                else {
                    // What the screen showed instead, from just before the trigger to the window's end.
                    let shown = frames.filter {
                        $0.at > trigger.at - MediaTime(value: 100, timescale: 1000) && $0.at < window.upperBound
                    }
                    .map { "\($0.code)@\(Int(($0.at - trigger.at).seconds * 1000))" }
                    problems.append(
                        "cue \(index) (\(trigger.cue) after \(index > 0 ? triggers[index - 1].cue : "none")): node \(ids[node]) "
                            + "never cut to frame \(code); it showed (code@ms after the trigger) \(shown.joined(separator: " "))"
                    )
                    continue
                }
                var before = cut - 1
                if frames[before].code == code {
                    early += 1
                    before -= 1
                }
                // The finale holds its last frame (then: hold) until the next cue: that is its picture.
                if frames[before].code != 479 { holds.append((frames[cut].at - frames[before].at).seconds) }
                cuts.append(frames[cut].at)
            }
            guard cuts.count == ids.count, let first = cuts.min(), let last = cuts.max() else { continue }
            skews.append((last - first).seconds)
            if last - first > MediaTime(value: 1, timescale: 1000) {
                let each = zip(ids, cuts).map { "\($0) \(String(format: "%.3f", ($1 - first).seconds * 1000))" }
                print(
                    "show control test: cue \(index) (\(trigger.cue) after \(index > 0 ? triggers[index - 1].cue : "none")) "
                        + "cut \(Int((first - trigger.at).seconds * 1000)) ms after its trigger, apart by (ms) "
                        + each.joined(separator: ", "))
            }
            latencies.append((last - trigger.at).seconds)
            if heldCues.indices.contains(index), heldCues[index] {
                heldLatencies.append((last - trigger.at).seconds)
                // The target is 100 ms (bench/cues measures it on a quiet machine); here, on a machine
                // that may be busier, over 150 ms is late unless the machine itself stalled meanwhile.
                if last - trigger.at > MediaTime(value: 150, timescale: 1000) {
                    let stall = stalls.longestStall(overlapping: trigger.at..<last)
                    let text =
                        "cue \(index) (\(trigger.cue) after \(index > 0 ? triggers[index - 1].cue : "none")) "
                        + "\(Int((last - trigger.at).seconds * 1000)) ms, first screen at "
                        + "\(Int((first - trigger.at).seconds * 1000)) ms"
                    if stall == .zero {
                        lateHeld.append(text)
                    } else {
                        print(
                            "show control test: \(text), the machine stalled \(Int(stall.seconds * 1000)) ms meanwhile")
                    }
                }
            }
        }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p + 0.5))]
        }
        print(
            "show control test: \(skews.count) of \(triggers.count) cuts on every screen; skew at the cut p50 "
                + String(
                    format: "%.3f ms, p99 %.3f ms, max %.3f ms", percentile(skews, 0.5) * 1000,
                    percentile(skews, 0.99) * 1000, (skews.max() ?? .nan) * 1000)
                + "; trigger to every screen p50 "
                + String(
                    format: "%.1f ms, max %.1f ms", percentile(latencies, 0.5) * 1000, (latencies.max() ?? .nan) * 1000)
                + "; \(heldLatencies.count) cues held in standby on every node: trigger to every screen p50 "
                + String(
                    format: "%.1f ms, p99 %.1f ms, max %.1f ms", percentile(heldLatencies, 0.5) * 1000,
                    percentile(heldLatencies, 0.99) * 1000, (heldLatencies.max() ?? .nan) * 1000)
                + "; old picture held before the cut p50 "
                + String(
                    format: "%.1f ms, p99 %.1f ms, max %.1f ms", percentile(holds, 0.5) * 1000,
                    percentile(holds, 0.99) * 1000, (holds.max() ?? .nan) * 1000)
                + "; first frame shown early in \(early) of \(skews.count * ids.count) screen cuts")
        // A cut some screen never showed from its first frame: about one in 200 in bench/cues (with
        // the fixed lead and the measured one alike, most often the entry cue), not yet explained
        // (issue 45). Each is printed; more than one in the 50 fails.
        let missed = triggers.count - skews.count
        if !problems.isEmpty { print("show control test: cuts missed: " + problems.joined(separator: "; ")) }
        XCTAssertLessThanOrEqual(missed, 1, problems.prefix(20).joined(separator: "; "))
        // The picture plays until the cut: the next cue is prepared on the standby pipeline, and the
        // frame before the cut is on the screen for a frame period (33 ms), not held for the ~300 ms
        // a preparation on the one pipeline took.
        XCTAssertLessThanOrEqual(percentile(holds, 0.99), 0.050, "the old picture held before the cut")
        // While a start's rate could be read before its start was armed, a preroll completing in
        // between played the first frame at once: 18 to 23 of 200 screen cuts showed it early.
        XCTAssertEqual(early, 0, "screen cuts whose first frame appeared before the cut")
        // Every screen plays the cue from its first frame together. A node that arms a held cut a
        // few ms after its time (a busy moment of this 2-core machine running four debug nodes: 2 to 6
        // ms, in about one run of three, with the stamp's gate and without) starts then, its first
        // frame that late, the rest on time (as the follower's lateStartTolerance, 25 ms, allows):
        // one such cut in 50 is printed above and tolerated, within the tolerance.
        let apart = skews.filter { $0 > 0.005 }
        XCTAssertLessThanOrEqual(apart.count, 1, "cuts with a screen over 5 ms late: \(apart)")
        XCTAssertLessThanOrEqual(skews.max() ?? 1, 0.025, "every screen plays the cue from its first frame together")
        XCTAssertLessThanOrEqual(latencies.max() ?? 10, 1.3, "each cut within the edit lead of its trigger")
        // Each cue is held in standby on every node again well within the 1.2 s between them, and
        // cuts every screen within 100 ms of its trigger (half of them; none over 150 ms).
        XCTAssertGreaterThanOrEqual(heldLatencies.count, triggers.count * 9 / 10, "cues every node held in standby")
        XCTAssertLessThanOrEqual(percentile(heldLatencies, 0.5), 0.100, "trigger to every screen, cues held in standby")
        XCTAssertTrue(
            lateHeld.isEmpty, "cues held in standby on every screen over 150 ms after the trigger: \(lateHeld)")

        // A flood: malformed OSC and strings, then well-formed cues from 127.0.0.2, which the config
        // does not allow. The wall's timeline stays on its version; the daemon goes on taking cues.
        let before = try XCTUnwrap(try wall.client("a").timeline()?["version"] as? Int)
        let flood = try ChildProcess.run(
            python,
            [
                sender, "--osc", "127.0.0.1:\(oscPort)", "--udp", "127.0.0.1:\(udpPort)", "--flood", "500", "--source",
                "127.0.0.2",
            ])
        XCTAssertEqual(flood.status, 0, flood.errors)
        try await Task.sleep(for: .seconds(2))
        XCTAssertEqual(try wall.client("a").timeline()?["version"] as? Int, before, "the flood changed nothing")
        let after = try ChildProcess.run(python, [sender, "--tcp", "127.0.0.1:\(tcpPort)", "tcp:cue:finale"])
        XCTAssertTrue(after.output.contains("reply 0 OK cue finale"), after.output + after.errors)
        try await wall.client("a").waitForStatus(within: 5, "the cue after the flood") { status in
            ((status["timeline"] as? [String: Any])?["version"] as? Int ?? 0) > before
        }
        // From the command line: `wallctl cue` with a cue every node holds is on every screen the
        // standby lead after it asked the nodes once: after its process started (40 ms for the
        // release build, which loads GStreamer's and FFmpeg's libraries), read the config and made
        // one round trip. 0.11-0.14 s after the command starts for the release build, 0.16-0.34 s for
        // this debug build on a busy machine; a cue not held would take the edit lead, over 1 s.
        for id in ids {
            try await wall.client(id).waitForStatus(within: 5, "intro held in standby on \(id)") { status in
                ((status["timeline"] as? [String: Any])?["cuesReady"] as? [String])?.contains("intro") == true
            }
        }
        let commandStart = LocalClock.monotonic.now()
        let command = try ChildProcess.run(wallctl, ["cue", "intro", "--config", config.path])
        XCTAssertEqual(command.status, 0, command.output + command.errors)
        let commandCuts = receiver.seen.compactMap { frames in
            frames.first { $0.code == 300 && $0.at > commandStart }?.at
        }
        XCTAssertEqual(commandCuts.count, ids.count, "every screen on the cue wallctl sent")
        if let last = commandCuts.max(), let first = commandCuts.min() {
            print(
                "show control test: wallctl cue, command start to every screen "
                    + String(
                        format: "%.1f ms, skew %.3f ms", (last - commandStart).seconds * 1000,
                        (last - first).seconds * 1000))
            XCTAssertLessThanOrEqual((last - commandStart).seconds, 0.600, "wallctl cue to the glass: held")
        }

        // Ten cues 10, 30 and 100 ms apart (within the rate): the overtaken ones are dropped and
        // every screen ends on the last one's clip, together; none is left behind on an earlier cue.
        let allCues = Set(firstCode.keys)
        let burst = ["intro", "finale", "chapter", "intro", "finale", "intro", "chapter", "intro", "chapter", "finale"]
        let finaleFirst = firstCode["finale"]!
        let socket = try UDPSocket(family: .ipv4)
        for spacing in [10, 30, 100] {
            for id in ids {
                try await wall.client(id).waitForStatus(within: 8, "every cue held in standby on \(id)") { status in
                    Set(((status["timeline"] as? [String: Any])?["cuesReady"] as? [String]) ?? []) == allCues
                }
            }
            let burstStart = LocalClock.monotonic.now()
            var lastSent = burstStart
            for cue in burst {
                lastSent = LocalClock.monotonic.now()
                _ = try Array("cue \(cue)".utf8).withUnsafeBytes {
                    try socket.send($0, to: .ipv4Loopback(port: UInt16(udpPort)))
                }
                try await Task.sleep(for: .milliseconds(spacing))
            }
            // The finale is 1 s of the clip: past it, each screen holds its last frame (code 479).
            let after = lastSent
            try await eventually(within: 8, "every screen past the last cue's finale", every: .milliseconds(200)) {
                receiver.seen.allSatisfy { frames in
                    guard let last = frames.last else { return false }
                    return last.at > after && last.code == 479
                }
            }
            let seen = receiver.seen
            let ends: [FrameCodeCollector.Frame?] = seen.map { frames in frames.last { $0.at > burstStart } }
            var words: [String] = []
            for (index, end) in ends.enumerated() {
                let at = end.map { String(format: "%.3f", ($0.at - burstStart).seconds) }
                words.append("\(ids[index]): " + (end.map { "\($0.code) at +\(at!) s" } ?? "none"))
            }
            let summary = words.joined(separator: ", ")
            // In step on the last cue: its last frame drawn on every screen at one time. (Its first
            // frame too, where its players were in standby; a cue whose players a cut of the burst
            // took is loaded again, and a node ready a little after the cut's time joins it a frame
            // in, in step: counted, not failed.)
            let lastFrames = ends.compactMap { $0?.at }
            var skew = -1.0
            if let latest = lastFrames.max(), let earliest = lastFrames.min() {
                skew = (latest - earliest).seconds * 1000
            }
            let fromTheFirstFrame = seen.filter { frames in frames.contains { $0.code == finaleFirst && $0.at > after }
            }
            print(
                "show control test: ten cues \(spacing) ms apart, the last frame on each screen: \(summary); "
                    + String(format: "its skew %.3f ms; ", skew)
                    + "the last cut seen from its first frame on \(fromTheFirstFrame.count) of \(ids.count) screens")
            XCTAssertTrue(
                ends.allSatisfy { $0?.code == 479 },
                "\(spacing) ms: every screen on the last cue's last frame: \(summary)")
            // One sample's skew: within the machine's floor for render threads beside decoders (2.5 ms).
            XCTAssertLessThan(skew, 2.5, "\(spacing) ms: every screen in step on the last cue")
        }

        // HTTP on the daemon: a cue and a verb; an unknown cue is named.
        let daemonHTTP = TestNode(port: daemonPort)
        XCTAssertEqual(try daemonHTTP.request("POST", "/cue/intro").status, 202)
        XCTAssertEqual(try daemonHTTP.request("POST", "/show/pause").status, 202)
        let unknown = try daemonHTTP.request("POST", "/cue/nowhere")
        XCTAssertEqual(unknown.status, 404)
        XCTAssertTrue(unknown.body.contains("nowhere") && unknown.body.contains("intro"), unknown.body)
        try await wall.client("a").waitForStatus(within: 8, "paused by POST /show/pause") { status in
            (status["timeline"] as? [String: Any])?["state"] as? String == "paused"
        }

        // Every cue carried out is in the daemon's audit log, with its input and sender.
        let audit = try String(
            contentsOf: folder.appendingPathComponent("state/controller-audit.jsonl"), encoding: .utf8)
        let records = audit.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let shown = records.filter { $0["who"] as? String == "show control" && $0["outcome"] as? String == "done" }
        XCTAssertGreaterThanOrEqual(shown.count, 50, "show control's records: \(shown.count) of \(records.count)")
        XCTAssertTrue(
            shown.contains { ($0["via"] as? String)?.hasPrefix("osc ") == true && $0["version"] as? Int != nil },
            "\(shown.prefix(3))")
    }

    /// A wall without a control daemon: a node with `show-control: true` takes the button itself,
    /// and both screens cut together.
    func testANodeWithShowControl_takesCues_withNoDaemon() async throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-show-node-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 20), to: clip)
        let receiver = try FrameCodeCollector(count: 2)
        defer { receiver.stop() }
        let wall = TestWall(
            name: "show-node-test", clockPort: masterPort, media: clip.path, canvas: (320, 90),
            playlist: ["{media: \(clip.path), out: 4s}"], stateDirectory: folder.appendingPathComponent("state").path,
            extra: [
                "clock-lock-timeout: 20s", "loop: true",
                "show-control: {udp: \"127.0.0.1:\(udpPort)\", allow: [127.0.0.1]}",
                "cues: {intro: {media: \(clip.path), in: 10s, out: 12s}}",
            ],
            nodes: [
                .groundTruth(
                    id: "a", controlPort: firstControlPort, tile: (0, 0, 160, 90), port: receiver.ports[0],
                    extra: ["show-control: true"]),
                .groundTruth(
                    id: "b", controlPort: firstControlPort + 1, tile: (160, 0, 160, 90), port: receiver.ports[1]),
            ])
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        let master = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:\(masterPort)"])
        let nodes = try ["a", "b"].map { id in
            try ChildProcess(wallnode, ["run", "--config", config.path, "--id", id, "--log-format", "text"])
        }
        defer { for process in nodes + [master] { process.signal(SIGTERM) } }
        let play = try ChildProcess.run(wallctl, ["play", "--config", config.path])
        XCTAssertEqual(play.status, 0, play.output + play.errors)
        guard play.status == 0 else { return }
        let socket = try UDPSocket(family: .ipv4)
        let sent = LocalClock.monotonic.now()
        _ = try Array("cue intro".utf8).withUnsafeBytes {
            try socket.send($0, to: .ipv4Loopback(port: UInt16(udpPort)))
        }
        try await eventually(within: 6, "both screens on the cue's first frame") {
            receiver.seen.allSatisfy { frames in frames.contains { $0.code == 300 && $0.at > sent } }
        }
        let cuts = receiver.seen.map { frames in frames.first { $0.code == 300 && $0.at > sent }!.at }
        XCTAssertLessThanOrEqual(
            (cuts.max()! - cuts.min()!).seconds, 0.005, "both screens on the cue's first frame together")
    }
}
