import Foundation
import LockstepGuard
import LockstepTime
import ShowControl
@_spi(Fuzzing) import SyncClock
import WallProtocol
import WallTimeline

/// One input to everything a node parses from outside, run the way the node runs it. The first
/// byte chooses what the rest is; whatever it is, each parser must accept it or refuse it with an
/// error, and what it accepts must survive everything computed from it later. A trap is a finding.
///
/// Used by `lockstep-fuzz` (libFuzzer, `make fuzz`) and by the corpus replay in `make test`.
public enum FuzzHarness {
    public enum Target: UInt8, CaseIterable, Sendable {
        /// A `PUT /timeline` body, as the node decodes, checks, keeps and follows it.
        case timeline
        /// The same bytes as the stored timeline file read back at start.
        case stateFile
        /// A wall config file.
        case config
        /// A UDP datagram at a clock server.
        case clockRequest
        /// A run of replies at a clock client that asked the time.
        case clockReplies
        /// The other control bodies and parameters: media lists, paths, query numbers.
        case controlRequest
        /// A show-control datagram: OSC, or a line of text.
        case showControl
    }

    /// The target an input goes to, and the bytes it gets.
    public static func split(_ input: [UInt8]) -> (Target, ArraySlice<UInt8>)? {
        guard let first = input.first else { return nil }
        let target = Target.allCases[Int(first) % Target.allCases.count]
        return (target, input.dropFirst())
    }

    public static func run(_ input: [UInt8]) {
        guard let (target, body) = split(input) else { return }
        switch target {
        case .timeline: timeline(Data(body))
        case .stateFile: stateFile(Data(body))
        case .config: config(body)
        case .clockRequest: clockRequest(Array(body))
        case .clockReplies: clockReplies(Array(body))
        case .controlRequest: controlRequest(Data(body))
        case .showControl: showControl(Array(body))
        }
    }

    /// Decoded as the node's control server decodes it, checked as `PUT /timeline` checks it, then
    /// an edit of it checked against it as a replacement, and followed.
    static func timeline(_ body: Data) {
        guard let timeline = try? JSONDecoder().decode(Timeline.self, from: body), (try? timeline.validate()) != nil
        else { return }
        let encoded = try? JSONEncoder().encode(timeline)
        precondition(
            encoded.flatMap { try? JSONDecoder().decode(Timeline.self, from: $0) } == timeline,
            "an accepted timeline reads back as itself")
        TimelineExercise.exercise(timeline, at: hostTimes(from: body))
        if let next = try? timeline.applying(.pause, at: timeline.start) {
            precondition(next.supersedes(timeline) && !timeline.supersedes(next), "an edit supersedes what it edits")
            var admission = TimelineAdmission()
            _ = try? admission.admit(
                next, current: timeline, wall: timeline.wall, epoch: .known(timeline.epoch), from: .controller,
                now: .zero)
        }
    }

