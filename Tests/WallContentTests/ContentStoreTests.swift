import AsyncHTTPClient
import Foundation
import Hummingbird
import LockstepGuard
import LockstepLocks
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

    func testCollection_removesWhatAPowerCutLeftOfAFileKeptWhole_evenWhenItIsNamed() throws {
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        let path = try file("whole", randomBytes(5000))
        let id = try ContentDigest.id(ofFileAt: path)
        try store.adopt(fileAt: path, as: id)
        // Its list and claims, left in partial/ by a power cut between the keeping and their removal.
        let partial = folder.appendingPathComponent("store/partial")
        for suffix in [".list", ".chunks"] {
            try Data("left".utf8).write(to: partial.appendingPathComponent(id.sha256 + suffix))
        }
        let deleted = store.collect(keeping: [id.sha256], grace: 3600)
        XCTAssertEqual(
            Set(deleted.map { URL(fileURLWithPath: $0).lastPathComponent }),
            [
                id.sha256 + ".list", id.sha256 + ".chunks",
            ])
        XCTAssertTrue(store.holds(id), "the whole file stays: it is named")
        // Found damaged, it is dropped (and fetched again by whatever names it); only by its SHA-256.
        XCTAssertFalse(store.discard(sha256: "../partial"))
        XCTAssertTrue(store.discard(sha256: id.sha256))
        XCTAssertFalse(store.holds(id))
        XCTAssertFalse(store.discard(sha256: id.sha256), "nothing left to drop")
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

    func testAnOrigin_servesChunksAndTheirList_toTheTokenHolderOnly() async throws {
        var generator = SystemRandomNumberGenerator()
        let words = (0..<((10 << 20) + 8) / 8).map { _ in generator.next() }
        let bytes = words.withUnsafeBytes { Array($0.prefix((10 << 20) + 5)) }
        let path = try file("source", bytes)
        let list = try ContentDigest.chunkList(ofFileAt: path)
        let id = list.id
        // No list given: the origin computes it the first time it is asked (a 503 meanwhile).
        let origin = ContentOrigin(files: [id: path], token: try ControlToken("secret-secret-secret"), limit: 1)
        let (port, serving) = try await origin.serveOnLoopback()
        defer { serving.cancel() }
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        func client(_ authorization: String?) -> NodeClient {
            NodeClient(
                id: "origin", base: "http://127.0.0.1:\(port)", wall: "w", http: http, authorization: authorization,
                timeout: MediaTime(value: 5, timescale: 1))
        }
        let holder = client("Bearer secret-secret-secret")
        var offer: ChunkOffer?
        for _ in 0..<2000 where offer == nil {
            switch try await holder.chunkOffer(id) {
            case .held(let held): offer = held
            case .busy: try await Task.sleep(for: .milliseconds(10))
            case .notHeld: XCTFail("the origin holds it")
            }
        }
        XCTAssertEqual(offer, ChunkOffer(list: list, have: nil), "the list it computed, every chunk served")

        // A transfer that had chunk 0 before it was cut takes the other two, and only them.
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        let partial = try PartialFile(store: store, list: list)
        XCTAssertTrue(try partial.write(0, Data(bytes[..<(4 << 20)])))
        for index in [1, 2] {
            let writer = try XCTUnwrap(try partial.receive(index))
            let outcome = try await holder.download(chunk: writer, of: list, pacer: nil) { _ in }
            XCTAssertEqual(outcome, .received)
            XCTAssertTrue(try writer.finish(), "chunk \(index) matches its SHA-256")
        }
        XCTAssertTrue(try partial.finish(into: store))
        XCTAssertTrue(store.holds(id))
        XCTAssertEqual(origin.server.bytesSent, id.size - (4 << 20), "only what was missing was sent")

        // Another file is not held there; without the token nothing is served.
        let other = try XCTUnwrap(ContentID(sha256: String(repeating: "b", count: 64), size: 10))
        let none = try await holder.chunkOffer(other)
        XCTAssertEqual(none, .notHeld)
        do {
            _ = try await client(nil).chunkOffer(id)
            XCTFail("served without the token")
        } catch {
            XCTAssertTrue("\(error)".contains("token"), "\(error)")
        }

        // Paced: a 4 MiB chunk at 20 MB/s takes about 0.21 s.
        let elsewhere = ContentStore(root: folder.appendingPathComponent("again").path)
        try elsewhere.prepare()
        let again = try PartialFile(store: elsewhere, list: list)
        let writer = try XCTUnwrap(try again.receive(0))
        let began = LocalClock.monotonic.now()
        _ = try await holder.download(chunk: writer, of: list, pacer: TransferPacer(bytesPerSecond: 20e6)) { _ in }
        XCTAssertGreaterThan((LocalClock.monotonic.now() - began).seconds, 0.18)
        XCTAssertTrue(try writer.finish())
        try await http.shutdown()
    }

    func testAFileStillArriving_servesOnlyTheRangesOfItsCheckedChunks() async throws {
        var generator = SystemRandomNumberGenerator()
        let words = (0..<((9 << 20) + 8) / 8).map { _ in generator.next() }
        let bytes = words.withUnsafeBytes { Array($0.prefix(9 << 20)) }
        let list = try ContentDigest.chunkList(ofFileAt: try file("source", bytes))
        let store = ContentStore(root: folder.appendingPathComponent("store").path)
        try store.prepare()
        let partial = try PartialFile(store: store, list: list)
        XCTAssertTrue(try partial.write(1, Data(bytes[(4 << 20)..<(8 << 20)])))
        let server = ContentServer(limit: 2, lookup: { _ in nil }) { $0 == list.id.sha256 ? partial : nil }
        let sha = list.id.sha256
        XCTAssertEqual(server.response(sha256: sha, range: "bytes=4194304-8388607").status, .partialContent)
        XCTAssertEqual(server.response(sha256: sha, range: "bytes=5000000-5000099").status, .partialContent)
        XCTAssertEqual(server.response(sha256: sha, range: "bytes=0-4194303").status, .notFound, "chunk 0 not held")
        XCTAssertEqual(server.response(sha256: sha, range: "bytes=4194304-").status, .notFound, "chunk 2 not held")
        XCTAssertEqual(server.response(sha256: sha, range: nil).status, .notFound, "never the whole file")
        XCTAssertEqual(server.response(sha256: sha, range: "bytes=20000000-").status, .rangeNotSatisfiable)
        XCTAssertEqual(server.response(sha256: sha, range: "bytes=9-5").status, .rangeNotSatisfiable)
        XCTAssertEqual(server.chunks(sha256: sha).status, .ok)
        XCTAssertEqual(server.chunks(sha256: sha, holdingsOnly: true).status, .ok)
        XCTAssertEqual(server.chunks(sha256: String(repeating: "c", count: 64)).status, .notFound)
        XCTAssertEqual(server.chunks(sha256: "../etc").status, .badRequest)
        XCTAssertEqual(
            server.response(sha256: sha, range: "bytes=4194304-18446744073709551615").status, .notFound,
            "a last byte past the end means the end, however far: chunk 2, not held")
        XCTAssertTrue(try partial.write(2, Data(bytes[(8 << 20)...])))
        XCTAssertEqual(
            server.response(sha256: sha, range: "bytes=4194304-18446744073709551615").status, .partialContent)
    }

    func testACompleteCopyThatNoLongerMatchesItsSHA256_isReportedDamaged_andNotListed() async throws {
        let path = try file("rotten", randomBytes(100_000))
        let id = try ContentDigest.id(ofFileAt: path)
        // Months later, a byte of it changed on the disk.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[5000] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: path))
        let reported = Mutex<[String]>([])
        let server = ContentServer(
            limit: 2, lookup: { $0 == id.sha256 ? (path, id.size) : nil },
            damaged: { sha256 in reported.withLock { $0.append(sha256) } })
        let deadline = LocalClock.monotonic.now() + MediaTime(value: 20, timescale: 1)
        while server.chunks(sha256: id.sha256).status == .serviceUnavailable, LocalClock.monotonic.now() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let answer = server.chunks(sha256: id.sha256)
        XCTAssertEqual(answer.status, .notFound, "no list is offered for a copy that is not the file")
        XCTAssertEqual(reported.withLock { $0 }, [id.sha256], "its holder is told, once")
    }

    func testACompleteFilesChunkList_isComputedOnce_offTheLoop_aBusyAnswerMeanwhile() async throws {
        var generator = SystemRandomNumberGenerator()
        let words = (0..<((5 << 20) + 8) / 8).map { _ in generator.next() }
        let path = try file("complete", words.withUnsafeBytes { Array($0.prefix(5 << 20)) })
        let list = try ContentDigest.chunkList(ofFileAt: path)
        let server = ContentServer(limit: 2, lookup: { $0 == list.id.sha256 ? (path, list.id.size) : nil })
        let sha = list.id.sha256
        XCTAssertEqual(server.chunks(sha256: sha).status, .serviceUnavailable, "computing")
        let deadline = LocalClock.monotonic.now() + MediaTime(value: 20, timescale: 1)
        while server.chunks(sha256: sha).status != .ok, LocalClock.monotonic.now() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(server.chunks(sha256: sha).status, .ok)
    }
}
