import AsyncHTTPClient
import Foundation
import LockstepGuard
import LockstepTime
import NIOPosix
import WallContent
import WallControl
import WallTimeline
import XCTest

final class ContentStoreTests: XCTestCase {
    private var folder: URL!

    override func setUp() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-content-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder)
    }

    private func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    private func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    func testDigest_isSHA256_asSha256sumPrintsIt() throws {
        let id = try ContentDigest.id(ofFileAt: try file("abc", Array("abc".utf8)))
        XCTAssertEqual(id.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(id.size, 3)
        let empty = try ContentDigest.id(ofFileAt: try file("empty", []))
        XCTAssertEqual(empty.sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertNil(ContentID(sha256: "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", size: 3))
        XCTAssertNil(ContentID(sha256: "../../etc/passwd", size: 3))
    }

    func testATransfer_cutAndResumed_isKeptOnlyWhenItsDigestMatches() throws {
        let bytes = randomBytes(300_000)
        let id = try ContentDigest.id(ofFileAt: try file("source", bytes))
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        var handle = try store.appending(to: id)
        try handle.write(contentsOf: Data(bytes[..<100_000]))
        try handle.close()
        XCTAssertEqual(store.partialSize(of: id), 100_000)
        XCTAssertThrowsError(try store.commit(id), "not whole yet")
        XCTAssertNil(store.path(of: id))
        // Resumed where it stopped.
        handle = try store.appending(to: id)
        try handle.write(contentsOf: Data(bytes[100_000...]))
        try handle.close()
        try store.commit(id)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(store.path(of: id)))), Data(bytes))
        XCTAssertEqual(store.holdings(), [id])
        XCTAssertEqual(store.partialSize(of: id), 0)
    }

    func testADamagedTransfer_isDeleted_neverKept() throws {
        var bytes = randomBytes(50_000)
        let id = try ContentDigest.id(ofFileAt: try file("source", bytes))
        bytes[25_000] ^= 0xFF
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        let handle = try store.appending(to: id)
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
        XCTAssertThrowsError(try store.commit(id)) { error in
            guard case ContentError.corrupt = error else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(store.holds(id))
        XCTAssertEqual(store.partialSize(of: id), 0, "the damaged file is gone: the next transfer starts over")
        // A partial file longer than the file is refused as well.
        let long = try store.appending(to: id)
        try long.write(contentsOf: Data(bytes + [0]))
        try long.close()
        XCTAssertThrowsError(try store.appending(to: id))
        XCTAssertEqual(store.partialSize(of: id), 0)
    }

    func testAFileThatDoesNotFit_isRefusedBeforeATransfer() throws {
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        let huge = try XCTUnwrap(ContentID(sha256: String(repeating: "a", count: 64), size: ContentID.largestSize))
        XCTAssertThrowsError(try store.appending(to: huge)) { error in
            guard case ContentError.noSpace = error else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".contains("free"), "\(error)")
        }
    }

    func testTheReserve_isNeverTaken_soTheTimelineAlwaysFindsRoom() throws {
        let root = folder.appendingPathComponent("reserved").path
        let probe = ContentStore(root: root, reserve: 0)
        try probe.prepare()
        let free = try XCTUnwrap(probe.freeBytes())
        // A reserve of all but a megabyte of what is free: a 2 MB file would fit the disk, not the store.
        let store = ContentStore(root: root, reserve: free - 1_000_000)
        XCTAssertLessThanOrEqual(try XCTUnwrap(store.freeBytes()), 1_000_000 + 100_000)
        let file = try XCTUnwrap(ContentID(sha256: String(repeating: "b", count: 64), size: 2_000_000))
        XCTAssertThrowsError(try store.appending(to: file)) { error in
            guard case ContentError.noSpace = error else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try probe.appending(to: file).close(), "without the reserve it fits")
        XCTAssertEqual(ContentStore(root: root).reserve, ContentStore.defaultReserve)
    }

    func testCollection_keepsWhatIsNamed_andWhatWasWantedWithinTheGrace() throws {
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        var ids: [ContentID] = []
        for index in 0..<3 {
            let path = try file("f\(index)", randomBytes(1000 + index))
            let id = try ContentDigest.id(ofFileAt: path)
            try store.adopt(fileAt: path, as: id)
            ids.append(id)
        }
        XCTAssertEqual(Set(store.holdings()), Set(ids))
        XCTAssertTrue(store.collect(keeping: [], grace: 3600).isEmpty, "all wanted within the grace")
        let later = Date().addingTimeInterval(7200)
        let deleted = store.collect(keeping: [ids[0].sha256], grace: 3600, now: later)
        XCTAssertEqual(deleted.count, 2)
        XCTAssertEqual(store.holdings(), [ids[0]])
    }

    func testAnOrigin_servesWholeFilesWithRanges_toTheTokenHolderOnly() async throws {
        let bytes = randomBytes(700_000)
        let path = try file("source", bytes)
        let id = try ContentDigest.id(ofFileAt: path)
        let origin = ContentOrigin(files: [id: path], token: try ControlToken("secret-secret-secret"), limit: 1)
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let serving = Task { try await origin.run(host: "127.0.0.1", port: 0) { bound.yield($0) } }
        defer { serving.cancel() }
        var iterator = ports.makeAsyncIterator()
        let next = await iterator.next()
        let port = try XCTUnwrap(next)
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        func client(_ authorization: String?) -> NodeClient {
            NodeClient(
                id: "origin", base: "http://127.0.0.1:\(port)", wall: "w", http: http, authorization: authorization,
                timeout: MediaTime(value: 5, timescale: 1))
        }
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        // A transfer cut after 200 000 bytes, then resumed from there.
        var handle = try store.appending(to: id)
        try handle.write(contentsOf: Data(bytes[..<200_000]))
        try handle.close()
        handle = try store.appending(to: id)
        let outcome = try await client("Bearer secret-secret-secret").download(
            id, from: store.partialSize(of: id), to: handle, bytesPerSecond: nil
        ) { _ in }
        try handle.close()
        XCTAssertEqual(outcome, .complete)
        try store.commit(id)
        XCTAssertEqual(origin.server.bytesSent, 500_000, "only what was missing was sent")
        // Another file is not held there; without the token nothing is served.
        let other = try XCTUnwrap(ContentID(sha256: String(repeating: "b", count: 64), size: 10))
        let sink = try FileHandle(forWritingTo: URL(fileURLWithPath: try file("sink", [])))
        let notHeld = try await client("Bearer secret-secret-secret").download(
            other, from: 0, to: sink, bytesPerSecond: nil
        ) { _ in }
        XCTAssertEqual(notHeld, .notHeld)
        do {
            _ = try await client(nil).download(id, from: 0, to: sink, bytesPerSecond: nil) { _ in }
            XCTFail("served without the token")
        } catch {
            XCTAssertTrue("\(error)".contains("token"), "\(error)")
        }
        // Paced: 300 000 bytes at 1 MB/s take about 0.3 s.
        let paced = try FileHandle(forWritingTo: URL(fileURLWithPath: try file("paced", [])))
        let began = LocalClock.monotonic.now()
        _ = try await client("Bearer secret-secret-secret").download(id, from: 400_000, to: paced, bytesPerSecond: 1e6)
        { _ in }
        XCTAssertGreaterThan((LocalClock.monotonic.now() - began).seconds, 0.25)
        try await http.shutdown()
    }
}
