import Foundation
import TestSupport
import XCTest

/// Content the wall distributes itself, tried on four nodes as a site would: `wallctl push` from the
/// controller, nodes fetching from each other before the origin, a node killed mid-transfer and
/// resuming, a damaged copy on a peer refused and fetched again elsewhere, a node whose disk is too
/// small saying so, and a clip pushed and played from the nodes' stores with nothing copied by hand.
final class ContentWallTests: XCTestCase {
    private let ids = ["n0", "n1", "n2", "n3"]
    private let masterPort = 15691
    private let firstControlPort = 17801
    /// Bytes per second each node fetches at: slow enough to see a transfer under way.
    private let bandwidth = 8_000_000

    func testPush_peersResumeAndRefuseDamage_thenAPushedClipPlays() async throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-content-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The media roots hold the config's clip only; what is pushed comes from elsewhere.
        let roots = folder.appendingPathComponent("media")
        let controller = folder.appendingPathComponent("controller")
        for dir in [roots, controller] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        let clip = roots.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 4), to: clip)
        let pushedClip = controller.appendingPathComponent("pushed.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 6), to: pushedClip)
        let big = controller.appendingPathComponent("big.bin")
        try TestMedia.payload(count: 24_000_000).write(to: big)
        let state = folder.appendingPathComponent("state")
        let wall = TestWall(
            name: "content-test", clockPort: masterPort, media: clip.path, canvas: (640, 90),
            stateDirectory: state.path, extra: ["clock-lock-timeout: 20s", "content-bandwidth: \(bandwidth)B/s"],
            nodes: ids.enumerated().map { index, id in
                TestWall.Node(id: id, controlPort: firstControlPort + index, tile: (index * 160, 0, 160, 90))
            })
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        let master = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:\(masterPort)"])
        var nodes: [String: ChildProcess] = [:]
        func start(_ id: String, state override: String? = nil) throws {
            nodes[id] = try ChildProcess(
                wallnode,
                ["run", "--config", config.path, "--id", id, "--log-format", "text"]
                    + (override.map { ["--state-directory", $0] } ?? []))
        }
        defer {
            for process in Array(nodes.values) + [master] { process.signal(SIGTERM) }
            if (testRun?.failureCount ?? 0) > 0 {
                for (id, process) in nodes.sorted(by: { $0.key < $1.key }) {
                    let lines = process.finish().errors.split(separator: "\n").filter { $0.contains("content") }
                    print("node \(id) content log:\n" + lines.suffix(30).joined(separator: "\n"))
                }
            }
        }
        for id in ids { try start(id) }
        for id in ids { try await wall.client(id).waitUntilAnswering() }
        let partial = { (id: String, digest: String) in
            state.appendingPathComponent("content-test-\(id).content/partial/\(digest)").path
        }
        let digest = try TestMedia.run("/usr/bin/sha256sum", [big.path]).prefix(64).description

        // 1. Pushed while n3 is killed mid-transfer and started again: it resumes, and the origin
        // sends the file about once while the nodes deliver it four times.
        let push = try ChildProcess(wallctl, ["push", "--config", config.path, "--timeout", "90", big.path])
        // What n3 holds of the file, checked, by its own report: the bytes of its verified chunks.
        func n3Has() -> UInt64? {
            guard let body = try? wall.client("n3").get("/content").body,
                let report = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let transfers = report["transfers"] as? [[String: Any]]
            else { return nil }
            return
                (transfers.first { (($0["id"] as? [String: Any])?["sha256"] as? String) == digest }?["have"]
                as? NSNumber)?
                .uint64Value
        }
        var killedAt: UInt64 = 0
        try await eventually(within: 40, "n3 holding a verified chunk of the file") {
            killedAt = n3Has() ?? 0
            return killedAt >= 4 << 20
        }
        nodes["n3"]?.signal(SIGKILL)
        _ = nodes["n3"]?.finish()
        XCTAssertNotNil(
            try? FileManager.default.attributesOfItem(atPath: partial("n3", digest) + ".chunks"),
            "the chunks it had are claimed on its disk")
        try start("n3")
        // Read back and checked on its start: it goes on from what it had, not from nothing.
        try await wall.client("n3").waitUntilAnswering()
        // Its first report of the file (once the push asks again) has what it had before the kill.
        var resumed: UInt64?
        try await eventually(within: 20, "n3 reporting the file again") {
            resumed = n3Has()
            return resumed != nil
                || (try? wall.client("n3").get("/content").body.contains("\"held\":[{\"sha256\":\"\(digest)")) == true
        }
        if let resumed {
            XCTAssertGreaterThanOrEqual(resumed, killedAt, "n3 resumed from the chunks it had, not from nothing")
        }
        let pushed = push.finish()
        XCTAssertEqual(pushed.status, 0, "wallctl push: \(pushed.output)\n\(pushed.errors)")
        print("content test: push said\n\(pushed.output)")
        let sentLine = try XCTUnwrap(pushed.output.split(separator: "\n").first { $0.contains("the origin sent") })
        let sent =
            Double(sentLine.split(separator: " ").first { Double($0) != nil }.map(String.init) ?? "") ?? .infinity
        XCTAssertLessThanOrEqual(sent, 24.0 * 1.5, "the origin sent about one copy, not four: \(sentLine)")
        let n3Log = nodes["n3"]!
        for id in ids {
            let report = try wall.client(id).get("/content")
            XCTAssertTrue(report.body.contains(digest), "\(id) holds the file: \(report.body)")
        }

        // 2. A peer's copy damaged on its disk, in every chunk: the node asking it for a chunk (it is
        // asked first, as fast as any peer not yet measured, and first by name) refuses what it sends
        // and takes the chunk from another.
        let n0Copy = state.appendingPathComponent("content-test-n0.content/sha256/\(digest)")
        let handle = try FileHandle(forUpdating: n0Copy)
        for offset in stride(from: UInt64(12_345), to: 24_000_000, by: 4 << 20) {
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data([0x00, 0xFF, 0x00]))
        }
        try handle.close()
        try FileManager.default.removeItem(at: state.appendingPathComponent("content-test-n2.content/sha256/\(digest)"))
        let again = try ChildProcess.run(wallctl, ["push", "--config", config.path, "--timeout", "60", big.path])
        XCTAssertEqual(again.status, 0, "wallctl push again: \(again.output)\n\(again.errors)")
        print("content test: the second push said\n\(again.output)")
        print("content test: n2 holds \(try wall.client("n2").get("/content").body)")
        nodes["n2"]?.signal(SIGTERM)
        let n2Log = nodes["n2"]!.finish().errors
        XCTAssertTrue(n2Log.contains("content refused"), "n2 refused n0's damaged copy:\n\(n2Log.suffix(3000))")
        let held = try ContentHash.sha256(
            of: state.appendingPathComponent("content-test-n2.content/sha256/\(digest)").path)
        XCTAssertEqual(held, digest, "n2 holds the right file, from another peer")
        try start("n2")

        // 3. A disk too small: the node says so, and push names it.
        if getuid() == 0 {
            let small = folder.appendingPathComponent("small")
            try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
            let mounted = try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", small.path])
            if mounted.status == 0 {
                defer { _ = try? ChildProcess.run("/bin/umount", ["-l", small.path]) }
                nodes["n1"]?.signal(SIGTERM)
                _ = nodes["n1"]?.finish()
                try start("n1", state: small.path)
                try await wall.client("n1").waitUntilAnswering()
                let full = try ChildProcess.run(wallctl, ["push", "--config", config.path, "--timeout", "8", big.path])
                XCTAssertNotEqual(full.status, 0, "a node without room fails the push")
                XCTAssertTrue(
                    full.errors.contains("n1") && full.errors.contains("no room"),
                    "push names the node and why: \(full.errors)")
                nodes["n1"]?.signal(SIGTERM)
                _ = nodes["n1"]?.finish()
                try start("n1")
                try await wall.client("n1").waitUntilAnswering()
            }
        } else {
            print("content test: not root, the full-disk case is left out")
        }

        // 4. A clip that no media root holds, pushed by play and played from the stores.
        let play = try ChildProcess.run(
            wallctl, ["play", "--config", config.path, "--timeout", "60", "--media", pushedClip.path])
        XCTAssertEqual(play.status, 0, "wallctl play --media: \(play.output)\n\(play.errors)")
        for id in ids {
            let status = try await wall.client(id).waitForStatus(within: 20, "\(id) playing in step") { status in
                (status["timeline"] as? [String: Any])?["inStep"] as? Bool == true
            }
            XCTAssertNil((status["timeline"] as? [String: Any])?["problem"], "\(id): \(status)")
        }
        // wallctl check says each node holds what its timeline names, and what its store holds.
        let check = try ChildProcess.run(wallctl, ["check", "--config", config.path])
        for id in ids {
            let section = check.output.components(separatedBy: "node \(id)").dropFirst().first ?? ""
            XCTAssertTrue(section.contains("every file it names is here"), "check, \(id):\n\(check.output)")
            XCTAssertTrue(section.contains("content store: 2 files"), "check, \(id):\n\(check.output)")
        }

        // 5. Pre-split tiles: a path with {id} sends each node its own file, and only that.
        var tiles: [String: String] = [:]
        for id in ids {
            let tile = controller.appendingPathComponent("tile-\(id).bin")
            try TestMedia.payload(count: 100_000).write(to: tile)
            tiles[id] = try ContentHash.sha256(of: tile.path)
        }
        let tilePush = try ChildProcess.run(
            wallctl, ["push", "--config", config.path, controller.appendingPathComponent("tile-{id}.bin").path])
        XCTAssertEqual(tilePush.status, 0, "push of tiles: \(tilePush.output)\n\(tilePush.errors)")
        for id in ids {
            let held = try wall.client(id).get("/content").body
            for (other, digest) in tiles {
                XCTAssertEqual(held.contains(digest), other == id, "\(id) holds its own tile only: \(held)")
            }
        }

        // 6. A file that begins as media but is not: push takes it, play refuses it, naming it as the
        // operator does (the store keeps it under its SHA-256).
        let broken = controller.appendingPathComponent("broken.mp4")
        try TestMedia.payload(count: 200_000).write(to: broken)
        let refused = try ChildProcess.run(
            wallctl, ["play", "--config", config.path, "--timeout", "60", "--media", broken.path])
        XCTAssertNotEqual(refused.status, 0, "\(refused.output)\n\(refused.errors)")
        XCTAssertTrue(
            (refused.output + refused.errors).contains("broken.mp4 cannot play"),
            "the refusal names the file: \(refused.output)\n\(refused.errors)")
        _ = n3Log
    }
}

