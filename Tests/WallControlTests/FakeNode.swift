import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LockstepLocks
import LockstepTime
import Logging
import NIOCore
import WallContent
import WallControl
import WallProtocol
import WallTimeline
import XCTest

/// A node as the controller sees it: its control API on a loopback port of this process, with no
/// player or clock behind it. What it holds is what it was sent; its master time is the shared
/// `FakeNode.master`; how it answers is what a test sets (`behaviour`), so the controller's
/// decisions run against slow, refusing, silent and restarted nodes with no process.
final class FakeNode: Sendable {
    /// How the node answers.
    enum Behaviour: Sendable, Equatable {
        /// At once, carrying out what it is sent.
        case answering
        /// Its status at once; every command refused (HTTP 409) with this reason.
        case refusing(String)
        /// As `answering`, each answer this long after the request.
        case slow(Duration)
        /// Not at all: the connection is taken and the request never answered.
        case silent
    }

    struct State {
        var behaviour = Behaviour.answering
        var timeline: Timeline?
        /// Every timeline sent to it, in order.
        var received: [Timeline] = []
        var epoch: UInt64
        /// Each media file's length here, by path; a path not named is "no such file".
        var lengths: [String: MediaTime]
        /// The cues it says it holds in standby, their first frames prerolled.
        var cuesReady: [String] = []
        /// The frames it presented, as `GET /frames` gives them, and how many it says it presented
        /// before them.
        var frames: [FrameRecord] = []
        var framesBefore: UInt64 = 0
        /// How many times it was asked for its frames.
        var framesAsked = 0
        /// The content it holds, verified, and every fetch it was asked for.
        var held: Set<ContentID> = []
        var fetches: [ContentFetchRequest] = []
        /// Every file the origin sent it whole (200), in order.
        var downloaded: [ContentID] = []
        /// What its screen shows: one colour, and the frame's time in its item.
        var colour: [UInt8] = [0, 0, 0]
        var frameTime = MediaTime.zero
        /// Its clock's error bound, as its status and its frames say it, and the bound that holds
        /// whatever its path's asymmetry (nil: it has none).
        var errorBound = MediaTime(value: 50, timescale: 1_000_000)
        var guaranteedErrorBound: MediaTime?
    }

    /// The master time every fake node reports: this machine's monotonic time plus a day, so that
    /// no master time is mistaken for a local one.
    static func master() -> MediaTime { LocalClock.monotonic.now() + MediaTime(value: 86_400, timescale: 1) }

