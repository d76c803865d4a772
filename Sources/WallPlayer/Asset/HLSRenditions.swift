internal import CFFmpeg
import Foundation
import LockstepTime

/// The subtitle renditions an HLS master playlist offers (`EXT-X-MEDIA:TYPE=SUBTITLES`), which
/// libavformat 5.1's HLS demuxer leaves out of the streams it reads: WebVTT playlists of their own,
/// found in the master's text and read on their own.
enum HLSRenditions {
    /// One `EXT-X-MEDIA` tag of type SUBTITLES.
    struct Subtitles: Sendable, Hashable {
        let name: String
        /// Its LANGUAGE attribute (BCP 47, "en"), when it has one.
        let language: String?
        let isDefault: Bool
        /// Its media playlist, resolved against the master's URL.
        let playlist: URL
    }

    /// The subtitle renditions the master playlist `text`, read from `master`, lists.
    static func subtitles(inMaster text: String, at master: URL) -> [Subtitles] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            guard line.hasPrefix("#EXT-X-MEDIA:") else { return nil }
            let attributes = self.attributes(String(line.dropFirst("#EXT-X-MEDIA:".count)))
            guard attributes["TYPE"] == "SUBTITLES", let uri = attributes["URI"],
                let playlist = URL(string: uri, relativeTo: master)?.absoluteURL
            else { return nil }
            return Subtitles(
                name: attributes["NAME"] ?? uri, language: attributes["LANGUAGE"],
                isDefault: attributes["DEFAULT"] == "YES", playlist: playlist)
        }
    }

    /// An attribute list (`NAME="English",DEFAULT=NO,...`): quoted values may hold commas.
    static func attributes(_ list: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(list)
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = rest[..<equals].trimmingCharacters(in: .whitespaces)
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let close = body.firstIndex(of: "\"") ?? body.endIndex
                value = body[..<close]
                rest = close < body.endIndex ? body[body.index(after: close)...] : ""
                if rest.first == "," { rest = rest.dropFirst() }
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = comma < rest.endIndex ? rest[rest.index(after: comma)...] : ""
            }
            result[key] = String(value)
        }
        return result
    }

    /// How far the cue times of a WebVTT segment lie from the MPEG-TS timeline, from its
    /// `X-TIMESTAMP-MAP=MPEGTS:<90 kHz>,LOCAL:<cue time>` header: what to add to a cue time to
    /// get MPEG-TS time. nil without the header; HLS packagers then write cue times from the
    /// presentation's start (ffmpeg does), which is item time.
    static func timestampOffset(ofSegment text: String) -> MediaTime? {
        guard let line = text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("X-TIMESTAMP-MAP=") })
        else { return nil }
        var mpegts: Int64?
        var local: MediaTime?
        for field in line.dropFirst("X-TIMESTAMP-MAP=".count).split(separator: ",") {
            let parts = field.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            switch parts[0].trimmingCharacters(in: .whitespaces) {
            case "MPEGTS": mpegts = Int64(parts[1].trimmingCharacters(in: .whitespaces))
            case "LOCAL": local = cueTime(String(parts[1]))
            default: break
            }
        }
        guard let mpegts, let local else { return nil }
        return MediaTime(value: mpegts, timescale: 90_000) - local
    }

    /// A WebVTT timestamp ("hh:mm:ss.ttt" or "mm:ss.ttt").
    static func cueTime(_ text: String) -> MediaTime? {
        let fields = text.trimmingCharacters(in: .whitespaces).split(separator: ":")
        guard (2...3).contains(fields.count), let last = fields.last else { return nil }
        let secondsParts = last.split(separator: ".")
        guard let seconds = Int64(secondsParts[0]) else { return nil }
        let millis = secondsParts.count > 1 ? Int64(secondsParts[1].prefix(3).padding(toLength: 3, withPad: "0", startingAt: 0)) ?? 0 : 0
        var total = seconds
        for (index, field) in fields.dropLast().reversed().enumerated() {
            guard let value = Int64(field) else { return nil }
            total += value * (index == 0 ? 60 : 3600)
        }
        return MediaTime(value: total * 1000 + millis, timescale: 1000)
    }

    /// The first segment a media playlist lists, resolved against its URL.
    static func firstSegment(inPlaylist text: String, at playlist: URL) -> URL? {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty && !$0.hasPrefix("#") }
            .flatMap { URL(string: $0, relativeTo: playlist)?.absoluteURL }
    }
}