/// SHA-256 of a file by `sha256sum`, a check that does not use the code under test.
private enum ContentHash {
    static func sha256(of path: String) throws -> String {
        String(try TestMedia.run("/usr/bin/sha256sum", [path]).prefix(64))
    }
}

/// The control daemon's library: a push uploads to it once, and a node that lost its copy while
/// no peer is up fetches what its timeline names from the daemon by itself.
final class ContentDaemonTests: XCTestCase {
    func testTheDaemonsLibrary_servesANodeThatComesBackWithNothing() async throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-daemon-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let roots = folder.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: roots, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: try TestMedia.frameCode(seconds: 4), to: roots.appendingPathComponent("clip.mp4"))
        let pushed = folder.appendingPathComponent("pushed.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 6), to: pushed)
        let state = folder.appendingPathComponent("state")
        let ids = ["a", "b"]
        let wall = TestWall(
            name: "daemon-test", clockPort: 15695, media: roots.appendingPathComponent("clip.mp4").path,
            canvas: (320, 90), stateDirectory: state.path,
            extra: [
                "clock-lock-timeout: 20s",
                "controller: {listen: \"127.0.0.1:17899\", library: \(folder.appendingPathComponent("library").path)}",
            ],
            nodes: ids.enumerated().map { index, id in
                TestWall.Node(id: id, controlPort: 17821 + index, tile: (index * 160, 0, 160, 90))
            })
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        let master = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:15695"])
        let daemon = try ChildProcess(wallctl, ["serve", "--config", config.path])
        var nodes = try ids.map { try ChildProcess(wallnode, ["run", "--config", config.path, "--id", $0]) }
        defer { for process in nodes + [daemon, master] { process.signal(SIGTERM) } }
        for id in ids { try await wall.client(id).waitUntilAnswering() }

        let load = try ChildProcess.run(
            wallctl, ["play", "--config", config.path, "--timeout", "60", "--media", pushed.path])
        XCTAssertEqual(load.status, 0, "wallctl play --media: \(load.output)\n\(load.errors)")
        XCTAssertTrue(load.output.contains("uploaded to the daemon's library"), load.output)
        let digest = String(try TestMedia.run("/usr/bin/sha256sum", [pushed.path]).prefix(64))
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: folder.appendingPathComponent("library/sha256/\(digest)").path),
            "the library keeps the file")

        // Node a down, node b's store emptied: b comes back and fetches from the daemon by itself.
        nodes[0].signal(SIGTERM)
        _ = nodes[0].finish()
        nodes[1].signal(SIGTERM)
        _ = nodes[1].finish()
        try FileManager.default.removeItem(at: state.appendingPathComponent("daemon-test-b.content"))
        nodes[1] = try ChildProcess(wallnode, ["run", "--config", config.path, "--id", "b"])
        let status = try await wall.client("b").waitForStatus(within: 30, "b back in step from the daemon's copy") {
            status in (status["timeline"] as? [String: Any])?["inStep"] as? Bool == true
        }
        XCTAssertNil((status["timeline"] as? [String: Any])?["problem"], "\(status)")
        nodes[1].signal(SIGTERM)
        let log = nodes[1].finish().errors
        XCTAssertTrue(
            log.contains("content arrived") && log.contains("127.0.0.1:17899"), "from the daemon:\n\(log.suffix(2000))")
    }
}