    /// The node's state, shared with the routes that answer for it.
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
        func withLock<T: Sendable>(_ body: (inout sending State) -> sending T) -> T { state.withLock(body) }
    }

    let id: String
    let port: Int
    private let state: Shared
    private let serving: Task<Void, any Error>

    private init(id: String, port: Int, state: Shared, serving: Task<Void, any Error>) {
        self.id = id
        self.port = port
        self.state = state
        self.serving = serving
    }

    /// A node answering on a free loopback port, once it listens.
    static func start(
        id: String, epoch: UInt64 = 0x5eed, lengths: [String: MediaTime] = [:]
    ) async throws -> FakeNode {
        let state = Shared(State(epoch: epoch, lengths: lengths))
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        var quiet = Logger(label: "fake-node")
        quiet.logLevel = .critical
        let application = Application(
            router: router(id: id, state: state),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: "fake-node"),
            onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: quiet)
        let serving = Task { try await application.run() }
        var waiting = ports.makeAsyncIterator()
        guard let port = await waiting.next(), port > 0 else {
            serving.cancel()
            throw CancellationError()
        }
        return FakeNode(id: id, port: port, state: state, serving: serving)
    }

    /// Stops answering: its port refuses connections from now on.
    func stop() { serving.cancel() }

    var behaviour: Behaviour {
        get { state.withLock { $0.behaviour } }
        set { state.withLock { $0.behaviour = newValue } }
    }

    /// The timeline it follows now.
    var timeline: Timeline? { state.withLock { $0.timeline } }

    /// Every timeline it was sent, in order.
    var received: [Timeline] { state.withLock { $0.received } }

    /// The cues it says it holds in standby.
    var cuesReady: [String] {
        get { state.withLock { $0.cuesReady } }
        set { state.withLock { $0.cuesReady = newValue } }
    }

    /// Says it presented `frames` (after `framesBefore` others), its clock within `errorBound`
    /// estimated, within `guaranteed` whatever its path's asymmetry.
    func present(
        _ frames: [FrameRecord], after framesBefore: UInt64 = 0, errorBound: MediaTime, guaranteed: MediaTime?
    ) {
        state.withLock { state in
            state.frames = frames
            state.framesBefore = framesBefore
            state.errorBound = errorBound
            state.guaranteedErrorBound = guaranteed
        }
    }

    /// How many times it was asked for its frames.
    var framesAsked: Int { state.withLock { $0.framesAsked } }

    /// The content it holds, and the fetches it was asked for.
    var held: Set<ContentID> { state.withLock { $0.held } }
    var fetches: [ContentFetchRequest] { state.withLock { $0.fetches } }
    var downloaded: [ContentID] { state.withLock { $0.downloaded } }

    /// Shows one colour, the frame at `frameTime` in its item.
    func show(colour: [UInt8], frameTime: MediaTime) {
        state.withLock { state in
            state.colour = colour
            state.frameTime = frameTime
        }
    }

    /// Holds `ids` already, as a node that fetched them before.
    func hold(_ ids: [ContentID]) { state.withLock { $0.held.formUnion(ids) } }

    /// As a node whose stored state was lost comes back: holding no timeline.
    func forgetTimeline() { state.withLock { $0.timeline = nil } }

    /// The status the node reports: a usable clock on its master's epoch, its timeline's version,
    /// settled and in step.
    private static func status(id: String, state: State) -> NodeStatus {
        let clock = ClockReport(
            state: .locked, usable: true, server: "127.0.0.1:18590", offset: .zero,
            errorBound: state.errorBound, guaranteedErrorBound: state.guaranteedErrorBound, epoch: state.epoch,
            realtime: true)
        let player = PlayerReport(
            status: "readyToPlay", media: nil, itemStatus: nil, timeControlStatus: "playing", waitingReason: nil,
            rate: 1, position: .zero, prerolled: true, framesPresented: state.framesBefore, framesLate: 0,
            framesDropped: 0,
            renderThread: "normal", error: nil)
        let timeline = state.timeline.map { timeline in
            var report = TimelineReport(
                version: timeline.version, state: "playing", entry: 0, pass: 0, itemTime: .zero, inStep: true,
                offset: .zero, rejoins: 0, problem: nil)
            report.settled = true
            report.cuesReady = state.cuesReady
            return report
        }
        return NodeStatus(
            id: id, masterTime: master(), monotonicTime: LocalClock.monotonic.now(), clock: clock, player: player,
            timeline: timeline)
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(value))))
    }

    /// Waits as the node's behaviour says before answering; nil: answer, else the refusal.
    private static func behave(_ state: Shared) async throws -> String? {
        switch state.withLock({ $0.behaviour }) {
        case .answering: return nil
        case .refusing(let reason): return reason
        case .slow(let delay):
            try await Task.sleep(for: delay)
            return nil
        case .silent:
            // Until a test makes it answer again (a partition healed).
            while state.withLock({ $0.behaviour }) == .silent { try await Task.sleep(for: .milliseconds(20)) }
            return try await behave(state)
        }
    }

    /// A command as the node takes it: refused (HTTP 409) as its behaviour says, else its body.
    private enum Command<Body> {
        case refused(Response)
        case taken(Body)
    }

    private static func command<Body: Decodable>(_ type: Body.Type, _ request: Request, _ state: Shared) async throws
        -> Command<Body>
    {
        let body = try await request.body.collect(upTo: 1 << 20)
        if let reason = try await behave(state) {
            return .refused(try json(ControlReply(ok: false, error: reason, status: nil), status: .conflict))
        }
        return .taken(try JSONDecoder().decode(type, from: Data(body.readableBytesView)))
    }

    private static func router(id: String, state: Shared) -> Router<BasicRequestContext> {
        let router = Router()
        router.get(RouterPath(ControlPath.status)) { _, _ -> Response in
            _ = try await behave(state)
            return try json(status(id: id, state: state.withLock { $0 }))
        }
        router.get(RouterPath(ControlPath.timeline)) { _, _ -> Response in
            _ = try await behave(state)
            guard let timeline = state.withLock({ $0.timeline }) else { return Response(status: .notFound) }
            return try json(timeline)
        }
        router.put(RouterPath(ControlPath.timeline)) { request, _ -> Response in
            let timeline: Timeline
            switch try await command(Timeline.self, request, state) {
            case .refused(let refusal): return refusal
            case .taken(let body): timeline = body
            }
            let now = state.withLock { state in
                state.timeline = timeline
                state.received.append(timeline)
                return state
            }
            return try json(ControlReply(ok: true, status: status(id: id, state: now)))
        }
        router.get(RouterPath(ControlPath.frames)) { request, _ -> Response in
            _ = try await behave(state)
            let after = request.uri.queryParameters.get("after").flatMap { UInt64($0) } ?? 0
            let now = state.withLock { state in
                state.framesAsked += 1
                return state
            }
            return try json(
                FramesReply(
                    node: id, records: now.frames.filter { $0.sequence > after }, missed: 0,
                    clockErrorBound: now.errorBound, guaranteedClockErrorBound: now.guaranteedErrorBound))
        }
        // A fetch: each file it lacks downloaded from the first origin and kept once its digest
        // matches, before the answer (a node answers at once and fetches on; the report is the same).
        router.post(RouterPath(ControlPath.contentFetch)) { request, _ -> Response in
            let fetch: ContentFetchRequest
            switch try await command(ContentFetchRequest.self, request, state) {
            case .refused(let refusal): return refusal
            case .taken(let body): fetch = body
            }
            let lacking = state.withLock { state in
                state.fetches.append(fetch)
                return fetch.content.map(\.id).filter { !state.held.contains($0) }
            }
            for id in Set(lacking) {
                guard let origin = fetch.origins.first else { break }
                let reply = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "\(origin)/content/\(id.sha256)"), timeout: .seconds(10))
                let bytes = try await reply.body.collect(upTo: 1 << 24)
                // The origin serves so many transfers at once (503 past them): a node tries again later.
                guard reply.status == .ok else { continue }
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("fake-\(id.sha256)-\(UUID())")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(bytes.readableBytesView).write(to: file)
                let verified = try ContentDigest.id(ofFileAt: file.path) == id
                state.withLock { state in
                    state.downloaded.append(id)
                    if verified { state.held.insert(id) }
                }
            }
            return try json(ControlReply(ok: true, status: nil))
        }
        router.get(RouterPath(ControlPath.content)) { _, _ -> Response in
            _ = try await behave(state)
            let held = state.withLock { $0.held }
            return try json(ContentReport(node: id, held: held.sorted(), transfers: [], freeBytes: 1 << 40))
        }
        // The frame on its screen, at the master time asked for: every pixel its colour.
        router.get(RouterPath(ControlPath.snapshot)) { request, _ -> Response in
            _ = try await behave(state)
            let query = request.uri.queryParameters
            guard let width = query.get("width").flatMap({ Int($0) }),
                let height = query.get("height").flatMap({ Int($0) })
            else { return Response(status: .badRequest) }
            let at = query.get("atNs").flatMap { Int64($0) }.map { MediaTime(nanoseconds: $0) } ?? master()
            let (colour, frameTime) = state.withLock { ($0.colour, $0.frameTime) }
            var headers = HTTPFields()
            headers[HTTPField.Name(SnapshotHeader.presentationTimestamp)!] = "\(frameTime.nanoseconds ?? 0)"
            headers[HTTPField.Name(SnapshotHeader.copiedAt)!] =
                "\((at + MediaTime(value: 1, timescale: 1000)).nanoseconds ?? 0)"
            let pixels = [UInt8]((0..<(width * height)).flatMap { _ in colour })
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: pixels)))
        }
        router.post(RouterPath(ControlPath.mediaDurations)) { request, _ -> Response in
            let asked: MediaDurationsRequest
            switch try await command(MediaDurationsRequest.self, request, state) {
            case .refused(let refusal): return refusal
            case .taken(let body): asked = body
            }
            let lengths = state.withLock { $0.lengths }
            guard let missing = asked.media.first(where: { lengths[$0] == nil }) else {
                return try json(MediaDurationsReply(node: id, durations: asked.media.map { lengths[$0]! }))
            }
            return try json(
                ControlReply(ok: false, error: "\(missing): no such file", status: nil), status: .unprocessableContent)
        }
        return router
    }
}