extension MediaInspector {
    /// The largest text read for a playlist or a WebVTT segment.
    static let largestText = 4 << 20

    /// The text at `url` (a playlist, a WebVTT segment), read with libavformat's I/O, giving up at
    /// `timeout`; nil when it cannot be read or is not UTF-8.
    static func readText(_ url: URL, timeout: MediaTime) -> String? {
        let deadline = InputDeadline(after: timeout)
        var callback = deadline.callback
        var io: UnsafeMutablePointer<AVIOContext>?
        var options: OpaquePointer?
        av_dict_set(&options, "rw_timeout", "\(timeout.convertScale(1_000_000, method: .default).value)", 0)
        defer { av_dict_free(&options) }
        guard avio_open2(&io, url.absoluteString, AVIO_FLAG_READ, &callback, &options) >= 0, let io else { return nil }
        defer {
            var closing: UnsafeMutablePointer<AVIOContext>? = io
            avio_closep(&closing)
            withExtendedLifetime(deadline) {}
        }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while data.count < largestText {
            let count = chunk.withUnsafeMutableBytes { avio_read(io, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<Int(count)])
        }
        return String(data: data, encoding: .utf8)
    }
}

/// The dates an HLS playlist gives its media (`EXT-X-PROGRAM-DATE-TIME`), for `PlayerItem.currentDate()`
/// and `seek(to: Date)`: item time zero is the start of the playlist's first segment, whose date is
/// the first tagged segment's date less the durations (`EXTINF`) of the segments before it.
enum HLSProgramDates {
    /// The date of item time zero in the media playlist `text`, or nil when it gives no date, or is
    /// a live playlist (no `EXT-X-ENDLIST`, not an `EVENT`): its first segment leaves the window, and
    /// item time zero with it.
    static func dateOfItemTimeZero(inMediaPlaylist text: String) -> Date? {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        let ends = lines.contains("#EXT-X-ENDLIST") || lines.contains("#EXT-X-PLAYLIST-TYPE:EVENT")
            || lines.contains("#EXT-X-PLAYLIST-TYPE:VOD")
        guard ends else { return nil }
        var before = 0.0
        var pendingDate: Date?
        for line in lines {
            if line.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") {
                pendingDate = date(String(line.dropFirst("#EXT-X-PROGRAM-DATE-TIME:".count)))
                if pendingDate == nil { return nil }
            } else if line.hasPrefix("#EXTINF:") {
                // A date applies to the segment that follows it.
                if let pendingDate { return pendingDate.addingTimeInterval(-before) }
                let value = line.dropFirst("#EXTINF:".count).prefix { $0 != "," }
                guard let duration = Double(value), duration.isFinite, duration >= 0 else { return nil }
                before += duration
            }
        }
        return nil
    }

    /// The media playlist of a master's first variant (`EXT-X-STREAM-INF`), resolved against `master`.
    static func firstVariant(inMaster text: String, at master: URL) -> URL? {
        var afterStreamInfo = false
        for line in text.split(whereSeparator: \.isNewline) {
            let line = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                afterStreamInfo = true
            } else if afterStreamInfo, !line.isEmpty, !line.hasPrefix("#") {
                return URL(string: line, relativeTo: master)?.absoluteURL
            }
        }
        return nil
    }

    /// An ISO 8601 date with a time zone, with or without fractions of a second.
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
