import LockstepTime
import SyncClock
import WallTimeline

/// The node's control API over HTTP/JSON: paths, requests and replies shared by `wallnode` and
/// `wallctl`.
///
/// A node takes one command: a newer timeline (`PUT /timeline`). Every verb of the wall is an edit
/// of it, made by the controller and sent to every node, so there is one way to change what a
/// screen shows and a node that restarts comes back to it.
public enum ControlPath {
    /// GET: `NodeStatus`.
    public static let status = "/status"
    /// GET `?after=SEQ`: `FramesReply`, the frames presented since.
    public static let frames = "/frames"
    /// GET `?width=W&height=H[&atNs=T]`: the frame on screen now, or at master time T, as raw RGB
    /// (`SnapshotHeader`s say which).
    public static let snapshot = "/snapshot"
    /// GET: Prometheus text.
    public static let metrics = "/metrics"
    /// GET: the timeline the node follows (`Timeline`); PUT a newer timeline: the node follows it
    /// from then on, and keeps it across restarts.
    public static let timeline = "/timeline"
    /// POST `MediaDurationsRequest`: how long this node's files for the given media are.
    public static let mediaDurations = "/media/durations"
    /// GET: `NodeCheck`, what `wallctl check` compares before a show.
    public static let check = "/check"
    /// GET: `ContentReport`, the content this node holds and fetches. `GET /content/<sha256>`: a
    /// complete file of its store (`Range` honoured), for its peers.
    public static let content = "/content"
    /// POST `ContentFetchRequest`: fetch these files (from peers that hold them, else the origins).
    public static let contentFetch = "/content/fetch"
    /// GET `?fromUnixMs=A&toUnixMs=B&limit=N`: `PlaysReply`, what the screen presented in [A, B)
    /// (milliseconds since 1970, UTC; the whole log without them), its proof of play.
    public static let plays = "/plays"
    /// The one-shot commands of earlier versions, answered 410 with the `wallctl` command that
    /// replaces each (a preroll is part of every change now: a node prepares it before its time).
    public static let retired = [
        "/load": "wallctl load", "/preroll": "wallctl start, which prepares every node first",
        "/start": "wallctl start",
        "/pause": "wallctl pause", "/seek": "wallctl seek", "/stop": "wallctl stop", "/identify": "wallctl identify",
    ]
}

/// The headers that name the wall a request is for: a node refuses a request for another wall
/// (409, naming both), and every request that changes something must name its wall.
public enum WallHeader {
    /// The wall's name, as its config says.
    public static let wall = "Lockstep-Wall"
    /// SHA-256 of the controller's config text, when it has one.
    public static let configSHA256 = "Lockstep-Config-SHA256"
}

/// The headers of a `GET /snapshot` reply: times in integer nanoseconds (docs/JSON.md).
public enum SnapshotHeader {
    public static let width = "X-Frame-Width"
    public static let height = "X-Frame-Height"
    /// The frame's time in its item.
    public static let presentationTimestamp = "X-Frame-Presentation-Timestamp-Ns"
    /// The node's master-clock time when it copied the frame.
    public static let copiedAt = "X-Master-Time-Ns"
}

/// `GET /check`: what a node runs with, for `wallctl check` to compare with the config.
public struct NodeCheck: Sendable, Hashable, Codable {
    public var node: String
    /// The Lockstep version the node runs.
    public var version: String
    /// SHA-256 of the node's config text (`WallConfig.digest`).
    public var configSHA256: String?
    /// Each sink the node would play through, and whether GStreamer can build it.
    public var sinks: [SinkCheck]
    /// The still the node shows between shows (the config's `still`), and why it cannot (nil when
    /// it can, or when there is none).
    public var still: String?
    public var stillProblem: String?
    /// What a frame of the node's media costs its machine, measured as the node answers (nil from
    /// nodes that do not measure).
    public var frameCost: FrameCostReport?

    public init(
        node: String, version: String, configSHA256: String?, sinks: [SinkCheck], still: String? = nil,
        stillProblem: String? = nil, frameCost: FrameCostReport? = nil
    ) {
        self.node = node
        self.version = version
        self.configSHA256 = configSHA256
        self.sinks = sinks
        self.still = still
        self.stillProblem = stillProblem
        self.frameCost = frameCost
    }
}