    /// Written where a node keeps its timeline and read back as at start: kept or set aside.
    static func stateFile(_ body: Data) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-fuzz-\(getpid())/timeline.json"
        ).path
        let store = TimelineStore(path: path)
        try? FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard (try? body.write(to: URL(fileURLWithPath: path))) != nil else { return }
        if case .timeline(let timeline) = store.recover(checking: { _ in }) {
            TimelineExercise.exercise(timeline)
        }
        // The file, or what recovery set aside in its place.
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    /// As a show-control input reads a datagram: as OSC (each message read as a command), and as
    /// a line of text; and as a TCP stream, cut into chunks where its own bytes say, through the
    /// line reader (every line it gives within its bound, and no end left in one).
    static func showControl(_ body: [UInt8]) {
        var reader = LineReader(longest: 64)
        var start = 0
        while start < body.count {
            let end = min(body.count, start + 1 + Int(body[start] % 97))
            guard let lines = try? reader.feed(body[start..<end]) else { break }
            for line in lines {
                precondition(line.count <= 64 && !line.contains(UInt8(ascii: "\n")), "a line within its bound")
                _ = String(validating: line, as: UTF8.self).map { try? ShowCommand(line: Substring($0)) }
            }
            start = end
        }
        if let packet = try? OSCPacket(decoding: body) {
            precondition(
                (try? OSCPacket(decoding: packet.encoded)).map { "\($0)" == "\(packet)" } ?? false,
                "an accepted OSC packet reads back as itself")
            for (message, tag) in packet.messages {
                _ = try? ShowCommand(osc: message)
                _ = tag?.unixNanoseconds
            }
        }
        if let text = String(validating: body, as: UTF8.self) { _ = try? ShowCommand(line: Substring(text)) }
    }

    static func config(_ body: ArraySlice<UInt8>) {
        guard let text = String(validating: body, as: UTF8.self) else { return }
        guard let config = try? WallConfig.parse(text, file: "fuzz.yaml", baseDirectory: "/srv/wall") else { return }
        precondition(!config.name.isEmpty && !config.nodes.isEmpty && config.nodes.count <= WallConfig.mostNodes)
        _ = TileLayout(config: config)
    }

    static func clockRequest(_ body: [UInt8]) {
        let port = body.count > 2 ? UInt16(body[0]) << 8 | UInt16(body[1]) : 40_000
        let receive = Int64(bitPattern: body.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        if let reply = ClockFuzzing.serve(body, sourcePort: port, receiveTime: receive) {
            precondition(reply.count <= body.count, "a reply is never larger than its request")
        }
    }

    /// The bytes cut into datagrams of the wire's two sizes and of their own length, arriving a
    /// millisecond apart or at times the bytes give.
    static func clockReplies(_ body: [UInt8]) {
        guard let flags = body.first else { return }
        let format: WireFormat = flags & 1 == 0 ? .lockstep : .gstreamer
        var replies: [(datagram: [UInt8], arrival: Int64)] = []
        var rest = body.dropFirst()
        var index: Int64 = 0
        while !rest.isEmpty, replies.count < 64 {
            let length = Int(rest.first!) % 3 == 0 ? Int(rest.first!) : (format == .lockstep ? 96 : 16)
            let datagram = Array(rest.dropFirst().prefix(length))
            rest = rest.dropFirst(1 + datagram.count)
            index += 1
            // The client's own clock is monotonic and counts from boot: arrivals only move forward,
            // within a century (64 jumps of at most 2^55 ns, 1.1 years each, stay below 2^61 ns).
            // Everything the server sends is the input's.
            let jump = flags & 2 == 0 ? 1_000_000 : Int64(readInt64(datagram).magnitude % (1 << 55))
            let arrival = max(index * 20_000_000 + 1_000_000, (replies.last?.arrival ?? 0) + jump)
            replies.append((datagram, arrival))
        }
        let status = ClockFuzzing.receive(replies, format: format, matching: flags & 4 == 0)
        // What a node reads from it: the master time now and later, and the bound on its error.
        _ = status.masterTime
        for later in [status.localTime, MediaTime(nanoseconds: .max), MediaTime(value: 3600, timescale: 1)] {
            _ = status.isUsable(atLocal: later)
            _ = status.errorBound(atLocal: later)
            _ = status.mapping.masterTime(atLocal: later)
        }
    }

    static func controlRequest(_ body: Data) {
        if let request = try? JSONDecoder().decode(MediaDurationsRequest.self, from: body) {
            let roots = MediaRoots(["/srv/wall/media"])
            for name in request.media.prefix(64) { _ = try? roots.resolve(name) }
        }
        guard let text = String(data: body, encoding: .utf8) else { return }
        for word in text.split(whereSeparator: { $0 == " " || $0 == "&" || $0 == "=" }).prefix(16) {
            if let number = UInt64(word) {
                _ = try? RequestChecks.framesLimit(number)
                _ = try? RequestChecks.snapshotSize(width: number, height: number / 2, output: nil)
            }
            if let number = Int64(word) {
                _ = try? RequestChecks.identifyDuration(MediaTime(nanoseconds: number))
            }
            if let rate = Float(word) { _ = try? RequestChecks.rate(rate, canPlay: { _ in true }) }
        }
    }

    /// Host times the input names: each 8 bytes read as nanoseconds.
    static func hostTimes(from body: Data) -> [MediaTime] {
        let bytes = Array(body.suffix(32))
        return stride(from: 0, to: bytes.count - 7, by: 8).map {
            MediaTime(nanoseconds: readInt64(Array(bytes[$0..<($0 + 8)])))
        }
    }

    static func readInt64(_ bytes: [UInt8]) -> Int64 {
        Int64(bitPattern: bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
}
