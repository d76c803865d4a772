import Foundation
import LockstepLocks
import LockstepTime
import WallAnalysis
import WallControl
import WallProtocol
import WallTimeline

/// The one loop that watches the wall for every open console (and only while one is open): it asks
/// each node for its status
/// every `interval` (each node on its own, so a node that does not answer delays only itself, up
/// to the request timeout), its content and its frame records less often, and a thumbnail of one
/// node at a time; whatever changed goes to every console as a server-sent event. Ten consoles
/// cost the nodes nothing more than one.
public final class WallMonitor: Sendable {
    /// How often each node's status is asked for: with the request's own time, how far behind the
    /// nodes the page is at the most.
    public static let interval = Duration.milliseconds(150)
    static let contentInterval = Duration.seconds(1)
    static let framesInterval = Duration.milliseconds(500)
    /// The time between two thumbnails of one node, at the least; a quarter second per node on a
    /// wall of more than eight, so a console's thumbnail traffic stays about 4 pictures a second
    /// (some 250 KB/s) however large the wall.
    static let thumbnailInterval = Duration.seconds(2)
    static let thumbnailIntervalPerNode = Duration.milliseconds(250)
    static let thumbnailWidth = 192
    static let eventsKept = 200
    static let actionsKept = 20

    public let wall: Wall
    private let state: Mutex<State>
    private let subscribers = Mutex<[Int: AsyncStream<String>.Continuation]>([:])
    private let nextSubscriber = Mutex(0)

    struct State: Sendable {
        var views: [String: NodeView]
        var thumbnails: [String: Data] = [:]
        var events: [ConsoleEvent] = []
        var drift: DriftWatch
        /// The drift view last sent, for a new console's hello.
        var driftView: DriftWatch.View?
        var actions: [ActionRecord] = []
        /// The audit log's newest records.
        var audit: [AuditRecord] = []
        var push: PushView?
        /// The newest timeline version seen, the timeline itself once read, and the playlist it
        /// plays now.
        var timelineVersion: UInt64 = 0
        var timeline: Timeline?
        var playlist: PlaylistView?
        /// Whether the loop watches the wall (a console is open, or was within `idleGrace`).
        var watching = false

        /// Watching begins, or again after a pause: what was seen before is no longer known to
        /// hold. Each node's view starts over (its "since" times are since watching began, its
        /// thumbnail gone: a console opened after an idle hour showed the frames of an hour ago),
        /// and so does the drift analysis (frames from then would be a backlog the nodes no longer
        /// keep).
        mutating func startWatching(_ ids: [String]) {
            guard !watching else { return }
            watching = true
            for id in ids where views[id]?.polledAtUnixMs != nil { views[id] = NodeView(id: id) }
            thumbnails = [:]
            drift = DriftWatch(nodes: ids)
            driftView = nil
        }
    }

    /// - Parameters:
    ///   - wall: the wall, with requests bounded by a short timeout (a second): the loop must not
    ///     wait long on a node that is down.
    ///   - idleGrace: how long the loop goes on after the last console closed, so a reload does
    ///     not start it over.
    ///   - audit: the audit log's newest records, which a console shows from its first page.
    public init(wall: Wall, idleGrace: Duration = .seconds(10), audit: [AuditRecord] = []) {
        self.wall = wall
        self.idleGrace = idleGrace
        let ids = wall.clients.map(\.id)
        state = Mutex(
            State(
                views: Dictionary(uniqueKeysWithValues: ids.map { ($0, NodeView(id: $0)) }),
                drift: DriftWatch(nodes: ids), audit: Array(audit.suffix(AuditLog.recentKept))))
    }

    // MARK: Consoles

    /// A new console's stream of server-sent events, starting with the whole picture (`hello`);
    /// it ends when `stop` is called with its id or the monitor stops.
    public func subscribe(wallInfo: WallInfo) -> (id: Int, events: AsyncStream<String>) {
        let id = nextSubscriber.withLock { next in
            next += 1
            return next
        }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(2048))
        // Under the state lock, as every publication: nothing published after the hello is missed.
        state.withLock { state in
            state.startWatching(wall.clients.map(\.id))
            let hello = Hello(
                wall: wallInfo, nodes: wall.clients.map { state.views[$0.id]! }, events: state.events,
                drift: state.driftView ?? state.drift.view(), actions: state.actions, push: state.push,
                playlist: state.playlist, audit: state.audit)
            continuation.yield(Self.frame("hello", hello))
            subscribers.withLock { $0[id] = continuation }
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return (id, stream)
    }

    public func unsubscribe(_ id: Int) {
        _ = subscribers.withLock { $0.removeValue(forKey: id) }
    }

    /// How many consoles are open.
    public var consoles: Int { subscribers.withLock { $0.count } }

