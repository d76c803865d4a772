import Foundation
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

final class MPEGClockReferenceTests: XCTestCase {
    /// A transport stream packet of `size` bytes (188, or 192 with a 4-byte header first) whose
    /// adaptation field carries `pcr` (90 kHz base), or a payload-only packet when nil.
    private func packet(pcr: Int64?, size: Int = 188) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xFF, count: size)
        let start = size - 188
        bytes[start] = 0x47
        bytes[start + 1] = 0x01
        bytes[start + 2] = 0x00
        guard let pcr else {
            bytes[start + 3] = 0x10
            return bytes
        }
        bytes[start + 3] = 0x30
        bytes[start + 4] = 7
        bytes[start + 5] = 0x10
        bytes[start + 6] = UInt8(pcr >> 25 & 0xFF)
        bytes[start + 7] = UInt8(pcr >> 17 & 0xFF)
        bytes[start + 8] = UInt8(pcr >> 9 & 0xFF)
        bytes[start + 9] = UInt8(pcr >> 1 & 0xFF)
        bytes[start + 10] = UInt8((pcr & 1) << 7 | 0x7E)
        bytes[start + 11] = 0
        return bytes
    }

    func testFirstPCR_isFoundAfterPacketsWithout_atEachPacketSize() {
        let pcr: Int64 = (1 << 32) + 64_917  // all 33 bits in play
        for size in [188, 192] {
            var stream = [UInt8](repeating: 0, count: 5)  // a torn packet before the first sync
            for _ in 0..<3 { stream += packet(pcr: nil, size: size) }
            stream += packet(pcr: pcr, size: size)
            for _ in 0..<8 { stream += packet(pcr: nil, size: size) }
            XCTAssertEqual(MPEGClockReference.firstPCR(in: stream), pcr, "\(size)-byte packets")
        }
        XCTAssertNil(MPEGClockReference.firstPCR(in: (0..<12).flatMap { _ in packet(pcr: nil) }))
        XCTAssertNil(MPEGClockReference.firstPCR(in: [UInt8](repeating: 0x47, count: 100)), "too short to sync")
    }

    func testFirstSCR_readsMPEG2AndMPEG1PackHeaders() {
        let scr: Int64 = (1 << 32) + 850_341
        func byte(_ value: Int64) -> UInt8 { UInt8(truncatingIfNeeded: value) }
        var mpeg2: [UInt8] = [0x00, 0x00, 0x01, 0xBA]
        mpeg2.append(byte(0x44 | (scr >> 30 & 7) << 3 | (scr >> 28 & 3)))
        mpeg2.append(byte(scr >> 20))
        mpeg2.append(byte((scr >> 15 & 0x1F) << 3 | 0x04 | (scr >> 13 & 3)))
        mpeg2.append(byte(scr >> 5))
        mpeg2.append(byte((scr & 0x1F) << 3 | 0x04))
        mpeg2 += [0x01, 0x89, 0xC3, 0xF8]
        XCTAssertEqual(MPEGClockReference.firstSCR(in: [0x12, 0x00] + mpeg2), scr)
        var mpeg1: [UInt8] = [0x00, 0x00, 0x01, 0xBA]
        mpeg1.append(byte(0x21 | (scr >> 30 & 7) << 1))
        mpeg1.append(byte(scr >> 22))
        mpeg1.append(byte((scr >> 15 & 0x7F) << 1 | 1))
        mpeg1.append(byte(scr >> 7))
        mpeg1.append(byte((scr & 0x7F) << 1 | 1))
        mpeg1 += [0x80, 0x00, 0x01]
        XCTAssertEqual(MPEGClockReference.firstSCR(in: mpeg1), scr)
        XCTAssertNil(MPEGClockReference.firstSCR(in: [0x00, 0x00, 0x01, 0xB3, 0, 0, 0, 0, 0, 0, 0]))
    }

    /// ffmpeg's muxer starts the clock 0.7 s ahead of the first frame, which it stamps 1.4 s (video
    /// 1024 audio samples later): GStreamer's item time zero is 0.7 s less 21 ms.
    func testInspection_ofFFmpegTransportStream_placesItemTimeZero() throws {
        let url = try TestMedia.frameCodeTransportStream()
        let reference = try XCTUnwrap(MPEGClockReference.first(inFileAt: url.path, format: "mpegts"))
        XCTAssertEqual(reference.seconds, 1.4 - 0.7 + 1024.0 / 48_000, accuracy: 0.0001)
        let inspection = try MediaInspector.inspect(path: url.path)
        XCTAssertEqual(inspection.streamTimeOrigin.seconds, 0.7 - 1024.0 / 48_000, accuracy: 0.0001)
        XCTAssertNil(MPEGClockReference.first(inFileAt: url.path, format: "mov,mp4,m4a,3gp,3g2,mj2"))
        let mp4 = try MediaInspector.inspect(path: try TestMedia.frameCode(seconds: 4).path)
        XCTAssertEqual(mp4.streamTimeOrigin, .zero)
    }
}
