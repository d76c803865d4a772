import Foundation

/// What a file's first bytes say it is: a container, stream or picture format a wall's players
/// open, or nothing known. A push checks it before it sends a file to every node, so that a file
/// that cannot play (a document, a playlist without its segments, a file cut to nothing) is refused
/// at once, by its name, not found out at `play` on every screen.
public enum MediaSignature {
    /// How many of a file's first bytes are read: enough for every signature here.
    public static let headLength = 1024

    /// The format `head` (a file's first bytes: `headLength` of them where the file has as many)
    /// begins with; nil when it is none this wall knows.
    public static func format(of head: [UInt8]) -> String? {
        func starts(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + bytes.count && Array(head[offset..<offset + bytes.count]) == bytes
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }
        func mpegTS(packet: Int, offset: Int) -> Bool {
            head.count > offset + packet && head[offset] == 0x47 && head[offset + packet] == 0x47
        }

        // ISO base media boxes a file may begin with (fragmented MP4 segments too).
        if ["ftyp", "moov", "mdat", "free", "wide", "skip", "pnot", "styp", "sidx", "moof"].contains(where: {
            ascii($0, at: 4)
        }) {
            return "MP4/QuickTime"
        }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "Matroska/WebM" }
        if mpegTS(packet: 188, offset: 0) { return "MPEG transport stream" }
        if mpegTS(packet: 192, offset: 4) { return "MPEG transport stream (M2TS)" }
        if starts([0, 0, 1, 0xBA]) { return "MPEG program stream" }
        if starts([0, 0, 1, 0xB3]) { return "MPEG video" }
        if starts([0, 0, 0, 1]) || starts([0, 0, 1]) { return "H.264/H.265 elementary stream" }
        if starts([0x06, 0x0E, 0x2B, 0x34]) { return "MXF" }
        if ascii("RIFF"), ascii("AVI ", at: 8) { return "AVI" }
        if ascii("RIFF"), ascii("WAVE", at: 8) { return "WAVE" }
        if ascii("RIFF"), ascii("WEBP", at: 8) { return "WebP" }
        if ascii("OggS") { return "Ogg" }
        if ascii("fLaC") { return "FLAC" }
        if ascii("FLV"), starts([1], at: 3) { return "FLV" }
        if starts([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) { return "ASF/WMV" }
        if ascii("YUV4MPEG2") { return "YUV4MPEG" }
        if ascii("ID3") || (head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0) { return "MPEG audio" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "PNG" }
        if starts([0xFF, 0xD8, 0xFF]) { return "JPEG" }
        if ascii("GIF87a") || ascii("GIF89a") { return "GIF" }
        if starts([0x49, 0x49, 0x2A, 0]) || starts([0x4D, 0x4D, 0, 0x2A]) { return "TIFF" }
        if ascii("BM"), head.count >= 14 { return "BMP" }
        return nil
    }

    /// Why the file at `path` cannot play on a wall, as a sentence naming `name` (the operator's
    /// name for it); nil when it is a format a wall's players open.
    public static func refusal(ofFileAt path: String, name: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "\(name): cannot be read" }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: headLength)) ?? Data())
        if head.isEmpty { return "\(name) is empty (0 bytes): there is nothing to play" }
        guard format(of: head) == nil else { return nil }
        if String(decoding: head.prefix(7), as: UTF8.self) == "#EXTM3U" {
            return "\(name) is an HLS playlist: name its URL in the playlist, it is not a file to push"
        }
        let first = head.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
        return "\(name) is not a video, audio or picture file a wall plays (it begins \(first))"
    }
}
