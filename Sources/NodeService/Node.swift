import Foundation
import LockstepCLI
import LockstepLocks
import LockstepTime
import Logging
import SyncClock
import WallContent
import WallControl
import WallDisplay
import WallFollower
import WallPlayer
import WallProtocol
import WallTimeline

/// One screen of the wall: it follows the wall's timeline (`Follower`) with its screen and its
/// clock, keeps the timeline across restarts, finds it at its peers, and answers the control API.
///
/// Everything a command changes is the timeline: there is no other way to tell a node what to
/// show, so a node that restarts after any command comes back to the same picture as the others.
public final class Node: Sendable {
    public let settings: NodeSettings
    public let screen: NodeScreen
    public let clock: ClockFollower
    public let frames: FrameLog
    /// The content the wall distributes: this node's store, and what it fetches.
    public let content: NodeContent
    /// What the screen presented, from when to when: its proof of play.
    public let plays: PlayLog
    let follower: Follower
    private let logger: Logger
    /// Why the stored timeline could not be used at start, until a timeline is followed.
    private let storeProblem: Mutex<String?>
    /// What keeps one of the node's services from working, by service (`content`,
    /// `show-control`): the screen plays on, and the status, the metrics and the console say so.
    private let serviceProblems = Mutex<[String: String]>([:])
    /// The machine's health, read as the status is answered.
    private let machine = MachineSampler()
    /// Which timelines the node takes from controllers and peers (`TimelineAdmission`).
    private let admission = Mutex(TimelineAdmission())
    /// One frame cost measurement at a time (`frameCost()`).
    private let measuring = OneAtATime()

    public init(settings: NodeSettings, screen: NodeScreen, clock: ClockFollower, logger: Logger) {
        self.settings = settings
        self.screen = screen
        self.clock = clock
        frames = screen.frames
        let roots = settings.mediaRoots
        let id = settings.id
        content = NodeContent(
            store: screen.content, nodeID: settings.id, bytesPerSecond: settings.wall.contentBandwidth,
            grace: settings.wall.contentGrace,
            handPlaced: { name in try? roots.resolve(name.replacingOccurrences(of: "{id}", with: id)) }, logger: logger)
        self.logger = logger
        plays = PlayLog(settings: settings, logger: logger)
        storeProblem = Mutex(nil)
        let configuration = FollowerStateMachine.Configuration(
            displayLatency: settings.displayLatency, preparesInPlace: screen.players.count == 1)
        follower = Follower(
            wall: settings.wallName, configuration: configuration, player: screen, clock: NodeClock(clock),
            keeper: TimelineStore(path: settings.timelineFile), logger: logger)
    }

    var store: TimelineStore { TimelineStore(path: settings.timelineFile) }

    // MARK: Running

