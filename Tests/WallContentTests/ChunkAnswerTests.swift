import AsyncHTTPClient
import Foundation
import LockstepLocks
import LockstepTime
import NIOPosix
import TestSupport
import WallContent
import WallControl
import WallTimeline
import XCTest

/// What a source says about a file is checked before it steers a fetch.
final class ChunkAnswerTests: XCTestCase {
    func testASourceSayingItReceivesMoreThanANodeCan_isRefused_andA404OfItsOwnSaysSo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-answers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let id = try XCTUnwrap(ContentID(sha256: String(repeating: "a", count: 64), size: 100 << 20))
        let list = try ChunkList(id: id, digests: Array(repeating: String(repeating: "b", count: 64), count: 25))
        var honest = ChunkSet(count: 25)
        for chunk in 0..<4 { honest.insert(chunk) }
        // One source says it is receiving every chunk: were it believed, no node would ask the
        // origin for any of them, and the wall would wait for it forever.
        let answers = Mutex<[String: Data]>([
            "offer": try JSONEncoder().encode(ChunkOffer(list: list, have: ChunkSet(count: 25), receiving: honest)),
            "holding": try JSONEncoder().encode(
                ChunkHolding(list: list.fingerprint, have: ChunkSet(count: 25), receiving: honest)),
        ])
        let server = try HTTPFileServer(root: folder) { path in
            guard path == "/content/\(id.sha256)/chunks" else { return nil }
            return answers.withLock { ($0["offer"]!, "application/json") }
        }
        defer { server.stop() }
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        let client = NodeClient(
            id: "peer", base: "http://127.0.0.1:\(server.port)", wall: "w", http: http, authorization: nil,
            timeout: MediaTime(value: 5, timescale: 1))
        let taken = try await client.chunkOffer(id)
        XCTAssertEqual(taken, .held(ChunkOffer(list: list, have: ChunkSet(count: 25), receiving: honest)))

        try answers.withLock {
            $0["offer"] = try JSONEncoder().encode(
                ChunkOffer(list: list, have: ChunkSet(count: 25), receiving: ChunkSet(count: 25, full: true)))
        }
        do {
            _ = try await client.chunkOffer(id)
            XCTFail("a source receiving all 25 chunks at once was believed")
        } catch {
            XCTAssertTrue("\(error)".contains("receiving 25 chunks"), "\(error)")
        }

        // A server without chunk lists (a release before them) answers 404 of its own: it is not
        // taken for a source that holds nothing.
        let other = try XCTUnwrap(ContentID(sha256: String(repeating: "c", count: 64), size: 10))
        do {
            _ = try await client.chunkOffer(other)
            XCTFail("a 404 that is not a content server's was taken as 'not held'")
        } catch {
            XCTAssertTrue("\(error)".contains("serves no chunk lists"), "\(error)")
        }
        try await http.shutdown()
    }
}
