import Foundation
import LockstepTime

/// The first system clock reference of an MPEG transport or program stream: where GStreamer's
/// MPEG demuxers start counting stream time.
///
/// libavformat counts an MPEG stream's time from its first presentation timestamp (the container's
/// `start_time`); GStreamer's tsdemux and mpegpsdemux count from the first clock reference (a
/// transport stream's PCR, a program stream's SCR), which a muxer puts ahead of the first frame by
/// its mux delay: 0.7 s for ffmpeg's, whatever a broadcaster's. Measured on ffmpeg-made files with
/// mux delays of 0, 0.3 and 0.7 s and a 10 s timestamp offset: GStreamer's stream time of every
/// buffer is its timestamp less the first clock reference, to the nanosecond. The player maps item
/// time through the difference, so item time counts from the first frame as the asset's facts do.
enum MPEGClockReference {
    /// How much of the file's start is searched: muxers send a clock reference at least every
    /// 100 ms (TS) or 0.7 s (PS), a few hundred kilobytes at broadcast rates.
    static let searchedBytes = 4 << 20

    /// The first clock reference of the file at `path`, read as `format` ("mpegts" or "mpeg", as
    /// libavformat names them); nil for other formats or when none is found.
    static func first(inFileAt path: String, format: String) -> MediaTime? {
        guard format == "mpegts" || format == "mpeg", let handle = FileHandle(forReadingAtPath: path) else {
            return nil
        }
        defer { try? handle.close() }
        // Nearly always in the first packets: a short read first, the long one only if needed.
        for size in [256 << 10, searchedBytes] {
            guard (try? handle.seek(toOffset: 0)) != nil, let head = try? handle.read(upToCount: size) else {
                return nil
            }
            let bytes = [UInt8](head)
            if let ticks = format == "mpegts" ? firstPCR(in: bytes) : firstSCR(in: bytes) {
                return MediaTime(value: ticks, timescale: 90_000)
            }
            if bytes.count < size { return nil }
        }
        return nil
    }

    /// The first PCR base (90 kHz) of transport stream packets of 188 bytes, 192 (M2TS, a 4-byte
    /// header before each) or 204 (with Reed-Solomon parity).
    static func firstPCR(in bytes: [UInt8]) -> Int64? {
        guard let (stride, first) = packetLayout(bytes) else { return nil }
        var packet = first
        while packet + 12 <= bytes.count {
            defer { packet += stride }
            guard bytes[packet] == 0x47 else { continue }
            let hasAdaptationField = bytes[packet + 3] & 0x20 != 0
            guard hasAdaptationField, bytes[packet + 4] >= 7, bytes[packet + 5] & 0x10 != 0 else { continue }
            let field = bytes[(packet + 6)..<(packet + 11)].map(Int64.init)
            return field[0] << 25 | field[1] << 17 | field[2] << 9 | field[3] << 1 | field[4] >> 7
        }
        return nil
    }

    /// The packet size and the offset of the first sync byte: the first layout whose next eight
    /// packets all start with 0x47.
    private static func packetLayout(_ bytes: [UInt8]) -> (stride: Int, first: Int)? {
        for stride in [188, 192, 204] {
            for first in 0..<stride
            where (0..<8).allSatisfy({ packet in
                let index = first + packet * stride
                return index < bytes.count && bytes[index] == 0x47
            }) {
                return (stride, first)
            }
        }
        return nil
    }

    /// The SCR base (90 kHz) of the first pack header of a program stream, MPEG-2 or MPEG-1.
    static func firstSCR(in bytes: [UInt8]) -> Int64? {
        var index = 0
        while index + 9 < bytes.count {
            defer { index += 1 }
            guard bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1, bytes[index + 3] == 0xBA else {
                continue
            }
            let b = bytes[(index + 4)..<(index + 9)].map(Int64.init)
            if b[0] & 0xC0 == 0x40 {
                // MPEG-2: '01' SCR[32..30] 1 SCR[29..28] | SCR[27..20] | SCR[19..15] 1 SCR[14..13] | SCR[12..5] | SCR[4..0] ...
                return (b[0] >> 3 & 7) << 30 | (b[0] & 3) << 28 | b[1] << 20 | (b[2] >> 3 & 0x1F) << 15
                    | (b[2] & 3) << 13 | b[3] << 5 | (b[4] >> 3 & 0x1F)
            }
            if b[0] & 0xF0 == 0x20 {
                // MPEG-1: '0010' SCR[32..30] 1 | SCR[29..22] | SCR[21..15] 1 | SCR[14..7] | SCR[6..0] 1
                return (b[0] >> 1 & 7) << 30 | b[1] << 22 | (b[2] >> 1 & 0x7F) << 15 | b[3] << 7 | (b[4] >> 1 & 0x7F)
            }
        }
        return nil
    }
}
