import AsyncHTTPClient
import Foundation
import Hummingbird
import LockstepLocks
import LockstepTime
import Logging
import NIOCore
import NIOPosix
import NodeService
import WallContent
import WallControl
import WallProtocol
import WallTimeline
import XCTest

/// Nodes' content fetchers in one process, each behind a real HTTP server as a node serves its
/// peers, with an origin: chunks verified, spread between the nodes, damage and no room each kept to
/// the file and the source they concern.
final class NodeContentTests: XCTestCase {
    private var folder: URL!
    private var http: HTTPClient!
    private var tasks: [Task<Void, Never>] = []

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-nodecontent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
    }

    override func tearDown() async throws {
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        tasks = []
        try await http.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }

    private func randomFile(_ name: String, bytes count: Int) throws -> (path: String, list: ChunkList) {
        var generator = SystemRandomNumberGenerator()
        let words = (0..<(count + 8) / 8).map { _ in generator.next() }
        let path = folder.appendingPathComponent(name).path
        try words.withUnsafeBytes { Data($0.prefix(count)) }.write(to: URL(fileURLWithPath: path))
        return (path, try ContentDigest.chunkList(ofFileAt: path))
    }

    /// Serves `router` on a free port until the test ends; returns its base URL.
    private func serve(_ router: Router<BasicRequestContext>) async throws -> String {
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "test.server", factory: { _ in SwiftLogNoOpLogHandler() }))
        tasks.append(Task { try? await application.run() })
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next()
        return "http://127.0.0.1:\(try XCTUnwrap(port))"
    }

    /// A node's content routes, as its control server has them.
    private func routes(of content: NodeContent) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/content/:sha256") { request, context in
            content.server.response(sha256: context.parameters.get("sha256") ?? "", range: request.headers[.range])
        }
        router.get("/content/:sha256/chunks") { request, context in
            content.server.chunks(
                sha256: context.parameters.get("sha256") ?? "",
                holdingsOnly: request.uri.queryParameters.get("have") != nil)
        }
        return router
    }

    private func client(_ id: String, _ base: String) -> NodeClient {
        NodeClient(id: id, base: base, wall: "w", http: http, timeout: MediaTime(value: 5, timescale: 1))
    }

    /// The clients a node makes for the origins it is told of.
    private var factory: NodeClientFactory {
        let http = self.http!
        return NodeClientFactory { base in
            NodeClient(id: base, base: base, wall: "w", http: http, timeout: MediaTime(value: 5, timescale: 1))
        }
    }

    private struct Node {
        let content: NodeContent
        let base: String
    }

    private func nodes(_ count: Int, bytesPerSecond: Double? = nil, reserve: (Int) -> UInt64 = { _ in 0 }) async throws
        -> [Node]
    {
        var nodes: [Node] = []
        for index in 0..<count {
            let store = ContentStore(root: folder.appendingPathComponent("node\(index)").path, reserve: reserve(index))
            let content = NodeContent(
                store: store, nodeID: "n\(index)", bytesPerSecond: bytesPerSecond,
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            nodes.append(Node(content: content, base: try await serve(routes(of: content))))
        }
        return nodes
    }

    /// Starts every node's fetcher, each with the others as its peers, wanting `files` from `origins`.
    private func start(_ nodes: [Node], wanting files: [ChunkList], origins: [String]) throws {
        let factory = self.factory
        for (index, node) in nodes.enumerated() {
            let peers = nodes.enumerated().filter { $0.offset != index }.map {
                client("n\($0.offset)", $0.element.base)
            }
            try node.content.want(
                ContentFetchRequest(
                    content: files.enumerated().map { ContentNeed(id: $0.element.id, name: "file\($0.offset).mp4") },
                    origins: origins))
            tasks.append(Task { [factory] in await node.content.run(timeline: { nil }, peers: peers, http: factory) })
        }
    }

    /// Waits (at most `seconds`) until `condition` holds, checking every 20 ms.
    private func eventually(within seconds: Double, _ what: String, _ condition: () -> Bool) async throws {
        let deadline = LocalClock.monotonic.now() + MediaTime(seconds: seconds, preferredTimescale: 1000)
        while !condition() {
            guard LocalClock.monotonic.now() < deadline else { return XCTFail("not within \(seconds) s: \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func testThreeNodes_takeAFileFromEachOther_theOriginSendingItAboutOnce() async throws {
        let file = try randomFile("clip", bytes: 40 << 20)
        let origin = ContentOrigin(files: [file.list.id: file.path], token: nil)
        let originBase = try await serve(origin.router())
        // Each node takes at most 10 MB/s, as a link would let it: 4 s for the file, time enough
        // for the nodes to see what the others hold (loopback alone would give each a whole copy
        // from the origin before the first look).
        let wall = try await nodes(3, bytesPerSecond: 10e6)
        try start(wall, wanting: [file.list], origins: [originBase])

        try await eventually(within: 60, "every node holds the file") {
            wall.allSatisfy { $0.content.store.holds(file.list.id) }
        }
        for node in wall {
            let kept = try XCTUnwrap(node.content.store.path(of: file.list.id))
            XCTAssertEqual(try ContentDigest.id(ofFileAt: kept), file.list.id)
        }
        let fromOrigin = Double(origin.server.bytesSent) / Double(file.list.id.size)
        let fromPeers = wall.map { Double($0.content.server.bytesSent) / Double(file.list.id.size) }
        print("node content: the origin sent \(fromOrigin)x the file; the peers \(fromPeers)")
        XCTAssertLessThan(fromOrigin, 2, "three copies, the origin's uplink carrying under two")
        XCTAssertGreaterThan(fromPeers.reduce(0, +), 1, "the nodes sent each other more than a copy")
        XCTAssertGreaterThanOrEqual(fromPeers.count(where: { $0 > 0 }), 2, "chunks went both ways: \(fromPeers)")
    }

    func testAFileWithNoRoom_holdsUpNoOtherFile_andSaysWhy() async throws {
        // A file of 1 TiB as the origin lists it (no node has room for it: its room is set aside
        // before its first chunk), and a small one.
        let huge = try XCTUnwrap(ContentID(sha256: String(repeating: "d", count: 64), size: ContentID.largestSize))
        let hugeList = try ChunkList(
            id: huge,
            digests: Array(repeating: String(repeating: "0", count: 64), count: ChunkList.count(forFileOf: huge.size)))
        let small = try randomFile("small", bytes: 300_000)
        let origin = ContentOrigin(
            files: [huge: small.path, small.list.id: small.path], lists: [hugeList, small.list], token: nil)
        let originBase = try await serve(origin.router())
        let probe = ContentStore(root: folder.appendingPathComponent("node0").path, reserve: 0)
        try probe.prepare()
        let free = try XCTUnwrap(probe.freeBytes())
        // Room for the small file (100 MiB), not the huge one, whatever the order they are fetched in.
        let wall = try await nodes(1) { _ in free - (100 << 20) }
        try start(wall, wanting: [hugeList, small.list], origins: [originBase])

        try await eventually(within: 30, "the small file arrives") { wall[0].content.store.holds(small.list.id) }
        try await eventually(within: 30, "the huge one's transfer says why it waits") {
            wall[0].content.report().transfers.first { $0.id == huge }?.problem?.contains("no room") == true
        }
        let problem = wall[0].content.report().transfers.first { $0.id == huge }?.problem ?? ""
        XCTAssertTrue(problem.hasPrefix("file0.mp4: "), "names the operator's file: \(problem)")
        XCTAssertTrue(problem.contains("more bytes needed"), problem)
        XCTAssertFalse(wall[0].content.store.holds(huge))
    }

    func testADamagedChunk_isRefusedAndBlamedOnItsSenderOnly_theFileArrivingFromAnother() async throws {
        let file = try randomFile("clip", bytes: 9 << 20)
        let origin = ContentOrigin(files: [file.list.id: file.path], token: nil)
        let originBase = try await serve(origin.router())
        // A peer that offers every chunk and sends each with one byte changed.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file.path))
        let bad = Router()
        let damagedRequests = ManagedCounter()
        bad.get("/content/:sha256/chunks") { request, _ -> Response in
            let body =
                request.uri.queryParameters.get("have") != nil
                ? try JSONEncoder().encode(ChunkHolding(list: file.list.fingerprint, have: nil))
                : try JSONEncoder().encode(ChunkOffer(list: file.list, have: nil))
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        bad.get("/content/:sha256") { request, _ -> Response in
            damagedRequests.add()
            let parts = (request.headers[.range] ?? "").dropFirst(6).split(separator: "-").compactMap { Int($0) }
            guard parts.count == 2 else { return Response(status: .badRequest) }
            var piece = bytes[parts[0]...parts[1]]
            piece[piece.startIndex] ^= 0xff
            return Response(status: .partialContent, body: ResponseBody(byteBuffer: ByteBuffer(bytes: piece)))
        }
        let badBase = try await serve(bad)
        let store = ContentStore(root: folder.appendingPathComponent("node0").path, reserve: 0)
        let content = NodeContent(
            store: store, nodeID: "n0", logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try content.want(
            ContentFetchRequest(content: [ContentNeed(id: file.list.id, name: "clip.mp4")], origins: [originBase]))
        let factory = self.factory
        let peers = [client("bad", badBase)]
        tasks.append(Task { await content.run(timeline: { nil }, peers: peers, http: factory) })

        try await eventually(within: 30, "the file arrives from the origin") { store.holds(file.list.id) }
        XCTAssertGreaterThan(damagedRequests.value, 0, "the peer was asked first, as the faster-looking source")
        XCTAssertEqual(origin.server.bytesSent, file.list.id.size, "the origin sent each chunk once")
        let kept = try XCTUnwrap(store.path(of: file.list.id))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: kept)), bytes)
    }
}

/// A count shared with a server's handlers.
private final class ManagedCounter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
