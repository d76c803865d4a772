import Foundation

/// One thing a screen presented, from when to when, for proof of play: signage sites bill and audit
/// by it. A node writes one when the play ends (`<wall>-<node>.plays.jsonl` in its state folder), and answers
/// `GET /plays` with those in a span of time.
public struct PlayRecord: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A pass of a playlist entry or a cue's clip.
        case clip
        /// A still image: the wall's (`wallctl still`) or the node's between shows.
        case still
    }

    /// How a play ended.
    public enum Ending: String, Sendable, Hashable, Codable {
        /// The clip reached its out point (the playlist went on, or held its last frame).
        case end
        /// Something else took the screen: a cue, a verb, the next day part, a new show.
        case cut
        /// The wall paused on it.
        case paused
        /// The node stopped with it on the screen (a restart, a power cut): `to` is the last time the
        /// node wrote down that it still played.
        case nodeStopped = "node stopped"
        /// Still on the screen when asked: `to` is then.
        case playing
    }

    public var node: String
    public var kind: Kind
    /// The media as the config names it (for a pre-split tile, this node's file).
    public var media: String
    /// The file's SHA-256, when known: the content ID of distributed content, else read from the
    /// file as it was played.
    public var sha256: String?
    /// The schedule's playlist it played in, if a schedule's.
    public var playlist: String?
    /// The show-control cue it played for, if a cue's.
    public var cue: String?
    /// The playlist entry (0 for the first) and its pass (0 for the first), for a clip.
    public var entry: Int?
    public var pass: Int?
    /// Where in the media it played from and to, in seconds, for a clip.
    public var mediaFromSeconds: Double?
    public var mediaToSeconds: Double?
    /// UTC, milliseconds since 1970: the master's real time, or this node's own clock when the
    /// master serves none (`clock`).
    public var fromUnixMs: Int64
    public var toUnixMs: Int64
    /// `master` or `node`: which clock `from` and `to` were read from.
    public var clock: String
    public var ended: Ending
    /// Frames the screen presented during the play (a clip's), at their times on the glass.
    public var frames: Int?
    /// The timeline version it played under.
    public var version: UInt64
    /// Why the screen did not show it, if it did not (a clip with no frames presented, a still that
    /// could not be shown).
    public var problem: String?

    public init(
        node: String, kind: Kind, media: String, sha256: String? = nil, playlist: String? = nil, cue: String? = nil,
        entry: Int? = nil, pass: Int? = nil, mediaFromSeconds: Double? = nil, mediaToSeconds: Double? = nil,
        fromUnixMs: Int64,
        toUnixMs: Int64, clock: String, ended: Ending, frames: Int? = nil, version: UInt64, problem: String? = nil
    ) {
        self.node = node
        self.kind = kind
        self.media = media
        self.sha256 = sha256
        self.playlist = playlist
        self.cue = cue
        self.entry = entry
        self.pass = pass
        self.mediaFromSeconds = mediaFromSeconds
        self.mediaToSeconds = mediaToSeconds
        self.fromUnixMs = fromUnixMs
        self.toUnixMs = toUnixMs
        self.clock = clock
        self.ended = ended
        self.frames = frames
        self.version = version
        self.problem = problem
    }

    /// Whether it ended before its end: a clip cut, paused or stopped with the node before its out
    /// point; a still whose node stopped (a still has no end of its own: anything after it ends it).
    public var interrupted: Bool {
        switch ended {
        case .end, .playing: false
        case .nodeStopped: true
        case .cut, .paused: kind == .clip
        }
    }

    /// Whether any of it lies in [`from`, `to`).
    public func overlaps(fromUnixMs from: Int64, toUnixMs to: Int64) -> Bool {
        fromUnixMs < to && toUnixMs > from
    }

    /// The CSV's columns, in order.
    public static let csvHeader = [
        "node", "kind", "media", "sha256", "playlist", "cue", "entry", "pass", "media_from_s", "media_to_s", "from_utc",
        "to_utc", "seconds", "interrupted", "ended", "frames", "clock", "version", "problem",
    ]

    /// Its row in the CSV (RFC 4180: a field with a comma, a quote or a line break quoted).
    public var csvRow: String {
        let fields: [String] = [
            node, kind.rawValue, media, sha256 ?? "", playlist ?? "", cue ?? "", entry.map(String.init) ?? "",
            pass.map(String.init) ?? "", mediaFromSeconds.map { String(format: "%.3f", $0) } ?? "",
            mediaToSeconds.map { String(format: "%.3f", $0) } ?? "", Self.utc(fromUnixMs), Self.utc(toUnixMs),
            String(format: "%.3f", Double(toUnixMs - fromUnixMs) / 1000), interrupted ? "yes" : "no", ended.rawValue,
            frames.map(String.init) ?? "", clock, String(version), problem ?? "",
        ]
        return fields.map(Self.csvField).joined(separator: ",")
    }

    /// `plays` as a CSV document, with its header.
    public static func csv(_ plays: [PlayRecord]) -> String {
        ([csvHeader.joined(separator: ",")] + plays.map(\.csvRow)).joined(separator: "\r\n") + "\r\n"
    }

    static func csvField(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `2026-11-29T18:00:00.125Z`.
    public static func utc(_ unixMs: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(unixMs) / 1000))
    }

    /// Milliseconds since 1970 from what an operator writes for a report's bound: an ISO 8601
    /// instant, `now`, or a time ago (`90s`, `30m`, `24h`, `7d`); nil if it is none of these.
    public static func instant(_ text: String, nowUnixMs now: Int64) -> Int64? {
        if text == "now" { return now }
        if let unit = text.last, let count = Int64(text.dropLast()), count >= 0, count <= 36_500 * 86_400 {
            let scale: Int64? =
                switch unit {
                case "s": 1000
                case "m": 60_000
                case "h": 3_600_000
                case "d": 86_400_000
                default: nil
                }
            if let scale { return now - count * scale }
        }
        return unixMs(iso8601: text)
    }

    /// A report's span, [`from`, `to`) in milliseconds since 1970, from what an operator wrote for
    /// its bounds (`instant`); or the sentence saying which bound is wrong and why, each named as
    /// the caller takes it (`--from` on the command line, `from` in a query).
    public static func span(
        from: String, to: String, nowUnixMs now: Int64, named names: (from: String, to: String) = ("from", "to")
    ) -> Result<(from: Int64, to: Int64), SpanError> {
        guard let start = instant(from, nowUnixMs: now) else {
            return .failure(
                SpanError(
                    description:
                        "\(names.from) must be an ISO 8601 instant, now, or a time ago like 24h, got \"\(from.prefix(64))\""
                ))
        }
        guard let end = instant(to, nowUnixMs: now) else {
            return .failure(
                SpanError(
                    description:
                        "\(names.to) must be an ISO 8601 instant, now, or a time ago like 1h, got \"\(to.prefix(64))\"")
            )
        }
        guard start < end else {
            return .failure(
                SpanError(description: "\(names.to) (\(utc(end))) must come after \(names.from) (\(utc(start)))"))
        }
        return .success((start, end))
    }

    /// What is wrong with a report's bounds, in a sentence.
    public struct SpanError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Milliseconds since 1970 from an ISO 8601 instant (`2026-11-29T18:00:00Z`, with or without
    /// fractional seconds, any offset), nil if it is not one.
    public static func unixMs(iso8601 text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) {
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        return nil
    }
}

/// A node's answer to `GET /plays`: its plays in the span asked, oldest first.
public struct PlaysReply: Sendable, Codable {
    /// The most plays one answer holds.
    public static let mostPlays = 10_000

    public var node: String
    public var plays: [PlayRecord]
    /// The play on the screen now, as far as it has gone (`to` is now): not yet in the file.
    public var current: PlayRecord?
    /// More plays lay in the span than `limit`: the newest were left off.
    public var truncated: Bool
    /// Lines of the node's files that were not plays (a cut write), skipped.
    public var unreadableLines: Int

    public init(node: String, plays: [PlayRecord], current: PlayRecord?, truncated: Bool, unreadableLines: Int) {
        self.node = node
        self.plays = plays
        self.current = current
        self.truncated = truncated
        self.unreadableLines = unreadableLines
    }
}