/// A node's frame cost (`FrameCost`): decoding a frame of `media` and bringing it to the screen's
/// tile, size and format, at full speed on the node's machine as it is, against the frame period.
public struct FrameCostReport: Sendable, Hashable, Codable {
    public var media: String
    @OptionalNanosecondsCoded public var perFrame: MediaTime?
    @OptionalNanosecondsCoded public var framePeriod: MediaTime?
    public var frames: Int?
    /// Why it could not be measured, if it could not.
    public var problem: String?

    enum CodingKeys: String, CodingKey {
        case media, frames, problem
        case perFrame = "perFrameNs", framePeriod = "framePeriodNs"
    }

    public init(
        media: String, perFrame: MediaTime?, framePeriod: MediaTime?, frames: Int?, problem: String? = nil
    ) {
        self.media = media
        self.perFrame = perFrame
        self.framePeriod = framePeriod
        self.frames = frames
        self.problem = problem
    }

    /// A frame that costs more than this share of the frame period leaves the sink, a busy moment
    /// and a cut's preparation too little room.
    public static let warningShare = 2.0 / 3.0

    /// The share of the frame period a frame costs, when both are known.
    public var share: Double? {
        guard let perFrame, let framePeriod, framePeriod > .zero else { return nil }
        return perFrame.seconds / framePeriod.seconds
    }

    /// "7.9 ms of the 33.3 ms frame period (24 %)".
    public var sentence: String {
        guard let perFrame else { return "not measured (\(problem ?? "no reason given"))" }
        let cost = String(format: "%.1f ms", perFrame.seconds * 1000)
        guard let framePeriod, let share else { return "\(cost) a frame" }
        return "\(cost) of the \(String(format: "%.1f", framePeriod.seconds * 1000)) ms frame period "
            + "(\(Int((share * 100).rounded())) %)"
    }
}

/// One sink of a node: its role (video, audio), its description, and why it cannot be built (nil
/// when it can).
public struct SinkCheck: Sendable, Hashable, Codable {
    public var role: String
    public var description: String
    public var problem: String?

    public init(role: String, description: String, problem: String?) {
        self.role = role
        self.description = description
        self.problem = problem
    }
}

/// Where a node is on its timeline, in `NodeStatus`.
public struct TimelineReport: Sendable, Hashable, Codable {
    public var version: UInt64
    /// waiting, playing, paused or ended: what the timeline calls for now.
    public var state: String
    /// The playlist entry and pass the timeline calls for now.
    public var entry: Int
    public var pass: Int
    /// The item time the timeline calls for now.
    @NanosecondsCoded public var itemTime: MediaTime
    /// Whether the last frames this node presented were where the timeline says (nil until a
    /// frame was judged).
    public var inStep: Bool?
    /// How far behind the timeline the node's last frame was (negative: ahead).
    @OptionalNanosecondsCoded public var offset: MediaTime?
    /// Times the node found itself off the timeline and started again where the wall is.
    public var rejoins: Int
    /// Why the node does not follow the timeline right now, if it does not.
    public var problem: String?
    /// Whether the node carries out the segment of the timeline in force: what a controller waits
    /// for after an edit. Nil from nodes that do not say.
    public var settled: Bool?
    /// What the screens show: playlist, stopped, black, still IMAGE or testCard.
    public var show: String?
    /// Whether the timeline was made with a config other than the node's (`configSHA256`).
    public var configDiffers: Bool?
    /// The files the timeline names (media and stills) that are not in this node's media roots:
    /// content not yet copied, or deleted. Nil from nodes that do not say.
    public var missingMedia: [String]?
    /// The cues this node holds prerolled in standby while it plays: each cuts a few frames after
    /// its trigger here. Nil from nodes that do not say.
    public var cuesReady: [String]?
    /// The timeline version of the last start this node made ready, and how far ahead of its time
    /// it was ready (negative: too late, so it anchored again further ahead). Nil from nodes that
    /// do not say, or before a start.
    public var lastStartVersion: UInt64?
    /// That start's master time.
    @OptionalNanosecondsCoded public var lastStartAt: MediaTime?
    @OptionalNanosecondsCoded public var lastStartSlack: MediaTime?