    /// Sends one event to every console: encoded once, whatever the number of consoles. Called
    /// with the state locked, so events leave in the order the state changed.
    func publish(_ kind: String, _ value: some Encodable) {
        let frame = Self.frame(kind, value)
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(frame) }
    }

    static func frame(_ kind: String, _ value: some Encodable) -> String {
        let data = (try? JSONEncoder().encode(value)) ?? Data("null".utf8)
        return "event: \(kind)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
    }

    // MARK: What consoles read

    public func thumbnail(_ node: String) -> Data? { state.withLock { $0.thumbnails[node] } }
    public func view(_ node: String) -> NodeView? { state.withLock { $0.views[node] } }

    // MARK: The loop

    let idleGrace: Duration

    /// Watches the wall while a console is open, until the task is cancelled. With none open the
    /// daemon asks the nodes nothing: the loop starts with the first console and stops
    /// `idleGrace` after the last (the event log then says what changed meanwhile, from the
    /// nodes' counters, when it starts again).
    public func run() async {
        while !Task.isCancelled {
            while consoles == 0 {
                do {
                    try await Task.sleep(for: .milliseconds(100))
                } catch {
                    return
                }
            }
            state.withLock { $0.startWatching(wall.clients.map(\.id)) }
            await withTaskGroup(of: Void.self) { group in
                for client in wall.clients {
                    group.addTask { await self.watchStatus(client) }
                    group.addTask { await self.watchContent(client) }
                }
                group.addTask { await self.watchFrames() }
                group.addTask { await self.watchThumbnails() }
                group.addTask { await self.keepAlive() }
                // The first to end is this one: no console for `idleGrace`, or cancelled.
                group.addTask { await self.waitUntilIdle() }
                await group.next()
                group.cancelAll()
            }
            state.withLock { $0.watching = false }
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }

    /// Returns once no console has been open for `idleGrace`, or when cancelled.
    private func waitUntilIdle() async {
        var idleSince: ContinuousClock.Instant?
        while !Task.isCancelled {
            if consoles > 0 {
                idleSince = nil
            } else if let since = idleSince, since.duration(to: .now) >= idleGrace {
                return
            } else if idleSince == nil {
                idleSince = .now
            }
            do {
                try await Task.sleep(for: .milliseconds(500))
            } catch {
                return
            }
        }
    }

    /// Milliseconds since 1970, on this machine's clock.
    static func unixMs() -> Int64 { AuditRecord.now() }

    private func watchStatus(_ client: NodeClient) async {
        let clock = ContinuousClock()
        while !Task.isCancelled {
            let started = clock.now
            let sent = Self.unixMs()
            let outcome = await Result.of { () throws(ControlError) in try await client.status().status }
            let now = Self.unixMs()
            // Published under the lock: two tasks' updates reach every console in the order they
            // were made, so an older view never lands after a newer one.
            state.withLock { state in
                let before = state.views[client.id]!
                var after: NodeView
                switch outcome {
                case .success(let status):
                    after = before.updated(with: status, at: now)
                    state.drift.record(status)
                    // By the node's own count going back, not by the frame records read since:
                    // those may be newer than a status sent before them, which started the
                    // analysis over on every poll.
                    if after.restarts > before.restarts { state.drift.start(client.id, after: 0) }
                case .failure(let error):
                    after = before.unreachable(error.description, at: now)
                }
                after.polledAtUnixMs = sent
                after.answeredAtUnixMs = now
                state.views[client.id] = after
                let events = ConsoleEvent.changes(from: before, to: after, at: now)
                state.events = Array((state.events + events).suffix(Self.eventsKept))
                let actions = state.noteTaken(by: after, at: now)
                if after.differs(from: before) { publish("node", after) }
                for event in events { publish("event", event) }
                for action in actions { publish("action", action) }
            }
            if case .success(let status) = outcome { await readTimeline(client, status: status) }
            try? await Task.sleep(until: started + Self.interval, clock: clock)
        }
    }

    /// Reads the timeline from the first node seen on a newer version: the playlist the wall plays
    /// (which `wallctl load` or a schedule may have changed from the config's), with each entry's
    /// real in and out points.
    ///
    /// Its segment in force is looked up again at every status of the first node, so a change the
    /// version made for later (a cue's clip, and the playlist it returns to) shows when it happens.
    private func readTimeline(_ client: NodeClient, status: NodeStatus) async {
        guard let master = status.masterTime else { return }
        if let version = status.timeline?.version,
            state.withLock({ state in
                guard version > state.timelineVersion else { return false }
                state.timelineVersion = version
                return true
            }),
            let timeline = try? await client.timeline()
        {
            state.withLock { $0.timeline = timeline }
        } else if client.id != wall.clients.first?.id {
            return
        }
        state.withLock { state in
            guard let timeline = state.timeline else { return }
            let segment = timeline.segment(at: master)
            let view = PlaylistView(
                version: timeline.version, show: "\(segment.show)", loops: segment.playlist.loops,
                entries: segment.playlist.entries.map {
                    WallInfo.Entry(media: $0.media, inS: $0.inPoint.seconds, outS: $0.outPoint.seconds)
                })
            guard view != state.playlist else { return }
            state.playlist = view
            publish("playlist", view)
        }
    }

    private func watchContent(_ client: NodeClient) async {
        while !Task.isCancelled {
            if let report = try? await client.content() {
                state.withLock { state in
                    let before = state.views[client.id]!
                    let after = before.updated(with: report)
                    state.views[client.id] = after
                    if after != before { publish("node", after) }
                }
            }
            try? await Task.sleep(for: Self.contentInterval)
        }
    }

    /// The nodes' frame records for the drift view: from the frames they present once watched.
    private func watchFrames() async {
        var lastSent = Int64(0)
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.framesInterval)
            let after = state.withLock { state in
                for (id, view) in state.views where state.drift.after[id] == nil && view.reachable {
                    state.drift.start(id, after: view.framesPresented ?? 0)
                }
                return state.drift.after
            }
            let replies = await wall.eachNode { client throws(ControlError) in
                guard let sequence = after[client.id] else {
                    throw .notReady(nodes: [client.id: "not answering yet"])
                }
                return try await client.frames(after: sequence)
            }
            let now = Self.unixMs() / 1000
            let due = state.withLock { state -> DriftWatch? in
                for case .success(let reply) in replies.values { state.drift.ingest(reply, now: now) }
                return now > lastSent ? state.drift : nil
            }
            // The view (a drift report over every pair: tens of milliseconds on a 16-node wall) is
            // made from a copy, outside the lock: every status answer takes the lock, and a task
            // blocked on it holds one of the few threads the others' answers resume on. (`drift`
            // is started over only between two runs of this task, never while it makes a view.)
            guard let drift = due else { continue }
            let view = drift.view()
            state.withLock { state in
                state.driftView = view
                publish("drift", view)
            }
            lastSent = now
        }
    }

    /// One node's thumbnail at a time, each node's at most every `thumbnailInterval` (longer on a
    /// large wall).
    private func watchThumbnails() async {
        let config = wall.config
        let interval = max(Self.thumbnailInterval, Self.thumbnailIntervalPerNode * wall.clients.count)
        while !Task.isCancelled {
            let round = ContinuousClock.now
            for client in wall.clients {
                guard !Task.isCancelled else { return }
                guard state.withLock({ $0.views[client.id]?.reachable == true }),
                    let tile = config.node(client.id)?.tile, tile.width > 0, tile.height > 0
                else { continue }
                let width = Self.thumbnailWidth
                let height = max(8, min(512, width * tile.height / tile.width))
                guard let snapshot = try? await client.snapshot(width: width, height: height) else { continue }
                let picture = Thumbnail.bmp(rgb: snapshot.rgb, width: snapshot.width, height: snapshot.height)
                state.withLock { state in
                    state.thumbnails[client.id] = picture
                    state.views[client.id]?.thumbnail += 1
                    publish("node", state.views[client.id]!)
                }
            }
            try? await Task.sleep(until: round + interval, clock: .continuous)
        }
    }

    /// A comment line every 15 s: proxies and browsers keep an idle stream open.
    private func keepAlive() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(15))
            for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(": keep-alive\n\n") }
        }
    }

    // MARK: Actions and pushes

    /// An audit record, shown to every console.
    func record(_ audit: AuditRecord) {
        state.withLock { state in
            state.audit = Array((state.audit + [audit]).suffix(AuditLog.recentKept))
            publish("audit", audit)
        }
    }

    /// Notes an action: started, sent, or failed; every console hears of it.
    func record(_ action: ActionRecord) {
        let event = ConsoleEvent(
            atUnixMs: Self.unixMs(), node: nil, kind: .action,
            text: action.error.map { "\(action.verb) failed: \($0)" }
                ?? action.version.map { "\(action.verb): timeline version \($0) sent to every node" }
                ?? "\(action.verb): carrying out")
        state.withLock { state in
            var action = action
            if let index = state.actions.firstIndex(where: { $0.id == action.id }) {
                // What the monitor saw of it meanwhile stays.
                action.heldUnixMs.merge(state.actions[index].heldUnixMs) { mine, _ in mine }
                action.takenUnixMs.merge(state.actions[index].takenUnixMs) { mine, _ in mine }
                state.actions[index] = action
            } else {
                state.actions = Array((state.actions + [action]).suffix(Self.actionsKept))
            }
            state.events = Array((state.events + [event]).suffix(Self.eventsKept))
            publish("action", action)
            publish("event", event)
        }
    }

    /// The master's time now, by the node that answered last (nanoseconds).
    func masterNow() -> Int64? {
        let now = Self.unixMs()
        return state.withLock { $0.masterNow(unixMs: now) }
    }

    func record(_ push: PushView) {
        state.withLock { state in
            state.push = push
            publish("push", push)
        }
    }
}

