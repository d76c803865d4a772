import CZlib
import Foundation
import LockstepTime
import WallProtocol
import XCTest

@testable import WallControl

/// `wallctl snapshot`'s picture, composed from fake nodes' frames: each tile in its place at one
/// master time, and a PNG any viewer reads.
final class WallSnapshotTests: FakeWallTestCase {
    private func twoScreens(frameTimes: [MediaTime]) async throws -> Wall {
        for (index, node) in try await startNodes(["a", "b"]).enumerated() {
            node.show(colour: index == 0 ? [255, 0, 0] : [0, 0, 255], frameTime: frameTimes[index])
        }
        return try wall(waitLimit: MediaTime(value: 2, timescale: 1))
    }

    private func pixel(_ image: PNGImage, _ x: Int, _ y: Int) -> [UInt8] {
        let at = (y * image.width + x) * 3
        return Array(image.pixels[at..<(at + 3)])
    }

    func testASnapshot_composesEveryTileInItsPlace_atOneMasterTime() async throws {
        let frame = MediaTime(value: 2, timescale: 1)
        let wall = try await twoScreens(frameTimes: [frame, frame])
        let before = FakeNode.master()

        let snapshot = try await WallSnapshot.take(wall, scale: 0.5, lead: MediaTime(value: 1, timescale: 2))

        XCTAssertGreaterThanOrEqual(snapshot.at, before + MediaTime(value: 1, timescale: 2), "the lead ahead")
        XCTAssertEqual([snapshot.image.width, snapshot.image.height], [160, 45], "the 320x90 canvas at half scale")
        XCTAssertEqual(pixel(snapshot.image, 10, 10), [255, 0, 0], "a's tile on the left")
        XCTAssertEqual(pixel(snapshot.image, 79, 44), [255, 0, 0])
        XCTAssertEqual(pixel(snapshot.image, 80, 0), [0, 0, 255], "b's tile from x 80 (160 at full scale)")
        XCTAssertEqual(
            snapshot.image.text.map(\.keyword),
            ["Lockstep master time ns", "Lockstep frame a ns", "Lockstep frame b ns"])
        XCTAssertTrue(snapshot.summary.hasSuffix("one frame time on all 2 nodes"), snapshot.summary)
        XCTAssertTrue(
            snapshot.summary.contains("a: frame at 2.000 s in its item, copied 1.0 ms after"), snapshot.summary)
    }

    func testNodesOnDifferentFrames_areSaidToDiffer() async throws {
        let wall = try await twoScreens(frameTimes: [
            MediaTime(value: 2, timescale: 1), MediaTime(value: 3, timescale: 1),
        ])
        let snapshot = try await WallSnapshot.take(wall, scale: 0.25, lead: MediaTime(value: 1, timescale: 10))
        XCTAssertTrue(snapshot.summary.hasSuffix("2 different frame times across 2 nodes"), snapshot.summary)
    }

    func testThePNG_isSignatureHeaderTextDataEnd_andItsDataInflatesToTheRows() throws {
        var image = PNGImage(width: 3, height: 2)
        image.paste(Data([1, 2, 3, 4, 5, 6, 7, 8, 9]), width: 3, height: 1, at: 0, y: 1)
        image.text.append(("Comment", "hello"))
        let file = try image.encoded()

        XCTAssertEqual(Array(file.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var chunks: [(String, Data)] = []
        var offset = 8
        while offset + 12 <= file.count {
            let length = file[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: file[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append((type, Data(file[(offset + 8)..<(offset + 8 + length)])))
            offset += 12 + length
        }
        XCTAssertEqual(offset, file.count, "whole chunks, nothing after IEND")
        XCTAssertEqual(chunks.map(\.0), ["IHDR", "tEXt", "IDAT", "IEND"])
        XCTAssertEqual(Array(chunks[0].1), [0, 0, 0, 3, 0, 0, 0, 2, 8, 2, 0, 0, 0], "3x2, 8-bit RGB")
        XCTAssertEqual(chunks[1].1, Data("Comment".utf8) + Data([0]) + Data("hello".utf8))
        var rows = [UInt8](repeating: 0xFF, count: 2 * (1 + 9))
        var size = uLong(rows.count)
        let status = chunks[2].1.withUnsafeBytes { input in
            uncompress(&rows, &size, input.baseAddress!.assumingMemoryBound(to: Bytef.self), uLong(input.count))
        }
        XCTAssertEqual(status, Z_OK)
        XCTAssertEqual(rows, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "filter 0, then each row")
    }
}