extension WallConfig {
    /// The wall of `nodes`, a row of 160x90 tiles, playing /m/a.mp4 then 4 s of /m/b.mp4, with
    /// `extra` top-level lines (its cues).
    static func fakes(_ nodes: [FakeNode], extra: String = "") throws -> WallConfig {
        let tiles = nodes.enumerated().map { index, node in
            "  - {id: \(node.id), control: \"127.0.0.1:\(node.port)\", tile: {x: \(index * 160), y: 0, width: 160, height: 90}}"
        }
        return try WallConfig.parse(
            """
            name: fakes
            clock: 127.0.0.1:18590
            media: /m/a.mp4
            canvas: {width: \(160 * nodes.count), height: 90}
            playlist: [{media: /m/a.mp4}, {media: /m/b.mp4, out: 4s}]
            \(extra)
            nodes:
            \(tiles.joined(separator: "\n"))
            """)
    }
}

/// A test of the controller against fake nodes: the nodes it starts and the walls made of them
/// are stopped and shut down after each test.
class FakeWallTestCase: XCTestCase {
    var nodes: [FakeNode] = []
    private var walls: [Wall] = []

    override func tearDown() async throws {
        for node in nodes { node.stop() }
        for wall in walls { try await wall.shutdown() }
        nodes = []
        walls = []
    }

    /// Fake nodes `ids`, each holding `lengths` (with `own` replacing some on a node), each on
    /// master epoch 0x5eed unless `epochs` names another; all the nodes started so far.
    @discardableResult
    func startNodes(
        _ ids: [String], lengths: [String: MediaTime] = [:], own: [String: [String: MediaTime]] = [:],
        epochs: [String: UInt64] = [:]
    ) async throws -> [FakeNode] {
        for id in ids {
            nodes.append(
                try await FakeNode.start(
                    id: id, epoch: epochs[id] ?? 0x5eed, lengths: lengths.merging(own[id] ?? [:]) { $1 }))
        }
        return nodes
    }

    /// The wall of the nodes started (`WallConfig.fakes`, with `extra`), every command waiting at
    /// most `waitLimit`.
    func wall(extra: String = "", waitLimit: MediaTime = MediaTime(value: 1, timescale: 1)) throws -> Wall {
        let wall = try Wall(config: try WallConfig.fakes(nodes, extra: extra), waitLimit: waitLimit)
        walls.append(wall)
        return wall
    }

    func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1000) }
}
