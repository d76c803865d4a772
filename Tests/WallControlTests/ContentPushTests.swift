import Foundation
import LockstepLocks
import LockstepTime
import WallContent
import WallProtocol
import WallTimeline
import XCTest

@testable import WallControl

/// A push's orchestration against fake nodes that fetch from the origin it serves: which files go,
/// to whom, named how, and what is left to the nodes' media roots.
final class ContentPushTests: FakeWallTestCase {
    private var folder: URL?

    override func tearDown() async throws {
        try await super.tearDown()
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// A file of `size` bytes that no other has, in a fresh folder.
    private func file(_ name: String, size: Int) throws -> String {
        let folder =
            self.folder
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // An MP4 file-type box first: a push refuses what does not begin as media.
        let box: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        bytes.replaceSubrange(0..<min(box.count, size), with: box.prefix(size))
        let path = folder.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func startWall() async throws -> Wall {
        try await startNodes(["a", "b"])
        return try wall(waitLimit: MediaTime(value: 5, timescale: 1))
    }

    func testAPush_sendsEachNodeWhatItLacks_namesEachNodesCopy_andLeavesTheRestToTheMediaRoots() async throws {
        let wall = try await startWall()
        let shared = try file("shared.mp4", size: 150_000)
        let tileA = try file("tile-a.mp4", size: 40_000)
        _ = try file("tile-b.mp4", size: 50_000)
        let tiles = tileA.replacingOccurrences(of: "tile-a", with: "tile-{id}")
        let sharedID = try ContentDigest.id(ofFileAt: shared)
        let tileIDs = try ["a", "b"].map {
            try ContentDigest.id(ofFileAt: tiles.replacingOccurrences(of: "{id}", with: $0))
        }
        nodes[0].hold([sharedID])
        let reports = Mutex<[[ContentControl.Progress]]>([])

        let push = ContentPush(wall: wall, origin: "127.0.0.1") { progress in reports.withLock { $0.append(progress) } }
        let distributed = try await push.distribute([shared, tiles, "/nowhere/else.mp4"])

        XCTAssertEqual(distributed[shared], ["a": sharedID, "b": sharedID], "one file, the same ID on every node")
        XCTAssertEqual(distributed[tiles], ["a": tileIDs[0], "b": tileIDs[1]], "each node its own tile's file")
        XCTAssertNil(distributed["/nowhere/else.mp4"], "a file not here is left to the nodes' media roots")
        XCTAssertEqual(nodes[0].held, [sharedID, tileIDs[0]])
        XCTAssertEqual(nodes[1].held, [sharedID, tileIDs[1]])
        XCTAssertEqual(nodes[0].downloaded, [tileIDs[0]], "what a node holds already is not sent again")
        XCTAssertEqual(Set(nodes[1].downloaded), [sharedID, tileIDs[1]])
        for node in nodes {
            XCTAssertEqual(
                node.fetches.first?.content.map(\.name).sorted(), [shared, tiles].sorted(),
                "node \(node.id) is named each file as the operator knows it")
        }
        XCTAssertEqual(reports.withLock { $0 }.last?.allSatisfy(\.done), true, "progress until every node holds it")
    }

    func testNoPush_sendsNothing_andNamesFilesByPathOnly() async throws {
        let wall = try await startWall()
        let shared = try file("shared.mp4", size: 10_000)

        let distributed = try await ContentPush(wall: wall, origin: "127.0.0.1", noPush: true).distribute([shared])

        XCTAssertEqual(distributed, [:])
        for node in nodes { XCTAssertEqual(node.fetches, [], "node \(node.id) was asked to fetch nothing") }
    }
}