    enum CodingKeys: String, CodingKey {
        case version, state, entry, pass, inStep, rejoins, problem, settled, show, configDiffers, missingMedia
        case cuesReady, lastStartVersion
        case itemTime = "itemTimeNs", offset = "offsetNs", lastStartSlack = "lastStartSlackNs", lastStartAt =
            "lastStartAtNs"
    }

    public init(
        version: UInt64, state: String, entry: Int, pass: Int, itemTime: MediaTime, inStep: Bool?, offset: MediaTime?,
        rejoins: Int, problem: String?
    ) {
        self.version = version
        self.state = state
        self.entry = entry
        self.pass = pass
        self.itemTime = itemTime
        self.inStep = inStep
        self.offset = offset
        self.rejoins = rejoins
        self.problem = problem
    }
}

/// `POST /media/durations`: media paths or `{id}` templates as a playlist names them.
extension TimelineReport {
    /// What a node still lacks to carry out timeline `wanted` (nil: it carries it out): on it or a
    /// newer version, settled on the segment in force, without a problem, and in step when it
    /// plays. What `wallctl` waits for after an edit, and what the console counts as taken.
    public static func lack(
        toCarryOut wanted: UInt64, version: UInt64?, state: String?, settled: Bool?, problem: String?, inStep: Bool?
    ) -> String? {
        guard let version, version >= wanted else { return "on version \(version.map { "\($0)" } ?? "none")" }
        if let problem { return problem }
        if settled == false { return "preparing \(state ?? "")" }
        if state == TimelinePosition.State.playing.rawValue, inStep != true { return "not in step yet" }
        return nil
    }

    /// What this node still lacks to carry out timeline `wanted` (nil: it carries it out).
    public func lack(toCarryOut wanted: UInt64) -> String? {
        Self.lack(
            toCarryOut: wanted, version: version, state: state, settled: settled, problem: problem, inStep: inStep)
    }
}

public struct MediaDurationsRequest: Sendable, Hashable, Codable {
    public var media: [String]
    /// For each of `media`, the content the wall distributes for it, if it does: the node measures
    /// its own copy from its content store.
    public var content: [ContentID?]?

    public init(media: [String], content: [ContentID?]? = nil) {
        self.media = media
        self.content = content
    }
}

/// A file a node is asked to hold, by what it holds and by the name an operator knows it by.
public struct ContentNeed: Sendable, Hashable, Codable {
    public var id: ContentID
    public var name: String

    public init(id: ContentID, name: String) {
        self.id = id
        self.name = name
    }
}

/// `POST /content/fetch`: files to fetch, from peers that hold them or else from `origins`
/// (`http://HOST:PORT` of a `wallctl push` or `wallctl serve`).
public struct ContentFetchRequest: Sendable, Hashable, Codable {
    public var content: [ContentNeed]
    public var origins: [String]

    public init(content: [ContentNeed], origins: [String]) {
        self.content = content
        self.origins = origins
    }
}

/// `GET /content`: what a node holds and what it is fetching.
public struct ContentReport: Sendable, Hashable, Codable {
    public var node: String
    public var held: [ContentID]
    public var transfers: [ContentTransfer]
    /// Bytes free for the store.
    public var freeBytes: UInt64?

    public init(node: String, held: [ContentID], transfers: [ContentTransfer], freeBytes: UInt64?) {
        self.node = node
        self.held = held
        self.transfers = transfers
        self.freeBytes = freeBytes
    }
}

/// One file a node wants and does not hold yet.
public struct ContentTransfer: Sendable, Hashable, Codable {
    public var id: ContentID
    public var name: String
    /// Bytes held so far (a cut transfer resumes from here).
    public var have: UInt64
    /// Over the last seconds.
    public var bytesPerSecond: Double?
    /// Where it comes from now: a peer's id or an origin's address; nil while waiting for one.
    public var source: String?
    /// Why the last attempt failed, if it did.
    public var problem: String?