    /// Follows the timeline until cancelled (the stored one, read back by `recoverStoredTimeline`
    /// before the control API answers).
    public func run() async {
        plays.recover(self)
        await screen.showBetweenShows()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.follower.run() }
            group.addTask { await self.plays.run(self) }
            if settings.autoplay { group.addTask { await self.autoplay() } }
            if screen.players.count > 2 { group.addTask { await self.keepCuesReady() } }
            if NodeSettings.sinkElement(settings.video.sinkDescription) == "waylandsink",
                let compositor = CompositorWatch()
            {
                group.addTask { await compositor.watch { await self.compositorRestarted() } }
            }
            await group.waitForAll()
        }
    }

    /// The Wayland compositor came back after a restart: the screen is shown again, on new pipelines.
    func compositorRestarted() async {
        logger.warning("the Wayland compositor restarted: the screen is shown again on a new pipeline")
        screen.outputLost()
        if await follower.timeline == nil {
            await screen.showBetweenShows()
        } else {
            await follower.outputLost("the Wayland compositor restarted")
        }
    }

    /// How often the node checks the cues it keeps in standby.
    static let cueStandbyInterval = Duration.milliseconds(250)

    /// Keeps the config's standby cues prerolled, each on a player of its own, for the timeline
    /// followed: the first pass each would cut to (an entry cue's depends on the playlist), until
    /// cancelled. A clip's length is this node's file's, as the controller resolves it for files
    /// alike on every node.
    func keepCuesReady() async {
        let names = CueConfig.standbyNames(settings.wall.cues)
        var resolved: [String: Cue] = [:]
        while !Task.isCancelled {
            for name in names where resolved[name] == nil {
                guard let config = settings.wall.cues[name] else { continue }
                let media = config.media
                let lengths = try? await mediaDurations(media)
                let known = Dictionary(zip(media, lengths ?? []), uniquingKeysWith: { first, _ in first })
                resolved[name] = config.cue(lengths: known)
            }
            if let timeline = await follower.timeline, case .usable(let now, _) = NodeClock(clock).reading() {
                let at = now + MediaTime(value: 1, timescale: 1)
                let wanted = names.compactMap { name in
                    resolved[name].flatMap { timeline.cutPass(of: $0, named: name, at: at) }.map { (name, $0) }
                }
                await screen.keepCues(wanted)
            }
            try? await Task.sleep(for: Self.cueStandbyInterval)
        }
    }

    /// The stored timeline, checked as one from the network; one that fails is set aside, reported,
    /// and replaced by the next valid version. Called before the control API answers, so the first
    /// answer already tells what the node found.
    public func recoverStoredTimeline() async {
        let wall = settings.wallName
        switch store.recover(checking: { timeline in
            guard timeline.wall == wall else { throw TimelineError.otherWall(expected: wall, got: timeline.wall) }
            try checkMedia(of: timeline)
        }) {
        case .nothing:
            return
        case .timeline(let timeline):
            await follower.resume(timeline)
            logger.info(
                "stored timeline loaded",
                metadata: ["timeline.file": "\(settings.timelineFile)", "timeline.version": .value(timeline.version)])
        case .setAside(let problem, let keptAt):
            let kept = keptAt.map { "kept as \($0)" } ?? "it could not be moved"
            storeProblem.withLock { $0 = "the stored timeline was set aside (\(kept)): \(problem)" }
            logger.error(
                "stored timeline unusable: set aside until the wall sends a new one",
                metadata: [
                    "timeline.file": "\(settings.timelineFile)", "timeline.problem": "\(problem)",
                    "timeline.kept_at": "\(keptAt ?? "-")",
                ])
        }
    }

    /// A wall that plays by itself: with no timeline once the clock is usable, every node computes
    /// the same one from the config: its schedule on the master's UTC, or its playlist from master
    /// time zero.
    private func autoplay() async {
        var refused: String?
        while !Task.isCancelled {
            if await follower.timeline != nil { return }
            if case .usable(let now, let epoch) = NodeClock(clock).reading() {
                let timeline: Timeline?
                do {
                    timeline = try autoplayTimeline(epoch: epoch ?? 0, now: now, realtime: clock.masterIsRealtime)
                } catch {
                    // Said once; the master may yet change to one serving real time.
                    if refused != "\(error)" {
                        refused = "\(error)"
                        logger.error("the config's schedule cannot be played yet", metadata: ["error": "\(error)"])
                    }
                    timeline = nil
                }
                if let timeline {
                    do {
                        try await follower.adopt(timeline)
                    } catch {
                        logger.error("the config's show cannot be played by itself", metadata: ["error": "\(error)"])
                    }
                    return
                }
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The timeline a node computes from the config alone: the schedule from `now` (which needs a
    /// master serving real time), else the playlist from master time zero; nil when an entry has no
    /// out point.
    func autoplayTimeline(epoch: UInt64, now: MediaTime = .zero, realtime: Bool? = nil) throws(TimelineError)
        -> Timeline?
    {
        if let config = settings.wall.schedule {
            guard realtime == true else { throw .scheduleNeedsRealTime }
            guard let schedule = config.schedule() else { return nil }
            return try Timeline(
                wall: settings.wallName, version: 1, epoch: epoch, configSHA256: settings.wall.digest,
                schedule: schedule, now: now)
        }
        var entries: [TimelineEntry] = []
        for item in settings.playlist {
            guard let outPoint = item.outPoint else { return nil }
            entries.append(item.entry(outPoint: outPoint))
        }
        return try? Timeline(
            wall: settings.wallName, version: 1, epoch: epoch, configSHA256: settings.wall.digest,
            playlist: Playlist(entries: entries, loops: settings.loop), start: .zero)
    }

    // MARK: Commands

    /// Follows `timeline` from now on, if it is this wall's, valid, and one the wall's rule for what
    /// a node takes from `source` admits (`TimelineAdmission`); keeps it in the state directory, so
    /// a restart comes back to it.
    public func adopt(_ timeline: Timeline, from source: TimelineAdmission.Source = .controller) async throws(NodeError)
    {
        try checkMedia(of: timeline)
        try await admit(timeline, from: source)
        do {
            try await follower.adopt(timeline)
        } catch {
            switch error {
            case .refused(let reason): throw .timeline(reason)
            case .notKept(let reason): throw .timelineNotStored(reason)
            }
        }
        storeProblem.withLock { $0 = nil }
    }

    /// Checks `timeline` by the wall's one rule for what a node takes (`TimelineAdmission`),
    /// against the timeline followed and the master epoch the clock reads.
    func admit(_ timeline: Timeline, from source: TimelineAdmission.Source) async throws(NodeError) {
        let current = await follower.timeline
        let epoch: TimelineAdmission.Epoch
        switch NodeClock(clock).reading() {
        case .usable(_, let named): epoch = named.map { .known($0) } ?? .unnamed
        case .unusable: epoch = .noClock
        }
        let wall = settings.wallName
        let now = LocalClock.monotonic.now()
        do throws(TimelineError) {
            _ = try admission.withLock { admission throws(TimelineError) in
                try admission.admit(timeline, current: current, wall: wall, epoch: epoch, from: source, now: now)
            }
        } catch {
            throw .timeline(error)
        }
    }

    /// Checks that every file `timeline` names may be played here: inside the media roots (a file
    /// that is not there yet is named when it is due). A timeline naming /etc/passwd is refused
    /// whole, before it is kept.
    func checkMedia(of timeline: Timeline) throws(NodeError) {
        let roots = settings.mediaRoots
        let forNode = { (name: String) in name.replacingOccurrences(of: "{id}", with: self.settings.id) }
        do throws(RequestRejection) {
            for (index, segment) in timeline.segments.enumerated() {
                // A file the wall distributes is played from the content store, whatever its name.
                for (entry, item) in segment.playlist.entries.enumerated()
                where item.content(forNode: settings.id) == nil {
                    try roots.check(forNode(item.media), field: "segments[\(index)].playlist.entries[\(entry)].media")
                }
                if case .still(let image) = segment.show {
                    try roots.check(forNode(image), field: "segments[\(index)].show.image")
                }
            }
            for (name, playlist) in timeline.schedule?.playlists ?? [:] {
                for (entry, item) in playlist.entries.enumerated() where item.content(forNode: settings.id) == nil {
                    try roots.check(forNode(item.media), field: "schedule.playlists.\(name).entries[\(entry)].media")
                }
            }
            if case .still(let image) = timeline.schedule?.outside {
                try roots.check(forNode(image), field: "schedule.outside.image")
            }
        } catch {
            throw .rejected(error)
        }
    }

    /// The files `timeline` names (its schedule's too) that this node does not hold: not in its
    /// content store for content the wall distributes, not in the media roots for the rest (each
    /// name as the node reads it, `{id}` filled in), in order, once each.
    func missingMedia(of timeline: Timeline) -> [String] {
        var names: [String] = []
        var missing: [String] = []
        let playlists =
            timeline.segments.map(\.playlist)
            + (timeline.schedule?.playlists.sorted { $0.key < $1.key }.map(\.value) ?? [])
        for playlist in playlists {
            for entry in playlist.entries {
                if let id = entry.content(forNode: settings.id) {
                    let name = entry.media(forNode: settings.id)
                    if !content.store.holds(id), !missing.contains(name) { missing.append(name) }
                } else {
                    names.append(entry.media)
                }
            }
        }
        for segment in timeline.segments {
            if case .still(let image) = segment.show { names.append(image) }
        }
        for name in names {
            let path = name.replacingOccurrences(of: "{id}", with: settings.id)
            guard !missing.contains(path) else { continue }
            do {
                _ = try settings.mediaRoots.resolve(path)
            } catch  where error.reason.hasSuffix(": no such file") {
                missing.append(path)
            } catch {
                continue
            }
        }
        return missing
    }

    /// Follows `timeline`, found on a peer, if it is this wall's and newer than the one held.
    func offer(_ timeline: Timeline, from peer: String) async {
        guard timeline.wall == settings.wallName else { return }
        if let current = await follower.timeline, !timeline.supersedes(current) { return }
        do {
            try await adopt(timeline, from: .peer)
            logger.info(
                "timeline taken from a peer",
                metadata: ["timeline.peer": "\(peer)", "timeline.version": .value(timeline.version)])
        } catch {
            logger.warning("a peer's timeline refused", metadata: ["timeline.peer": "\(peer)", "error": "\(error)"])
        }
    }

    /// The timeline the node follows, if any.
    public var followedTimeline: Timeline? { get async { await follower.timeline } }

    /// The timeline the node follows.
    public func timeline() async throws(NodeError) -> Timeline {
        guard let timeline = await follower.timeline else { throw .noTimeline }
        return timeline
    }

    /// How often a node asks its peers for a newer timeline: often while it has none (it joins a
    /// wall already playing), seldom once it has one (it catches an edit it missed while down).
    static let peerPollWithout = Duration.seconds(1)
    static let peerPollWith = Duration.seconds(5)
    /// How long a peer may take to answer.
    public static let peerTimeout = MediaTime(value: 2, timescale: 1)

    /// Asks the other nodes of the wall for their timelines until cancelled, and follows the
    /// newest that is newer than this node's. A peer's answer for another wall is never taken.
    public func askPeers(_ peers: [NodeClient]) async {
        // A service that returns ends the node: a wall of one waits here until shutdown.
        while peers.isEmpty, !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        while !Task.isCancelled {
            let found = await withTaskGroup(of: (String, Timeline?).self) { group in
                for peer in peers {
                    group.addTask { (peer.id, try? await peer.timeline()) }
                }
                var newest: (String, Timeline)?
                for await (id, timeline) in group {
                    guard let timeline, timeline.wall == settings.wallName else { continue }
                    if newest.map({ timeline.supersedes($0.1) }) ?? true { newest = (id, timeline) }
                }
                return newest
            }
            if let (peer, timeline) = found { await offer(timeline, from: peer) }
            let has = await follower.timeline != nil
            try? await Task.sleep(for: has ? Self.peerPollWith : Self.peerPollWithout)
        }
    }

    /// The lengths of this node's files for `media` (paths or `{id}` templates).
    public func mediaDurations(_ media: [String], content: [ContentID?]? = nil) async throws(NodeError)
        -> [MediaTime]
    {
        guard media.count <= 256, content.map({ $0.count == media.count }) ?? true else {
            throw .rejected(
                RequestRejection(
                    field: "media", reason: "at most 256 entries, and as many content IDs if any, got \(media.count)"))
        }
        var durations: [MediaTime] = []
        for (index, name) in media.enumerated() {
            let path = try screen.path(of: name, content: content?[index])
            let asset = URLAsset(url: URL(fileURLWithPath: path))
            // Content is kept under its SHA-256: errors name the file as the operator knows it.
            let known = content?[index] == nil ? nil : name
            do {
                // A wall node exists to show a picture: media without video is refused here, before
                // a timeline names it (WallPlayer itself plays audio alone).
                let tracks = try await asset.tracks
                guard tracks.contains(where: { $0.mediaType == .video && $0.isPlayable }) else {
                    throw NodeError.noVideoTrack(
                        path: known.map { "\($0) (\(path))" } ?? path,
                        found: tracks.map { "\($0.mediaType.rawValue) (\($0.codec))" })
                }
                durations.append(try await asset.duration)
            } catch let error as NodeError {
                throw error
            } catch let error as PlayerError {
                throw .mediaFailed(error, name: known)
            } catch {
                throw .mediaFailed(.itemNotReady("\(error)"), name: known)
            }
        }
        return durations
    }

    /// What a frame of the media the screen plays (else the config's) costs this machine now
    /// (`FrameCost`), measured off the caller's thread: one measurement at a time.
    public func frameCost() async -> FrameCostReport {
        let path = screen.media ?? settings.media
        let video = settings.video
        return await Task.detached { [measuring] in
            measuring.lock.withLock { _ in
                do {
                    let cost = try FrameCost.measure(url: URL(fileURLWithPath: path), video: video)
                    return FrameCostReport(
                        media: path, perFrame: cost.perFrame, framePeriod: cost.framePeriod, frames: cost.frames)
                } catch {
                    return FrameCostReport(
                        media: path, perFrame: nil, framePeriod: nil, frames: nil, problem: "\(error)")
                }
            }
        }.value
    }

    // MARK: Status

    /// Says that `service` cannot work, and why; nil once it works again.
    public func serviceProblem(_ service: String, _ problem: String?) {
        let changed = serviceProblems.withLock { problems in
            defer { problems[service] = problem }
            return problems[service] != problem
        }
        guard changed else { return }
        if let problem {
            logger.error(
                "a service of the node cannot work; the screen plays on",
                metadata: ["service": "\(service)", "error": "\(problem)"])
        } else {
            logger.notice("a service of the node works again", metadata: ["service": "\(service)"])
        }
    }

    public func status() async -> NodeStatus {
        let player = screen.player
        let item = player.currentItem
        let counts = frames.counts
        let timeline = await timelineReport()
        let playerReport = PlayerReport(
            status: "\(player.status)", media: screen.media, itemStatus: item.map { "\($0.status)" },
            timeControlStatus: "\(player.timeControlStatus)",
            waitingReason: player.reasonForWaitingToPlay.map { "\($0)" }, rate: player.rate,
            position: item == nil ? .zero : player.currentTime(),
            prerolled: item?.status == .readyToPlay && player.rate == 0,
            framesPresented: counts.presented, framesLate: counts.late,
            framesDropped: screen.players.map(\.videoFrameCounts.dropped).reduce(0, +),
            renderThread: player.renderThreadPriority.description,
            error: (player.error ?? item?.error).map { "\($0)" },
            pipelinesAbandoned: screen.players.map(\.abandonedPipelines).reduce(0, +))
        var problems = serviceProblems.withLock { $0 }.map { ServiceProblem(service: $0.key, problem: $0.value) }
        if settings.wall.schedule != nil, clock.isUsable, clock.masterIsRealtime != true {
            // The config's show cannot play: said here, where the operator and `wallctl check` look.
            problems.append(ServiceProblem(service: "schedule", problem: "\(TimelineError.scheduleNeedsRealTime)"))
        }
        let window = screen.window
        let health = machine.sample(
            configSHA256: settings.wall.digest, store: screen.content,
            displayMode: window.map { window in
                {
                    (try? window.mode()).map {
                        DisplayMode(output: $0.output, width: $0.width, height: $0.height, refreshHz: $0.refreshHz)
                    }
                }
            })
        problems += health.problems.map { ServiceProblem(service: "machine", problem: $0) }
        if let expected = settings.wall.node(settings.id)?.screen.mode, let display = health.display,
            let mismatch = expected.mismatch(display)
        {
            problems.append(ServiceProblem(service: "display", problem: mismatch))
        }
        problems.sort { $0.service < $1.service }
        // The master's time is read last, when the rest is built: a controller takes it as the
        // time about half a round trip before the answer arrives (`Wall.masterNow`), and time spent
        // building the status before the reading would count as round trip, half of it lost.
        let reading = clock.masterClock?.reading()
        return NodeStatus(
            id: settings.id, wall: settings.wallName,
            masterTime: reading?.master, monotonicTime: reading.map { MediaTime(nanoseconds: $0.monotonicNanoseconds) },
            clock: clock.report(), player: playerReport, timeline: timeline, problems: problems, health: health)
    }

    func timelineReport() async -> TimelineReport? {
        guard let report = await follower.report() else {
            return storeProblem.withLock { $0 }.map { problem in
                TimelineReport(
                    version: 0, state: "none", entry: 0, pass: 0, itemTime: .invalid, inStep: nil, offset: nil,
                    rejoins: 0, problem: problem)
            }
        }
        let position = report.position
        let shown = screen.shown
        let problem = report.problem ?? shown.problem
        var timelineReport = TimelineReport(
            version: report.version, state: position?.state.rawValue ?? "unknown", entry: position?.entryIndex ?? 0,
            pass: position?.pass ?? 0, itemTime: position?.itemTime ?? .invalid, inStep: report.inStep,
            offset: report.offset, rejoins: report.rejoins, problem: problem)
        timelineReport.settled = report.settled
        timelineReport.lastStartVersion = report.lastStart?.version
        timelineReport.lastStartSlack = report.lastStart?.slack
        timelineReport.lastStartAt = report.lastStart?.at
        timelineReport.show = position?.show.description
        if let digest = await follower.timeline?.configSHA256, digest != settings.wall.digest {
            timelineReport.configDiffers = true
        }
        if let timeline = await follower.timeline { timelineReport.missingMedia = missingMedia(of: timeline) }
        if screen.players.count > 2 { timelineReport.cuesReady = screen.cuesReady }
        return timelineReport
    }
}

/// A lock a detached task can hold.
private final class OneAtATime: Sendable {
    let lock = Mutex(())
}

/// The node's clock as the follower reads it: usable by SyncClock's one definition.
struct NodeClock: FollowerClock {
    let clock: ClockFollower

    init(_ clock: ClockFollower) { self.clock = clock }

    func reading() -> ClockReading {
        guard clock.isUsable, let master = clock.masterClock else { return .unusable(state: clock.state.rawValue) }
        return .usable(now: master.now(), epoch: clock.masterEpoch)
    }
}
