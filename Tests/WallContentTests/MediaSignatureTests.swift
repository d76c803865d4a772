import Foundation
import WallContent
import XCTest

final class MediaSignatureTests: XCTestCase {
    private func head(_ bytes: [UInt8], padTo count: Int = 400) -> [UInt8] {
        bytes + [UInt8](repeating: 0x20, count: max(0, count - bytes.count))
    }

    func testTheFormatsAWallPlays_areKnownByTheirFirstBytes() {
        let cases: [(String, [UInt8])] = [
            ("MP4/QuickTime", [0, 0, 0, 0x20] + Array("ftypisom".utf8)),
            ("MP4/QuickTime", [0, 0, 0, 8] + Array("wide".utf8)),
            ("Matroska/WebM", [0x1A, 0x45, 0xDF, 0xA3]),
            ("MPEG program stream", [0, 0, 1, 0xBA]),
            ("AVI", Array("RIFF".utf8) + [1, 2, 3, 4] + Array("AVI LIST".utf8)),
            ("WAVE", Array("RIFF".utf8) + [1, 2, 3, 4] + Array("WAVEfmt ".utf8)),
            ("Ogg", Array("OggS".utf8)),
            ("PNG", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
            ("JPEG", [0xFF, 0xD8, 0xFF, 0xE0]),
            ("GIF", Array("GIF89a".utf8)),
            ("MPEG audio", Array("ID3".utf8)),
            ("MXF", [0x06, 0x0E, 0x2B, 0x34, 0x02, 0x05, 0x01, 0x01]),
            ("MP4/QuickTime", [0, 0, 0, 0x18] + Array("stypmsdh".utf8)),
            ("H.264/H.265 elementary stream", [0, 0, 1, 0x09, 0xF0]),
        ]
        for (format, bytes) in cases {
            XCTAssertEqual(MediaSignature.format(of: head(bytes)), format, "\(bytes.prefix(8))")
        }
        var transport = [UInt8](repeating: 0xFF, count: 400)
        transport[0] = 0x47
        transport[188] = 0x47
        XCTAssertEqual(MediaSignature.format(of: transport), "MPEG transport stream")
    }

    func testWhatIsNotMedia_isNotTakenForIt() {
        XCTAssertNil(MediaSignature.format(of: Array("%PDF-1.7\n".utf8)))
        XCTAssertNil(MediaSignature.format(of: Array("hello, wall\n".utf8)))
        XCTAssertNil(MediaSignature.format(of: [0x47, 1, 2, 3]), "one sync byte is not a transport stream")
        XCTAssertNil(MediaSignature.format(of: []))
    }

    func testAPushRefusal_namesTheFileAndSaysWhy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-sniff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func write(_ name: String, _ bytes: [UInt8]) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
        let empty = try write("empty.mp4", [])
        XCTAssertEqual(
            MediaSignature.refusal(ofFileAt: empty, name: "clips/empty.mp4"),
            "clips/empty.mp4 is empty (0 bytes): there is nothing to play")
        let notes = try write("notes.mp4", Array("meeting notes\n".utf8))
        XCTAssertEqual(
            MediaSignature.refusal(ofFileAt: notes, name: "notes.mp4"),
            "notes.mp4 is not a video, audio or picture file a wall plays (it begins 6d 65 65 74 69 6e 67 20)")
        let playlist = try write("live.m3u8", Array("#EXTM3U\n#EXT-X-VERSION:3\n".utf8))
        XCTAssertTrue(
            MediaSignature.refusal(ofFileAt: playlist, name: "live.m3u8")?.contains("HLS playlist") == true)
        let still = try write("still.png", head([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        XCTAssertNil(MediaSignature.refusal(ofFileAt: still, name: "still.png"))
        XCTAssertEqual(
            MediaSignature.refusal(ofFileAt: folder.appendingPathComponent("gone").path, name: "gone.mp4"),
            "gone.mp4: cannot be read")
    }
}