    public init(
        id: ContentID, name: String, have: UInt64, bytesPerSecond: Double? = nil, source: String? = nil,
        problem: String? = nil
    ) {
        self.id = id
        self.name = name
        self.have = have
        self.bytesPerSecond = bytesPerSecond
        self.source = source
        self.problem = problem
    }
}

/// The lengths of this node's files for each requested media, in order: exact `MediaTime`s, as the
/// timeline keeps them (see `NanosecondsCoded`).
public struct MediaDurationsReply: Sendable, Hashable, Codable {
    public var node: String
    public var durations: [MediaTime]

    public init(node: String, durations: [MediaTime]) {
        self.node = node
        self.durations = durations
    }
}

/// A node's state, as `GET /status` reports it.
public struct NodeStatus: Sendable, Hashable, Codable {
    public var id: String
    /// The wall the node belongs to (its config's `name`).
    public var wall: String?
    /// The node's estimate of the master clock's time when it answered.
    @OptionalNanosecondsCoded public var masterTime: MediaTime?
    /// The node machine's CLOCK_MONOTONIC at the moment `masterTime` was read, so an observer that
    /// knows the master's true time (a master on a simulated clock) can measure the node's clock error.
    @OptionalNanosecondsCoded public var monotonicTime: MediaTime?
    public var clock: ClockReport
    public var player: PlayerReport
    /// The timeline the node follows, if any.
    public var timeline: TimelineReport?
    /// The node's services that cannot work (its content store, its show-control input), each with
    /// why; absent when all work. The screen plays on without them.
    public var problems: [ServiceProblem]?
    /// The machine's health (`MachineHealth`); absent from a node too old to give it.
    public var health: MachineHealth?

    enum CodingKeys: String, CodingKey {
        case id, wall, clock, player, timeline, problems, health
        case masterTime = "masterTimeNs", monotonicTime = "monotonicTimeNs"
    }

    public init(
        id: String, wall: String? = nil, masterTime: MediaTime?, monotonicTime: MediaTime? = nil, clock: ClockReport,
        player: PlayerReport,
        timeline: TimelineReport? = nil, problems: [ServiceProblem] = [], health: MachineHealth? = nil
    ) {
        self.health = health
        self.id = id
        self.wall = wall
        self.masterTime = masterTime
        self.monotonicTime = monotonicTime
        self.clock = clock
        self.player = player
        self.timeline = timeline
        self.problems = problems.isEmpty ? nil : problems
    }
}

/// A service of a node that cannot work, and why.
public struct ServiceProblem: Sendable, Hashable, Codable {
    /// `content`, `machine` (`MachineHealth.problems`), `schedule` (the config's schedule cannot
    /// play on this master) or `show-control`.
    public var service: String
    public var problem: String

    public init(service: String, problem: String) {
        self.service = service
        self.problem = problem
    }
}

/// How well a node follows the master clock.
public struct ClockReport: Sendable, Hashable, Codable {
    /// unsynced, locking, locked or holdover.
    public var state: ClockState
    /// Whether a wall can play and start on this clock now (`ClockStatus.isUsable`: locked, or in
    /// holdover within its usable error bound): the node's own verdict, which every reader takes.
    public var usable: Bool
    public var server: String
    /// The master time minus the local time.
    @OptionalNanosecondsCoded public var offset: MediaTime?
    /// How far the node's master time may be from the true one, if the path's shortest delays are
    /// the same both ways (as NTP assumes; `ClockStatus.errorBound`).
    @OptionalNanosecondsCoded public var errorBound: MediaTime?
    /// The bound that holds whatever the path's asymmetry: it includes half the shortest round trip.
    @OptionalNanosecondsCoded public var guaranteedErrorBound: MediaTime?
    @OptionalNanosecondsCoded public var roundTrip: MediaTime?
    public var ratePPM: Double?
    /// Whether the node serves the master clock itself.
    public var serving: Bool
    /// The master's timeline (epoch) the node follows, when the master names it.
    public var epoch: UInt64?
    /// Whether the master serves real time (UTC), which a schedule needs; nil when unknown.
    public var realtime: Bool?
    /// The followed source's distance from the master: 0 when it is the master.
    public var stratum: Int?
    /// Where the node relays the time it follows, if it does (the config's `serve-clock`).
    public var relaying: String?
    /// Every clock source in order of preference, and how it stands.
    public var sources: [ClockSourceReport]?
    /// Of `errorBound`, the part the followed source passed on: its own bound from the master
    /// (zero when it is the master). Two nodes following one source share that part of their error.
    /// Nil when the node follows no source now (holdover, or none yet).
    @OptionalNanosecondsCoded public var inheritedErrorBound: MediaTime?
    /// How far this node's clock is from each other node that serves the time it follows, measured
    /// directly between the two (`PeerClockReport`); nil when no other node serves it.
    public var peers: [PeerClockReport]?

