import Foundation
import WallContent
import WallTimeline
import XCTest

final class ChunkListTests: XCTestCase {
    private let mebibyte: UInt64 = 1 << 20
    private let gibibyte: UInt64 = 1 << 30

    private func id(size: UInt64) -> ContentID {
        ContentID(sha256: String(repeating: "ab", count: 32), size: size)!
    }

    private func digests(_ count: Int) -> [String] {
        (0..<count).map { String(format: "%064lx", $0) }
    }

    func testChunkSize_isFourMebibytes_doubledUntilTheFileIsAtMost65536Chunks() {
        XCTAssertEqual(ChunkList.chunkSize(forFileOf: 0), 4 * mebibyte)
        XCTAssertEqual(ChunkList.count(forFileOf: 0), 0)
        XCTAssertEqual(ChunkList.count(forFileOf: 1), 1)
        XCTAssertEqual(ChunkList.count(forFileOf: 4 * mebibyte), 1)
        XCTAssertEqual(ChunkList.count(forFileOf: 4 * mebibyte + 1), 2)
        XCTAssertEqual(ChunkList.count(forFileOf: gibibyte), 256)
        XCTAssertEqual(ChunkList.chunkSize(forFileOf: 256 * gibibyte), 4 * mebibyte)
        XCTAssertEqual(ChunkList.count(forFileOf: 256 * gibibyte), 65536)
        XCTAssertEqual(ChunkList.chunkSize(forFileOf: 256 * gibibyte + 1), 8 * mebibyte)
        XCTAssertEqual(ChunkList.chunkSize(forFileOf: ContentID.largestSize), 16 * mebibyte)
        XCTAssertEqual(ChunkList.count(forFileOf: ContentID.largestSize), 65536)
    }

    func testRanges_cutTheFileWithAShortLastChunk() throws {
        let list = try ChunkList(id: id(size: 10 * mebibyte + 5), digests: digests(3))
        XCTAssertEqual(list.range(of: 0), 0..<4 * mebibyte)
        XCTAssertEqual(list.range(of: 2), 8 * mebibyte..<10 * mebibyte + 5)
        XCTAssertEqual(list.chunks(covering: 0..<1), 0..<1)
        XCTAssertEqual(list.chunks(covering: 4 * mebibyte - 1..<4 * mebibyte + 1), 0..<2)
        XCTAssertEqual(list.chunks(covering: 5 * mebibyte..<20 * mebibyte), 1..<3)
        XCTAssertEqual(list.chunks(covering: 3..<3), 0..<0)
    }

    func testAList_whoseCountOrDigestsDoNotFitItsFile_isRefusedWithAReason() {
        XCTAssertThrowsError(try ChunkList(id: id(size: 5 * mebibyte), digests: digests(1))) { error in
            XCTAssertTrue("\(error)".contains("1 chunks where its size makes 2"), "\(error)")
        }
        XCTAssertThrowsError(try ChunkList(id: id(size: 1), digests: ["not a digest"])) { error in
            XCTAssertTrue("\(error)".contains("not a SHA-256"), "\(error)")
        }
    }

    func testJSON_roundTrips_andAnotherChunkSizeIsRefused() throws {
        let list = try ChunkList(id: id(size: 9 * mebibyte), digests: digests(3))
        let data = try JSONEncoder().encode(list)
        XCTAssertEqual(try JSONDecoder().decode(ChunkList.self, from: data), list)
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["chunkSize"] = 1 << 20
        XCTAssertThrowsError(
            try JSONDecoder().decode(ChunkList.self, from: JSONSerialization.data(withJSONObject: object))
        ) { error in
            XCTAssertTrue("\(error)".contains("cut in chunks of 4194304"), "\(error)")
        }
        object["chunkSize"] = nil
        object["digests"] = digests(2)
        XCTAssertThrowsError(
            try JSONDecoder().decode(ChunkList.self, from: JSONSerialization.data(withJSONObject: object)))
    }

    func testTheListOfAFile_isTheSHA256OfEachChunk_fromOneReading() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-chunks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = SystemRandomNumberGenerator()
        let words = (0..<(8 * mebibyte + 104) / 8).map { _ in generator.next() }
        let bytes = words.withUnsafeBytes { Data($0.prefix(Int(8 * mebibyte + 100))) }
        let path = folder.appendingPathComponent("file").path
        try bytes.write(to: URL(fileURLWithPath: path))

        let list = try ContentDigest.chunkList(ofFileAt: path)
        XCTAssertEqual(list.id, try ContentDigest.id(ofFileAt: path))
        XCTAssertEqual(list.count, 3)
        for index in 0..<list.count {
            let range = list.range(of: index)
            XCTAssertEqual(
                list.digests[index], try ContentDigest.sha256(of: bytes[Int(range.lowerBound)..<Int(range.upperBound)]),
                "chunk \(index)")
        }
        XCTAssertEqual(try ContentDigest.sha256(of: bytes), list.id.sha256)

        let empty = folder.appendingPathComponent("empty").path
        try Data().write(to: URL(fileURLWithPath: empty))
        XCTAssertEqual(try ContentDigest.chunkList(ofFileAt: empty).count, 0)
    }

    func testChunkSets_countAndCodeTheirChunksAsHex() throws {
        var set = ChunkSet(count: 70)
        XCTAssertTrue(set.isEmpty)
        for chunk in [0, 3, 64, 69] { set.insert(chunk) }
        set.insert(70)
        set.insert(-1)
        XCTAssertEqual(set.members, [0, 3, 64, 69])
        XCTAssertEqual(set.cardinality, 4)
        XCTAssertFalse(set.contains(70))
        set.remove(3)
        XCTAssertEqual(set.members, [0, 64, 69])
        XCTAssertEqual(set.hex.count, 18)
        XCTAssertTrue(set.hex.hasPrefix("80000000000000008"), set.hex)
        XCTAssertEqual(ChunkSet(count: 70, hex: set.hex), set)
        XCTAssertEqual(try JSONDecoder().decode(ChunkSet.self, from: JSONEncoder().encode(set)), set)
        XCTAssertTrue(ChunkSet(count: 5, full: true).isFull)
        XCTAssertEqual(ChunkSet(count: 5, full: true).hex, "f8")

        XCTAssertNil(ChunkSet(count: 5, hex: "f"), "too short")
        XCTAssertNil(ChunkSet(count: 5, hex: "fc"), "a chunk past the last")
        XCTAssertNil(ChunkSet(count: 5, hex: "F8"), "not lowercase hex")
        XCTAssertThrowsError(
            try JSONDecoder().decode(ChunkSet.self, from: Data(#"{"count": 100000, "chunks": ""}"#.utf8)))
        // A count from a peer that would overflow any arithmetic on it: refused, not a crash.
        XCTAssertNil(ChunkSet(count: Int.max, hex: ""))
        XCTAssertNil(ChunkSet(count: -1, hex: ""))
        for count in [Int.max, Int.min, -1] {
            XCTAssertThrowsError(
                try JSONDecoder().decode(ChunkSet.self, from: Data(#"{"count": \#(count), "chunks": ""}"#.utf8))
            ) { error in
                XCTAssertTrue("\(error)".contains("a file has 0 to 65536"), "\(error)")
            }
        }
    }
}
