import WallProtocol

/// Proof of play for a wall: what every screen presented in a span of time, gathered from every
/// node at once (`GET /plays`), in order of when each play began. What `wallctl report plays` and
/// the console export.
public struct PlayReport: Sendable, Codable {
    /// The span asked, milliseconds since 1970, UTC.
    public var fromUnixMs: Int64
    public var toUnixMs: Int64
    /// Every play that overlaps the span, ended or still on a screen (`ended: playing`), by when it
    /// began, then by node.
    public var plays: [PlayRecord]
    /// Nodes that did not answer, and why: the report lacks their plays.
    public var unreachable: [String: String]
    /// Nodes with more plays in the span than one answer holds: their newest are left off.
    public var truncated: [String]
    /// Lines of a node's files that were not plays (a cut write), by node.
    public var unreadableLines: [String: Int]

    /// Asks every node of `wall` for its plays in [`from`, `to`).
    public static func gather(_ wall: Wall, fromUnixMs from: Int64, toUnixMs to: Int64) async -> PlayReport {
        var report = PlayReport(
            fromUnixMs: from, toUnixMs: to, plays: [], unreachable: [:], truncated: [], unreadableLines: [:])
        for (id, outcome) in await wall.eachNode({ client throws(ControlError) in
            try await client.plays(fromUnixMs: from, toUnixMs: to)
        }) {
            switch outcome {
            case .success(let reply):
                report.plays += reply.plays + (reply.current.map { [$0] } ?? [])
                if reply.truncated { report.truncated.append(id) }
                if reply.unreadableLines > 0 { report.unreadableLines[id] = reply.unreadableLines }
            case .failure(let error):
                report.unreachable[id] = "\(error)"
            }
        }
        report.plays.sort { ($0.fromUnixMs, $0.node) < ($1.fromUnixMs, $1.node) }
        report.truncated.sort()
        return report
    }

    /// What the report lacks, in sentences: nodes that did not answer, plays left off, lines skipped.
    public var gaps: [String] {
        unreachable.sorted { $0.key < $1.key }.map { "\($0.key): no plays, the node did not answer: \($0.value)" }
            + truncated.map { "\($0): more than \(PlaysReply.mostPlays) plays in the span; the newest were left off" }
            + unreadableLines.sorted { $0.key < $1.key }.map {
                "\($0.key): \($0.value) lines of its play log were not plays (a cut write) and were skipped"
            }
    }

    /// The plays as CSV (`PlayRecord.csv`).
    public var csv: String { PlayRecord.csv(plays) }

    /// A line per play, for a terminal.
    public var lines: [String] {
        plays.map { play in
            let span = "\(PlayRecord.utc(play.fromUnixMs)) to \(PlayRecord.utc(play.toUnixMs))"
            let what =
                play.kind == .clip
                ? "\(play.media) \(String(format: "%.3f-%.3f s", play.mediaFromSeconds ?? 0, play.mediaToSeconds ?? 0))"
                : "\(play.media) (still)"
            let source = play.cue.map { " cue \($0)" } ?? play.playlist.map { " playlist \($0)" } ?? ""
            let frames = play.frames.map { ", \($0) frames" } ?? ""
            let problem = play.problem.map { "; \($0)" } ?? ""
            return "\(play.node) \(span) \(what)\(source): \(play.ended.rawValue)\(frames)\(problem)"
        }
    }
}