extension WallMonitor.State {
    /// Notes, for each action, when `view`'s node was first seen holding its version (or a newer
    /// one), and when first seen carrying it out: past the edit's master time, on it, settled, and
    /// in step when it plays (what `wallctl` waits for before it returns). Returns the actions
    /// that changed.
    mutating func noteTaken(by view: NodeView, at now: Int64) -> [ActionRecord] {
        guard let version = view.version else { return [] }
        var changed: [ActionRecord] = []
        for index in actions.indices {
            guard let wanted = actions[index].version, version >= wanted else { continue }
            var action = actions[index]
            if action.heldUnixMs[view.id] == nil { action.heldUnixMs[view.id] = now }
            let due = action.effectiveMasterNs.map { (view.masterTimeNs ?? .min) >= $0 } ?? true
            let carried =
                due
                && TimelineReport.lack(
                    toCarryOut: wanted, version: version, state: view.state, settled: view.settled,
                    problem: view.problem, inStep: view.inStep) == nil
            if carried, action.takenUnixMs[view.id] == nil { action.takenUnixMs[view.id] = now }
            if action != actions[index] {
                actions[index] = action
                changed.append(action)
            }
        }
        return changed
    }

    /// The master's time now, by the node that answered last (nanoseconds), if any answered.
    func masterNow(unixMs now: Int64) -> Int64? {
        views.values.compactMap { view -> (Int64, Int64)? in
            guard view.reachable, let master = view.masterTimeNs, let answered = view.answeredAtUnixMs else {
                return nil
            }
            return (answered, master + (now - answered) * 1_000_000)
        }.max { $0.0 < $1.0 }?.1
    }
}