    enum CodingKeys: String, CodingKey {
        case state, usable, server, ratePPM, serving, epoch, realtime, stratum, relaying, sources, peers
        case offset = "offsetNs", errorBound = "errorBoundNs", guaranteedErrorBound = "guaranteedErrorBoundNs"
        case roundTrip = "roundTripNs", inheritedErrorBound = "inheritedErrorBoundNs"
    }

    public init(
        state: ClockState, usable: Bool, server: String, offset: MediaTime? = nil, errorBound: MediaTime? = nil,
        guaranteedErrorBound: MediaTime? = nil, roundTrip: MediaTime? = nil, ratePPM: Double? = nil,
        serving: Bool = false, epoch: UInt64? = nil, realtime: Bool? = nil, stratum: Int? = nil,
        relaying: String? = nil, sources: [ClockSourceReport]? = nil, inheritedErrorBound: MediaTime? = nil,
        peers: [PeerClockReport]? = nil
    ) {
        self.peers = peers
        self.realtime = realtime
        self.inheritedErrorBound = inheritedErrorBound
        self.stratum = stratum
        self.relaying = relaying
        self.sources = sources
        self.guaranteedErrorBound = guaranteedErrorBound
        self.epoch = epoch
        self.state = state
        self.usable = usable
        self.server = server
        self.offset = offset
        self.errorBound = errorBound
        self.roundTrip = roundTrip
        self.ratePPM = ratePPM
        self.serving = serving
    }

    /// Where the node's clock error comes from, for a report that sets nodes against each other.
    public var lineage: ClockLineage {
        ClockLineage(
            source: state == .locked ? server : nil, relaying: relaying, inheritedErrorBound: inheritedErrorBound)
    }
}

/// Where a node's clock error comes from: the source it follows now, where it relays its own time,
/// and how much of its error bound it inherited from the source. Two nodes following one source
/// share the source's error, and a node following another shares all of that node's error, so
/// their clocks can be no further apart than the parts of their bounds of their own.
public struct ClockLineage: Sendable, Hashable, Codable {
    /// The source followed now, as the config names it; nil in holdover or before a source is chosen.
    public var source: String?
    /// Where the node serves the time it follows (`serve-clock`), if it does.
    public var relaying: String?
    /// Of the node's error bound, the part the source passed on; nil when following none.
    @OptionalNanosecondsCoded public var inheritedErrorBound: MediaTime?

    enum CodingKeys: String, CodingKey {
        case source, relaying
        case inheritedErrorBound = "inheritedErrorBoundNs"
    }

    public init(source: String?, relaying: String?, inheritedErrorBound: MediaTime?) {
        self.source = source
        self.relaying = relaying
        self.inheritedErrorBound = inheritedErrorBound
    }
}

/// One clock source as a node sees it.
public struct ClockSourceReport: Sendable, Hashable, Codable {
    public var source: String
    /// The node's client of it: unsynced, locking, locked or holdover.
    public var state: ClockState
    /// Whether the node follows it, has it on standby, or what keeps it from following it. Nil
    /// from a node too old to say, unless its sentence was "followed" or "standby".
    public var kind: SourceStanding?
    /// The same as a sentence: followed, standby, or why it is not followed.
    public var standing: String
    @OptionalNanosecondsCoded public var errorBound: MediaTime?

    enum CodingKeys: String, CodingKey {
        case source, state, kind, standing
        case errorBound = "errorBoundNs"
    }

