import Foundation
import WallContent
import WallTimeline
import XCTest

final class PartialFileTests: XCTestCase {
    private var folder: URL!
    private var store: ContentStore!
    /// 10 MiB and 5 bytes: three chunks, the last one short.
    private var bytes = Data()
    private var list: ChunkList!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-partial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = ContentStore(root: folder.appendingPathComponent("store").path, reserve: 0)
        try store.prepare()
        var generator = SystemRandomNumberGenerator()
        let words = (0..<((10 << 20) + 8) / 8).map { _ in generator.next() }
        bytes = words.withUnsafeBytes { Data($0.prefix((10 << 20) + 5)) }
        let source = folder.appendingPathComponent("source").path
        try bytes.write(to: URL(fileURLWithPath: source))
        list = try ContentDigest.chunkList(ofFileAt: source)
        XCTAssertEqual(list.count, 3)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder)
    }

    private func chunk(_ index: Int, of data: Data? = nil) -> Data {
        let range = list.range(of: index)
        return (data ?? bytes)[Int(range.lowerBound)..<Int(range.upperBound)]
    }

    private var partialPath: String { store.root + "/partial/" + list.id.sha256 }

    func testAChunk_isWrittenOnlyWhenItMatchesTheList_andServedOnlyOnceWritten() throws {
        let partial = try PartialFile(store: store, list: list)
        XCTAssertTrue(partial.have.isEmpty)
        XCTAssertEqual(ContentStore.size(of: partialPath), list.id.size, "the whole size set aside at once")
        var damaged = chunk(1)
        damaged[damaged.startIndex + 7] ^= 0xff
        XCTAssertFalse(try partial.write(1, damaged))
        XCTAssertFalse(try partial.write(1, chunk(2)), "another chunk's bytes")
        XCTAssertFalse(try partial.write(3, chunk(2)), "a chunk past the last")
        XCTAssertTrue(partial.have.isEmpty)
        XCTAssertTrue(try partial.write(1, chunk(1)))
        XCTAssertEqual(partial.have.members, [1])
        XCTAssertEqual(partial.haveBytes, 4 << 20)
        XCTAssertTrue(partial.holds(list.range(of: 1)))
        XCTAssertTrue(partial.holds((4 << 20) + 10..<(5 << 20)))
        XCTAssertFalse(partial.holds(0..<(5 << 20)), "chunk 0 is not written")
        XCTAssertFalse(partial.holds(list.range(of: 2)))
    }

    func testOpenedAgain_theWrittenChunksAreReadBack_andDamageInTheNodesOwnFileIsFetchedAgain() throws {
        do {
            let partial = try PartialFile(store: store, list: list)
            XCTAssertTrue(try partial.write(0, chunk(0)))
            XCTAssertTrue(try partial.write(2, chunk(2)))
        }
        XCTAssertEqual(PartialFile.storedList(of: list.id, in: store), list)
        XCTAssertEqual(try PartialFile(store: store, list: list).have.members, [0, 2])

        // A byte of chunk 2 changes on the disk: that chunk no longer counts; chunk 0 still does.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: partialPath))
        try handle.seek(toOffset: list.range(of: 2).lowerBound + 3)
        try handle.write(contentsOf: Data([~bytes[Int(list.range(of: 2).lowerBound) + 3]]))
        try handle.close()
        XCTAssertEqual(try PartialFile(store: store, list: list).have.members, [0])
    }

    func testAPartialFileFromBeforeChunks_keepsEveryWholeChunkItHolds() throws {
        try bytes.prefix((5 << 20)).write(to: URL(fileURLWithPath: partialPath))
        let partial = try PartialFile(store: store, list: list)
        XCTAssertEqual(partial.have.members, [0], "chunk 0 whole, chunk 1 cut")
    }

    func testEveryChunkWritten_theFileIsKeptOnceItsSHA256Matches() throws {
        let partial = try PartialFile(store: store, list: list)
        XCTAssertThrowsError(try partial.finish(into: store)) { error in
            XCTAssertTrue("\(error)".contains("not whole yet"), "\(error)")
        }
        for index in [2, 0, 1] { XCTAssertTrue(try partial.write(index, chunk(index))) }
        XCTAssertTrue(try partial.finish(into: store))
        let kept = try XCTUnwrap(store.path(of: list.id))
        XCTAssertEqual(FileManager.default.contents(atPath: kept), bytes)
        let left = try FileManager.default.contentsOfDirectory(atPath: store.root + "/partial")
        XCTAssertEqual(left, [], "the list and the claims go with the partial file")
    }

    func testAChunkDamagedOnThisDisk_beforeTheFileIsKept_isFetchedAgain_blamingNoOne() throws {
        let partial = try PartialFile(store: store, list: list)
        for index in 0..<3 { XCTAssertTrue(try partial.write(index, chunk(index))) }
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: partialPath))
        try handle.seek(toOffset: list.range(of: 1).lowerBound + 9)
        try handle.write(contentsOf: Data([~bytes[Int(list.range(of: 1).lowerBound) + 9]]))
        try handle.close()
        XCTAssertFalse(try partial.finish(into: store), "not kept: a chunk no longer matches")
        XCTAssertEqual(partial.have.members, [0, 2], "only the damaged chunk is unclaimed")
        XCTAssertFalse(store.holds(list.id))
        XCTAssertTrue(try partial.write(1, chunk(1)))
        XCTAssertTrue(try partial.finish(into: store))
        XCTAssertEqual(FileManager.default.contents(atPath: try XCTUnwrap(store.path(of: list.id))), bytes)
    }

    func testAListThatDoesNotDescribeTheFile_isThrownAwayWithIt() throws {
        // Every chunk matches this list, but the list is another file's under this file's ID.
        var other = bytes
        other[other.startIndex] ^= 0xff
        let wrong = try ChunkList(
            id: list.id,
            digests: (0..<3).map { index in try ContentDigest.sha256(of: chunk(index, of: other)) })
        let partial = try PartialFile(store: store, list: wrong)
        for index in 0..<3 { XCTAssertTrue(try partial.write(index, chunk(index, of: other))) }
        XCTAssertThrowsError(try partial.finish(into: store)) { error in
            guard case ContentError.corrupt = error else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(store.holds(list.id))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.root + "/partial"), [])
    }

    func testNoRoom_isRefusedAtOnce_withTheBytesNeeded() throws {
        let full = ContentStore(root: store.root, reserve: UInt64.max / 2)
        XCTAssertThrowsError(try PartialFile(store: full, list: list)) { error in
            guard case ContentError.noSpace(let id, let needed, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(id, list.id)
            XCTAssertEqual(needed, list.id.size)
        }
    }

    func testAPartialFileLongerThanItsFile_isDeletedAndFetchedAgain() throws {
        try (bytes + Data([1, 2, 3])).write(to: URL(fileURLWithPath: partialPath))
        XCTAssertThrowsError(try PartialFile(store: store, list: list)) { error in
            XCTAssertTrue("\(error)".contains("longer than the file"), "\(error)")
        }
        XCTAssertNil(ContentStore.size(of: partialPath))
    }

    func testCollecting_keepsAWantedPartialFilesListAndClaims() throws {
        let partial = try PartialFile(store: store, list: list)
        XCTAssertTrue(try partial.write(0, chunk(0)))
        let later = Date().addingTimeInterval(3600)
        XCTAssertEqual(store.collect(keeping: [list.id.sha256], grace: 60, now: later), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.root + "/partial").count, 3)
        XCTAssertEqual(store.collect(keeping: [], grace: 60, now: later).count, 3)
    }
}