/// One action an operator took from a console: the timeline version it made, and when each node
/// was seen carrying that version out.
public struct ActionRecord: Sendable, Hashable, Codable {
    public var id: Int
    public var verb: String
    public var requestedUnixMs: Int64
    public var sentUnixMs: Int64?
    public var version: UInt64?
    public var error: String?
    /// The master time the edit takes effect at (nanoseconds), and when that was on this
    /// machine's clock, by the master time the nodes last told.
    public var effectiveMasterNs: Int64?
    public var dueUnixMs: Int64?
    /// By node: when it was first seen holding the version, and carrying it out.
    public var heldUnixMs: [String: Int64] = [:]
    public var takenUnixMs: [String: Int64] = [:]
}

/// A push from a console: the file, and each node's progress toward holding it.
public struct PushView: Sendable, Hashable, Codable {
    public var name: String
    public var size: UInt64
    public var sha256: String?
    /// "uploading", "distributing", "done" or "failed".
    public var state: String
    public var error: String?
    public var nodes: [Progress]

    public struct Progress: Sendable, Hashable, Codable {
        public var node: String
        public var have: UInt64
        public var total: UInt64
        public var done: Bool
        public var problem: String?
    }
}

/// The playlist the wall's newest timeline plays, as a node holds it.
public struct PlaylistView: Sendable, Hashable, Codable {
    public var version: UInt64
    public var show: String
    public var loops: Bool
    public var entries: [WallInfo.Entry]
}

/// What the page lays out and labels: sent once, in `hello`.
public struct WallInfo: Sendable, Hashable, Codable {
    public struct Tile: Sendable, Hashable, Codable {
        public var id: String
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
    }

    public struct Entry: Sendable, Hashable, Codable {
        public var media: String
        public var inS: Double?
        public var outS: Double?
    }

    public var name: String
    public var canvasWidth: Int
    public var canvasHeight: Int
    public var tiles: [Tile]
    public var playlist: [Entry]
    public var loops: Bool
    public var cues: [String: String]
    public var schedule: [String]
    public var csrf: String
    public var uploadLimitBytes: UInt64
    /// The session's role: `operator`, or `viewer` (read only: the page shows no control it may use).
    public var role: String?
}

/// The first event a console receives: the whole picture.
struct Hello: Sendable, Encodable {
    var wall: WallInfo
    var nodes: [NodeView]
    var events: [ConsoleEvent]
    var drift: DriftWatch.View
    var actions: [ActionRecord]
    var push: PushView?
    var playlist: PlaylistView?
    var audit: [AuditRecord]
}