    public init(
        source: String, state: ClockState, kind: SourceStanding?, standing: String, errorBound: MediaTime? = nil
    ) {
        self.source = source
        self.state = state
        self.kind = kind
        self.standing = standing
        self.errorBound = errorBound
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        source = try container.decode(String.self, forKey: .source)
        state = try container.decode(ClockState.self, forKey: .state)
        standing = try container.decode(String.self, forKey: .standing)
        kind = try container.decodeIfPresent(SourceStanding.self, forKey: .kind) ?? SourceStanding(rawValue: standing)
        _errorBound = try container.decode(OptionalNanosecondsCoded.self, forKey: .errorBound)
    }
}

/// Another node's clock as this node measures it directly: the two exchange time with each other
/// (the other serves the time it follows, `serve-clock`), so what their paths to the master do not
/// show, this does. Two nodes whose paths to the master differ in asymmetry follow clocks apart by
/// half the difference, and each still finds its own error small; their exchange sees the gap.
///
/// The other's time minus this node's lies within `offset ± guaranteedErrorBound` whatever the
/// asymmetry of the path between them, so the pair's clocks are at most `|offset| +
/// guaranteedErrorBound` apart: a bound on the pair that needs no symmetric path, tight where the
/// two are near each other on the network.
public struct PeerClockReport: Sendable, Hashable, Codable {
    /// The other node's id.
    public var node: String
    /// The other's clock minus this node's, as measured.
    @NanosecondsCoded public var offset: MediaTime
    /// How far `offset` may be from the truth whatever the direct path's asymmetry.
    @NanosecondsCoded public var guaranteedErrorBound: MediaTime
    /// The shortest round trip between the two.
    @OptionalNanosecondsCoded public var roundTrip: MediaTime?

    enum CodingKeys: String, CodingKey {
        case node
        case offset = "offsetNs", guaranteedErrorBound = "guaranteedErrorBoundNs", roundTrip = "roundTripNs"
    }

    public init(node: String, offset: MediaTime, guaranteedErrorBound: MediaTime, roundTrip: MediaTime? = nil) {
        self.node = node
        self.offset = offset
        self.guaranteedErrorBound = guaranteedErrorBound
        self.roundTrip = roundTrip
    }

    /// How far apart the two clocks may be at most: `|offset| + guaranteedErrorBound`.
    public var pairBound: MediaTime {
        offset.magnitude + guaranteedErrorBound
    }
}

/// What a node's player is doing.
public struct PlayerReport: Sendable, Hashable, Codable {
    /// The player's status: unknown, readyToPlay, failed.
    public var status: String
    /// The media file loaded, if any.
    public var media: String?
    /// The item's status: unknown, readyToPlay, failed.
    public var itemStatus: String?
    /// paused, waitingToPlayAtSpecifiedRate or playing.
    public var timeControlStatus: String
    public var waitingReason: String?
    public var rate: Float
    @NanosecondsCoded public var position: MediaTime
    /// Whether the first frame sits in the sink, ready for an exact start.
    public var prerolled: Bool
    public var framesPresented: UInt64
    public var framesLate: UInt64
    public var framesDropped: UInt64
    /// How the render thread is scheduled ("SCHED_FIFO 50", "normal (...)").
    public var renderThread: String
    public var error: String?
    /// Pipelines that wedged inside GStreamer when replaced and were left on their own threads
    /// (each holds a thread and its memory until the node restarts); absent from older nodes.
    public var pipelinesAbandoned: Int?

    enum CodingKeys: String, CodingKey {
        case status, media, itemStatus, timeControlStatus, waitingReason, rate, prerolled, framesPresented, framesLate
        case framesDropped, renderThread, error, pipelinesAbandoned
        case position = "positionNs"
    }

    public init(
        status: String, media: String?, itemStatus: String?, timeControlStatus: String, waitingReason: String?,
        rate: Float, position: MediaTime, prerolled: Bool, framesPresented: UInt64, framesLate: UInt64,
        framesDropped: UInt64, renderThread: String, error: String?, pipelinesAbandoned: Int? = nil
    ) {
        self.status = status
        self.media = media
        self.itemStatus = itemStatus
        self.timeControlStatus = timeControlStatus
        self.waitingReason = waitingReason
        self.rate = rate
        self.position = position
        self.prerolled = prerolled
        self.framesPresented = framesPresented
        self.framesLate = framesLate
        self.framesDropped = framesDropped
        self.renderThread = renderThread
        self.error = error
        self.pipelinesAbandoned = pipelinesAbandoned
    }
}

