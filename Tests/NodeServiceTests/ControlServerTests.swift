import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LockstepTime
import Logging
import NIOCore
import NodeService
import TestSupport
import WallPlayer
import WallProtocol
import WallTimeline
import XCTest

/// The node's control API in-process (HummingbirdTesting's router mode): a real node on this
/// machine's clock with a fakesink, no socket. What wall a request is for, what a node takes and
/// what it refuses, with the sentence each refusal carries.
final class ControlServerTests: XCTestCase {
    private var folder: URL!
    private var clip: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-control-\(getpid())-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        clip = folder.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 1), to: clip)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A node of wall "lobby" with its router, on this machine's clock.
    private func node(extra: [String] = []) async throws -> (Node, Router<BasicRequestContext>) {
        let config = try TestWall(
            name: "lobby", clockPort: 9, media: clip.path, canvas: (160, 90),
            stateDirectory: folder.appendingPathComponent("state").path, extra: extra,
            nodes: [TestWall.Node(id: "a", controlPort: 7000, tile: (0, 0, 160, 90), output: (160, 90))]
        ).write(to: folder.appendingPathComponent("wall.yaml"))
        let settings = try NodeSettings(
            config: try WallConfig.load(path: config.path), id: "a",
            overrides: NodeSettings.Overrides(useLocalClock: true))
        let player = QueuePlayer(
            items: [], video: settings.video, audioSinkDescription: nil, logger: Logger(label: "test"))
        let clock = await ClockFollower.start(settings: settings, players: [player], logger: Logger(label: "test"))
        let frames = FrameLog()
        let screen = NodeScreen(
            settings: settings, players: [player], frames: frames, window: nil, logger: Logger(label: "test"))
        let node = Node(settings: settings, screen: screen, clock: clock, logger: Logger(label: "test"))
        return (node, ControlServer.router(node: node, metrics: NodeMetrics(wall: "lobby", node: "a")))
    }

    /// What the tests send and read, sendable into the test client's closure.
    private struct Requests: Sendable {
        let clip: String

        func timeline(wall: String = "lobby", version: UInt64 = 1, media: String? = nil) throws -> ByteBuffer {
            ByteBuffer(
                string: try TestTimelines.json(
                    wall: wall, media: media ?? clip, start: 3_600_000_000_000, version: version))
        }

        func headers(wall: String?, _ more: [HTTPField.Name: String] = [:]) -> HTTPFields {
            var fields = HTTPFields()
            if let wall { fields[HTTPField.Name(WallHeader.wall)!] = wall }
            for (name, value) in more { fields[name] = value }
            return fields
        }

        func error(_ response: TestResponse) -> String {
            let object = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
            return object?["error"] as? String ?? String(buffer: response.body)
        }
    }

    private var requests: Requests { Requests(clip: clip.path) }

    func testEveryEndpoint_refusesAnotherWallsRequest_namingBoth() async throws {
        let (_, router) = try await node()
        let r = requests
        try await Application(router: router).test(.router) { client in
            let requests: [(String, HTTPRequest.Method, ByteBuffer?)] = [
                ("/status", .get, nil), ("/timeline", .get, nil), ("/timeline", .put, try r.timeline()),
                ("/frames", .get, nil), ("/snapshot", .get, nil), ("/check", .get, nil), ("/metrics", .get, nil),
                ("/media/durations", .post, ByteBuffer(string: #"{"media": []}"#)), ("/pause", .post, nil),
            ]
            for (path, method, body) in requests {
                let response = try await client.execute(
                    uri: path, method: method, headers: r.headers(wall: "atrium"), body: body)
                XCTAssertEqual(response.status, .conflict, "\(method) \(path)")
                XCTAssertEqual(
                    r.error(response), "this is node a of wall \"lobby\"; the request is for wall \"atrium\": refused")
                XCTAssertEqual(
                    response.headers[HTTPField.Name(WallHeader.wall)!], "lobby", "every answer names the wall")
            }
        }
    }

    func testAChange_mustNameItsWall_whileReadsNeedNot() async throws {
        let (_, router) = try await node()
        let r = requests
        try await Application(router: router).test(.router) { client in
            let read = try await client.execute(uri: "/status", method: .get)
            XCTAssertEqual(read.status, .ok)
            XCTAssertEqual(read.headers[HTTPField.Name(WallHeader.wall)!], "lobby")
            let status = try JSONDecoder().decode(NodeStatus.self, from: Data(buffer: read.body))
            XCTAssertEqual(status.wall, "lobby")
            XCTAssertTrue(status.clock.usable)
            let unnamed = try await client.execute(uri: "/timeline", method: .put, body: try r.timeline())
            XCTAssertEqual(unnamed.status, .badRequest)
            XCTAssertTrue(r.error(unnamed).contains("names its wall (header Lockstep-Wall: lobby)"))
        }
    }

    func testAScheduleOnAMasterWithNoRealTime_isAProblemTheStatusNames() async throws {
        let plain = try await node().0
        let (node, _) = try await node(extra: [
            "schedule:", "  time-zone: Europe/Paris", "  playlists: {p: [{media: \(clip.path)}]}",
            "  day-parts: [{playlist: p, days: daily, from: \"09:00\", to: \"17:00\"}]",
        ])
        // This machine's own clock serves no UTC a schedule's hours could be read on.
        let problems = await node.status().problems ?? []
        XCTAssertEqual(problems.map(\.service), ["schedule"])
        XCTAssertTrue(problems.first?.problem.contains("a schedule needs a master serving") == true, "\(problems)")
        let plainProblems = await plain.status().problems
        XCTAssertNil(plainProblems, "a playlist needs no real time")
    }

    func testTheStatus_saysHowTheMachineIs() async throws {
        let (node, _) = try await node()
        let status = await node.status()
        let health = try XCTUnwrap(status.health)
        XCTAssertFalse(health.version.isEmpty)
        XCTAssertNotNil(health.configSHA256)
        XCTAssertGreaterThanOrEqual(health.cores, 1)
        XCTAssertGreaterThan(health.memoryTotalBytes ?? 0, health.memoryAvailableBytes ?? .max)
        XCTAssertGreaterThan(health.storeSizeBytes ?? 0, 0, "the content store's file system")
        XCTAssertGreaterThan(health.uptimeSeconds ?? 0, 0)
        XCTAssertGreaterThan(health.processResidentBytes ?? 0, 0)
        XCTAssertNil(health.display, "a fakesink has no window")
    }

    func testATimeline_isKept_andOnlyANewerOneOfThisWallReplacesIt() async throws {
        let (node, router) = try await node()
        let r = requests
        try await Application(router: router).test(.router) { client in
            let wall = r.headers(wall: "lobby")
            var response = try await client.execute(uri: "/timeline", method: .get, headers: wall)
            XCTAssertEqual(response.status, .notFound)
            response = try await client.execute(uri: "/timeline", method: .put, headers: wall, body: try r.timeline())
            XCTAssertEqual(response.status, .ok, r.error(response))
            response = try await client.execute(uri: "/timeline", method: .put, headers: wall, body: try r.timeline())
            XCTAssertEqual(response.status, .ok, "the same timeline again changes nothing")
            response = try await client.execute(
                uri: "/timeline", method: .put, headers: wall, body: try r.timeline(wall: "atrium", version: 2))
            XCTAssertEqual(response.status, .conflict)
            XCTAssertEqual(
                r.error(response), "timeline refused: the timeline is for wall \"atrium\", this is wall \"lobby\"")
            response = try await client.execute(
                uri: "/timeline", method: .put, headers: wall, body: try r.timeline(version: 3))
            XCTAssertEqual(response.status, .ok)
            response = try await client.execute(
                uri: "/timeline", method: .put, headers: wall, body: try r.timeline(version: 2))
            XCTAssertEqual(response.status, .conflict)
            XCTAssertEqual(
                r.error(response), "timeline refused: timeline version 2 is not newer than the version 3 in force")
            response = try await client.execute(
                uri: "/timeline", method: .put, headers: wall, body: try r.timeline(version: 4, media: "/etc/passwd"))
            XCTAssertEqual(response.status, .unprocessableContent)
            XCTAssertTrue(
                r.error(response).hasPrefix("segments[0].playlist.entries[0].media: \"/etc/passwd\" is not inside"))
            response = try await client.execute(uri: "/timeline", method: .get, headers: wall)
            XCTAssertEqual(try JSONDecoder().decode(Timeline.self, from: Data(buffer: response.body)).version, 3)
        }
        let stored = TimelineStore(path: node.settings.timelineFile).recover { _ in }
        guard case .timeline(let kept) = stored else { return XCTFail("nothing kept: \(stored)") }
        XCTAssertEqual(kept.version, 3, "what the node follows is what it keeps")
    }

    func testTheOneShotCommands_sayWhatReplacedThem() async throws {
        let (_, router) = try await node()
        let r = requests
        try await Application(router: router).test(.router) { client in
            for (path, replacement) in ControlPath.retired {
                let response = try await client.execute(uri: path, method: .post, headers: r.headers(wall: "lobby"))
                XCTAssertEqual(response.status, .gone, path)
                XCTAssertTrue(r.error(response).contains("every command is an edit of the wall's timeline"), path)
                XCTAssertTrue(r.error(response).hasSuffix("(\(replacement))"), r.error(response))
            }
        }
    }

    func testWithAToken_aRequestWithoutItOrFromAWebPage_isRefused() async throws {
        let token = "lockstep-in-process-token-1234567"
        try Data((token + "\n").utf8).write(to: folder.appendingPathComponent("control.token"))
        let (_, router) = try await node(extra: ["control-token-file: control.token"])
        let r = requests
        try await Application(router: router).test(.router) { client in
            var response = try await client.execute(uri: "/status", method: .get)
            XCTAssertEqual(response.status, .unauthorized)
            response = try await client.execute(
                uri: "/status", method: .get, headers: r.headers(wall: nil, [.authorization: "Bearer \(token)"]))
            XCTAssertEqual(response.status, .ok)
            response = try await client.execute(
                uri: "/timeline", method: .put,
                headers: r.headers(wall: "lobby", [.authorization: "Bearer \(token)", .origin: "http://example.com"]),
                body: try r.timeline())
            XCTAssertEqual(response.status, .forbidden)
        }
    }
}