/// The reply to every command: the node's status after it, or what went wrong.
public struct ControlReply: Sendable, Hashable, Codable {
    public var ok: Bool
    public var error: String?
    public var status: NodeStatus?

    public init(ok: Bool, error: String? = nil, status: NodeStatus?) {
        self.ok = ok
        self.error = error
        self.status = status
    }
}

/// One frame as the node's video sink presented it.
public struct FrameRecord: Sendable, Hashable, Codable {
    /// Numbers every record of a node, from 1, without gaps.
    public var sequence: UInt64
    /// The frame's timestamp in its item.
    @NanosecondsCoded public var presentationTimestamp: MediaTime
    /// The frame's running time in the node's pipeline: the same on every node started together,
    /// but a node that rejoins a timeline starts its own anew.
    @NanosecondsCoded public var runningTime: MediaTime
    /// The master-clock time at which the sink presented it (after its clock wait).
    @NanosecondsCoded public var presentedAt: MediaTime
    /// The master-clock time at which it was due.
    @NanosecondsCoded public var dueAt: MediaTime
    /// The master-clock time the frame stands for on the wall: when its light is due to leave the
    /// screen (`dueAt` plus the node's display latency). The same frame has the same wall time on
    /// every node, however each started; nil from nodes that do not say.
    @OptionalNanosecondsCoded public var wallTime: MediaTime?

    enum CodingKeys: String, CodingKey {
        case sequence
        case presentationTimestamp = "presentationTimestampNs", runningTime = "runningTimeNs"
        case presentedAt = "presentedAtNs", dueAt = "dueAtNs", wallTime = "wallTimeNs"
    }

    public init(
        sequence: UInt64, presentationTimestamp: MediaTime, runningTime: MediaTime, presentedAt: MediaTime,
        dueAt: MediaTime, wallTime: MediaTime? = nil
    ) {
        self.wallTime = wallTime
        self.sequence = sequence
        self.presentationTimestamp = presentationTimestamp
        self.runningTime = runningTime
        self.presentedAt = presentedAt
        self.dueAt = dueAt
    }
}

/// `GET /frames?after=SEQ`.
public struct FramesReply: Sendable, Hashable, Codable {
    public var node: String
    /// The records after the sequence asked for, oldest first.
    public var records: [FrameRecord]
    /// Records after the one asked for that the node no longer holds (the reader fell behind).
    public var missed: UInt64
    /// The node's clock error bound when it answered.
    @OptionalNanosecondsCoded public var clockErrorBound: MediaTime?
    /// Where that bound's error comes from when it answered; nil from nodes that do not say.
    public var clockLineage: ClockLineage?
    /// The bound that holds without assuming the path to the master symmetric
    /// (`ClockReport.guaranteedErrorBound`); nil from nodes that do not say.
    @OptionalNanosecondsCoded public var guaranteedClockErrorBound: MediaTime?
    /// The other nodes' clocks as this one measured them directly (`ClockReport.peers`).
    public var peerClocks: [PeerClockReport]?

    enum CodingKeys: String, CodingKey {
        case node, records, missed, clockLineage, peerClocks
        case clockErrorBound = "clockErrorBoundNs", guaranteedClockErrorBound = "guaranteedClockErrorBoundNs"
    }

    public init(
        node: String, records: [FrameRecord], missed: UInt64, clockErrorBound: MediaTime?,
        clockLineage: ClockLineage? = nil, guaranteedClockErrorBound: MediaTime? = nil,
        peerClocks: [PeerClockReport]? = nil
    ) {
        self.peerClocks = peerClocks
        self.node = node
        self.records = records
        self.missed = missed
        self.clockErrorBound = clockErrorBound
        self.clockLineage = clockLineage
        self.guaranteedClockErrorBound = guaranteedClockErrorBound
    }
}
