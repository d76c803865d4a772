import Foundation
import LockstepTime
import Logging
import WallControl
import WallPlayer
import WallProtocol
import WallTimeline

/// What a node knows of the timeline it follows, and what it has set its player to do for it.
struct TimelineFollowing {
    var timeline: Timeline?
    /// Why following is suspended (a one-shot command took the player), if it is.
    var suspended: String?
    var plan: FollowPlan?
    /// Why the node is not where the timeline says, if it knows.
    var problem: String?
    /// No new anchor before this master time (after one failed).
    var retryAt: MediaTime?
    var rejoins = 0
    /// The last frame judged against the timeline.
    var judged: (inStep: Bool, offset: MediaTime)?
    var offFrames = 0
    var lastFrame: (sequence: UInt64, seenAt: MediaTime)?
    /// How far ahead of its start an anchor begins: a little over twice what the last one took.
    var lead = NodeController.initialLead
    var loadedStore = false
    /// When the clock was last seen locked after it was not.
    var lockedSince: MediaTime?
    /// The next anchor starts on a new pipeline (after a rejoin or a failure).
    var renewPipeline = true
}

/// What the player was set to do for one segment of the timeline.
struct FollowPlan {
    /// The timeline segment it carries out (its `from`).
    var segmentFrom: MediaTime
    /// The host time from which the player presents for it.
    var anchor: MediaTime
    var state: TimelinePosition.State
    /// The last pass handed to the player: the next starts where it ends.
    var lastQueued: TimelinePosition?
    /// A scheduled pause whose frame is still to be made exact, once the player has paused.
    var pausedAt: MediaTime?
    /// Where the player stands while paused: a resume from there needs no new preparation.
    var pausedPosition: TimelinePosition?
}

/// Following a timeline: the node drives its player toward `Timeline.position(at:)` all the time,
/// as a controller reconciles desired state, instead of obeying one-shot commands.
///
/// - An anchor loads the entry the timeline calls for at a host time a little ahead (`lead`, what
///   the last anchor took, doubled), prerolls it exactly there and starts it at that host time;
///   the next pass is queued behind it with its bounds, so passes and entries follow one another
///   gaplessly at exactly the master times the timeline gives (`PlayerItem.forwardPlaybackEndTime`).
/// - An edit is carried out at its host time: a pause pauses the running player there; anything
///   else anchors there.
/// - Every presented frame is judged against the timeline; a node that finds itself off it (after
///   SIGSTOP, a stall, replaced media) for several frames, or that stopped presenting, anchors
///   again where the wall is by then: it rejoins by itself, and nobody else is disturbed.
/// - A node that starts with a stored timeline (or `autoplay`) does the same: it joins the wall
///   where the wall is.
extension NodeController {
    static let initialLead = MediaTime(value: 600, timescale: 1000)
    static let minimumLead = MediaTime(value: 300, timescale: 1000)
    static let maximumLead = MediaTime(value: 4, timescale: 1)
    /// A frame this far from where the timeline says is off it.
    static let offTolerance = MediaTime(value: 40, timescale: 1000)
    /// Off frames in a row that make a node rejoin.
    static let offFramesToRejoin = 6
    /// A playing node that presented nothing for this long rejoins.
    static let stallLimit = MediaTime(value: 1500, timescale: 1000)
    static let reconcileInterval = Duration.milliseconds(40)
    /// How long the clock stays locked before the node anchors on it.
    static let clockSettling = MediaTime(value: 500, timescale: 1000)
    /// How long after a failed anchor the node tries again (the player builds a new pipeline).
    static let retryDelay = MediaTime(value: 1, timescale: 1)

    var store: TimelineStore { TimelineStore(path: settings.timelineFile) }

    // MARK: Commands

    /// Follows `timeline` from now on, if it is this wall's and newer than the one held; keeps it
    /// in the state directory first, so a restart comes back to it.
    func adopt(_ timeline: Timeline) throws(NodeError) {
        do {
            try timeline.validate()
        } catch {
            throw .timeline(error)
        }
        guard timeline.wall == settings.wallName else {
            throw .timeline(.otherWall(expected: settings.wallName, got: timeline.wall))
        }
        if let current = following.timeline {
            if current == timeline {
                following.suspended = nil
                return
            }
            do {
                try current.check(replacement: timeline)
            } catch {
                throw .timeline(error)
            }
        }
        try persist(timeline)
        let now = clock.masterClock?.now()
        let sameNow = now.map { following.timeline?.segment(at: $0) == timeline.segment(at: $0) } ?? false
        following.timeline = timeline
        if following.suspended != nil || !sameNow { following.plan = nil }
        following.suspended = nil
        following.retryAt = nil
        logger.info(
            "timeline adopted",
            metadata: [
                "timeline.version": .value(timeline.version), "timeline.segments": .value(timeline.segments.count),
                "timeline.epoch": .value(timeline.epoch),
            ])
    }

    private func persist(_ timeline: Timeline) throws(NodeError) {
        do {
            try store.save(timeline)
        } catch {
            throw .timelineNotStored(error)
        }
    }

    /// Follows `timeline`, found on a peer, if it is this wall's and newer than the one held.
    func offer(_ timeline: Timeline, from peer: String) {
        guard timeline.wall == settings.wallName,
            following.timeline.map({ timeline.version > $0.version }) ?? true
        else { return }
        do {
            try adopt(timeline)
            logger.info(
                "timeline taken from a peer", metadata: ["timeline.peer": "\(peer)", "timeline.version": .value(timeline.version)])
        } catch {
            logger.warning("a peer's timeline refused", metadata: ["timeline.peer": "\(peer)", "error": "\(error)"])
        }
    }

    /// How often a node asks its peers for a newer timeline: often while it has none (it joins a
    /// wall already playing), seldom once it has one (it catches an edit it missed while down).
    static let peerPollWithout = Duration.seconds(1)
    static let peerPollWith = Duration.seconds(5)
    /// How long a peer may take to answer.
    static let peerTimeout = MediaTime(value: 2, timescale: 1)

    /// Asks the other nodes of the wall for their timelines until cancelled, and follows the
    /// newest that is newer than this node's.
    nonisolated func askPeers(_ peers: [NodeClient]) async {
        // A service that returns ends the node: a wall of one waits here until shutdown.
        while peers.isEmpty, !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        while !Task.isCancelled {
            let found = await withTaskGroup(of: (String, Timeline?).self) { group in
                for peer in peers {
                    group.addTask { (peer.id, try? await peer.timeline()) }
                }
                var newest: (String, Timeline)?
                for await (id, timeline) in group {
                    guard let timeline else { continue }
                    if newest.map({ timeline.version > $0.1.version }) ?? true { newest = (id, timeline) }
                }
                return newest
            }
            if let (peer, timeline) = found { await offer(timeline, from: peer) }
            let has = await following.timeline != nil
            try? await Task.sleep(for: has ? Self.peerPollWith : Self.peerPollWithout)
        }
    }

    /// The timeline the node follows.
    func currentTimeline() throws(NodeError) -> Timeline {
        guard let timeline = following.timeline else { throw .noTimeline }
        return timeline
    }

    /// Stops following until a timeline arrives: a one-shot command has taken the player.
    func suspendFollowing(because reason: String) {
        guard following.timeline != nil, following.suspended == nil else { return }
        following.suspended = reason
        following.plan = nil
        logger.notice("timeline following suspended", metadata: ["timeline.reason": "\(reason)"])
    }

    /// The lengths of this node's files for `media` (paths or `{id}` templates).
    func mediaDurations(_ media: [String]) async throws(NodeError) -> [MediaTime] {
        guard media.count <= 256 else {
            throw .rejected(RequestRejection(field: "media", reason: "at most 256 entries, got \(media.count)"))
        }
        var durations: [MediaTime] = []
        for name in media {
            let path = try checked { () throws(RequestRejection) in
                try settings.mediaRoots.resolve(name.replacingOccurrences(of: "{id}", with: settings.id))
            }
            do {
                durations.append(try await URLAsset(url: URL(fileURLWithPath: path)).duration)
            } catch {
                throw .mediaFailed(error)
            }
        }
        return durations
    }

    // MARK: Following

    /// Reconciles the player with the timeline until cancelled.
    func followTimeline() async {
        showBetweenShows()
        loadStoredTimeline()
        while !Task.isCancelled {
            await reconcile()
            try? await Task.sleep(for: Self.reconcileInterval)
        }
    }

    private func loadStoredTimeline() {
        guard !following.loadedStore else { return }
        following.loadedStore = true
        do {
            guard let stored = try store.load() else { return }
            guard stored.wall == settings.wallName else {
                logger.warning(
                    "the stored timeline is another wall's; ignoring it",
                    metadata: ["timeline.file": "\(settings.timelineFile)", "timeline.wall": "\(stored.wall)"])
                return
            }
            try stored.validate()
            following.timeline = stored
            logger.info(
                "stored timeline loaded",
                metadata: ["timeline.file": "\(settings.timelineFile)", "timeline.version": .value(stored.version)])
        } catch {
            following.problem = "the stored timeline cannot be used: \(error)"
            logger.error("stored timeline unusable", metadata: ["timeline.error": "\(error)"])
        }
    }

    private func reconcile() async {
        guard following.suspended == nil else { return }
        guard clock.isLocked, let master = clock.masterClock else {
            following.lockedSince = nil
            if following.timeline != nil || settings.autoplay {
                following.problem = "waiting for the master clock to lock (\(clock.report().state))"
            }
            return
        }
        // The player takes up the master clock when it locks: an anchor waits until that has settled.
        let lockedSince = following.lockedSince ?? master.now()
        following.lockedSince = lockedSince
        guard master.now() - lockedSince >= Self.clockSettling else { return }
        if following.timeline == nil, settings.autoplay, let timeline = autoplayTimeline() {
            try? adopt(timeline)
        }
        guard var timeline = following.timeline else { return }
        if let epoch = clock.masterEpoch, epoch != timeline.epoch {
            guard let moved = try? timeline.reanchored(onto: epoch) else { return }
            logger.warning(
                "the master's time started over: the timeline now holds from master time zero of its new timeline",
                metadata: ["timeline.epoch": .value(epoch), "timeline.version": .value(moved.version)])
            do {
                try adopt(moved)
            } catch {
                following.problem = "cannot move the timeline onto the master's new time: \(error)"
                return
            }
            timeline = moved
        }
        let now = master.now()
        if let retryAt = following.retryAt, now < retryAt { return }
        let current = timeline.segment(at: now)
        let upcoming = timeline.segments.first { $0.from > now }
        guard let plan = following.plan else {
            let soon = upcoming.flatMap { $0.from - now <= following.lead + following.lead ? $0.from : nil }
            return await anchor(timeline, at: soon ?? now + following.lead)
        }
        if plan.segmentFrom != current.from, plan.segmentFrom <= now {
            // An edit took effect that no anchor carried out (it arrived late): go where the wall is.
            return await anchor(timeline, at: now + following.lead)
        }
        // An edit is prepared a lead ahead of its time; on a wall that is not playing, at once:
        // nothing on screen moves while it is.
        if let upcoming, upcoming.from > plan.segmentFrom,
            upcoming.from - now <= following.lead || (plan.state != .playing && plan.pausedAt == nil)
        {
            return await carryOut(upcoming, of: timeline, plan: plan)
        }
        if plan.state == .playing, now > plan.anchor {
            if judgeFrames(timeline, plan: plan, now: now) { return }
            refillQueue(timeline, plan: plan)
        }
        if let pausedAt = plan.pausedAt, now > pausedAt + Self.pauseSettling {
            await showPausedFrame(timeline.position(at: pausedAt))
        }
    }

    /// How much before its host time a scheduled pause stops the player: more than the jitter of
    /// waking for it and changing state, less than a frame.
    static let pauseAhead = MediaTime(value: 5, timescale: 1000)
    /// How long after a scheduled pause the player is surely paused.
    static let pauseSettling = MediaTime(value: 150, timescale: 1000)

    /// After a scheduled pause: the player stopped on whichever frame was on its way to the sink;
    /// the timeline calls for the one shown at the pause's time, so the node moves there exactly.
    private func showPausedFrame(_ position: TimelinePosition) async {
        following.plan?.pausedAt = nil
        guard player.rate == 0, await exactSeek(to: position.itemTime) == nil, !Task.isCancelled,
            let now = clock.masterClock?.now()
        else { return }
        _ = rejoin(because: "the player did not show the paused frame", now: now)
    }

    /// An edit at its host time: a pause pauses the running player there, anything else anchors.
    private func carryOut(_ segment: TimelineSegment, of timeline: Timeline, plan: FollowPlan) async {
        let before = timeline.segment(at: segment.from - MediaTime(value: 1, timescale: 1_000_000_000))
        if plan.state == .playing, !segment.isPlaying, segment.playlist == before.playlist {
            do {
                // A few milliseconds early, so that a frame due right at the pause is left to the
                // exact seek that follows on every node, rather than rendered by some and not others.
                try player.setRate(
                    0, time: .invalid, atHostTime: segment.from - settings.displayLatency - Self.pauseAhead)
                following.plan?.segmentFrom = segment.from
                following.plan?.state = .paused
                following.plan?.pausedAt = segment.from
                // A resume from here needs nothing loaded again: the next pass is queued already,
                // handed to GStreamer while playing. (After a paused anchor a resume anchors again:
                // a successor handed over while paused for long did not always start, with audio.)
                if player.items().count >= 2 {
                    following.plan?.pausedPosition = timeline.position(at: segment.from)
                }
                logger.info("pause scheduled", metadata: ["timeline.at_ns": .nanoseconds(segment.from)])
                return
            } catch {
                logger.warning("the player refused a scheduled pause; anchoring", metadata: ["error": "\(error)"])
            }
        }
        if plan.state == .paused, plan.pausedAt == nil, segment.isPlaying, segment.playlist == before.playlist,
            let paused = plan.pausedPosition, resume(from: paused, at: segment, of: timeline)
        {
            return
        }
        await anchor(timeline, at: segment.from)
    }

    /// A resume where the player already holds the paused frame, prerolled: a start at the
    /// resume's host time, with nothing loaded again. Returns false when it does not apply.
    private func resume(from paused: TimelinePosition, at segment: TimelineSegment, of timeline: Timeline) -> Bool {
        let position = timeline.position(at: segment.from)
        guard position.state == .playing, position.entryIndex == paused.entryIndex, position.pass == paused.pass,
            position.cycle == paused.cycle, position.itemTime == paused.itemTime, player.currentItem != nil
        else { return false }
        do {
            try player.setRate(
                position.rate.floatValue, time: position.itemTime, atHostTime: segment.from - settings.displayLatency)
        } catch {
            logger.warning("the player refused to resume; anchoring", metadata: ["error": "\(error)"])
            return false
        }
        var plan = FollowPlan(segmentFrom: segment.from, anchor: segment.from, state: .playing, lastQueued: position)
        if player.items().count >= 2 {
            // The next pass is queued since before the pause.
            plan.lastQueued = nextPass(after: position, in: timeline, segment: segment) ?? position
        } else {
            player.actionAtItemEnd = .advance
            plan.lastQueued = queuePasses(after: position, in: timeline, segment: segment)
        }
        following.plan = plan
        following.offFrames = 0
        following.lastFrame = nil
        following.judged = nil
        logger.info("resume scheduled", metadata: ["timeline.at_ns": .nanoseconds(segment.from)])
        return true
    }

    /// Loads, prerolls and starts what the timeline calls for at `requested` (its start, if that is
    /// later), with the next pass queued behind it.
    private func anchor(_ timeline: Timeline, at requested: MediaTime) async {
        guard let master = clock.masterClock else { return }
        let began = master.now()
        var at = MediaTime.maximum(requested, timeline.start)
        var position = timeline.position(at: at)
        if position.state == .waiting {
            at = timeline.start
            position = timeline.position(at: at)
        }
        let segment = timeline.segment(at: at)
        let version = timeline.version
        following.offFrames = 0
        following.lastFrame = nil
        following.judged = nil
        let first: (item: PlayerItem, path: String)
        do {
            first = try passItem(position, from: position.state == .playing ? position.itemTime : position.entry.inPoint)
        } catch {
            return failAnchor("entry \(position.entryIndex): \(error)", now: began)
        }
        // After a rejoin or a failure the anchor starts on a new pipeline: nothing of the old
        // one's state (a wedged queue after a stall or a stop, an error still on its bus) can hold
        // the new start.
        if following.renewPipeline {
            following.renewPipeline = false
            player.renewPipelineAtNextLoad()
        }
        stopPlayer()
        player.actionAtItemEnd = .advance
        player.insert(first.item, after: nil)
        var lastQueued: TimelinePosition? = position
        if position.state == .playing {
            lastQueued = queuePasses(after: position, in: timeline, segment: segment)
        }
        do {
            try await waitUntilReady(first.item)
        } catch {
            return failAnchor("entry \(position.entryIndex): \(error)", now: master.now())
        }
        loadedMedia = first.path
        guard position.state == .playing else {
            // Paused or ended: show the frame the timeline calls for and hold it.
            let frame =
                position.state == .ended
                ? position.entry.outPoint - MediaTime(value: 1, timescale: 1000) : position.itemTime
            guard await exactSeek(to: frame) != nil, await prerollPlayer() != nil else {
                return failAnchor("the player did not show item time \(frame.seconds) s of \(first.path)", now: master.now())
            }
            return settle(
                FollowPlan(segmentFrom: segment.from, anchor: at, state: position.state, lastQueued: nil),
                version: version, began: began, master: master)
        }
        guard await prerollPlayer() == true else {
            return failAnchor("the player did not preroll \(first.path)", now: master.now())
        }
        let now = master.now()
        let presentAt = at - settings.displayLatency
        guard presentAt >= now + Self.minimumStartLead else {
            following.lead = MediaTime.minimum(following.lead + following.lead, Self.maximumLead)
            logger.warning(
                "anchor ready too late; trying again further ahead",
                metadata: ["timeline.late_by_ns": .nanoseconds(now + Self.minimumStartLead - presentAt), "timeline.lead_ns": .nanoseconds(following.lead)])
            following.plan = nil
            return
        }
        do {
            player.automaticallyWaitsToMinimizeStalling = false
            try player.setRate(position.rate.floatValue, time: position.itemTime, atHostTime: presentAt)
        } catch {
            return failAnchor("the player refused the start: \(error)", now: now)
        }
        logger.info(
            "anchored",
            metadata: [
                "timeline.version": .value(version), "timeline.entry": .value(position.entryIndex),
                "timeline.pass": .value(position.pass), "timeline.item_time_ns": .nanoseconds(position.itemTime),
                "timeline.at_ns": .nanoseconds(at), "timeline.in_ns": .nanoseconds(at - now),
            ])
        settle(
            FollowPlan(segmentFrom: segment.from, anchor: at, state: .playing, lastQueued: lastQueued),
            version: version, began: began, master: master)
    }

    /// Records an anchor's plan (unless a newer timeline arrived meanwhile) and what it took.
    private func settle(_ plan: FollowPlan, version: UInt64, began: MediaTime, master: MasterClock) {
        let took = master.now() - began
        following.lead = MediaTime.minimum(
            MediaTime.maximum(took + took + MediaTime(value: 150, timescale: 1000), Self.minimumLead), Self.maximumLead)
        following.problem = nil
        following.retryAt = nil
        guard following.timeline?.version == version, following.suspended == nil else { return }
        following.plan = plan
    }

    private func failAnchor(_ problem: String, now: MediaTime) {
        following.problem = problem
        following.renewPipeline = true
        following.plan = nil
        following.retryAt = now + Self.retryDelay
        logger.error("cannot follow the timeline", metadata: ["timeline.problem": "\(problem)"])
    }

    /// An item for one pass of an entry, from `start` to the entry's out-point.
    private func passItem(_ position: TimelinePosition, from start: MediaTime) throws(NodeError) -> (
        item: PlayerItem, path: String
    ) {
        try passItem(position.entry, from: start)
    }

    private func passItem(_ entry: TimelineEntry, from start: MediaTime) throws(NodeError) -> (
        item: PlayerItem, path: String
    ) {
        let path = try checked { () throws(RequestRejection) in
            try settings.mediaRoots.resolve(entry.media(forNode: settings.id))
        }
        let item = PlayerItem(url: URL(fileURLWithPath: path))
        item.playbackStartTime = start
        item.forwardPlaybackEndTime = entry.outPoint
        return (item, path)
    }

    /// The pass after `position`, if the same segment of the timeline plays it at rate 1 (a gapless
    /// successor plays at rate 1; another rate anchors at each pass).
    private func nextPass(after position: TimelinePosition, in timeline: Timeline, segment: TimelineSegment)
        -> TimelinePosition?
    {
        guard position.rate == .normal, let end = position.passEnd, timeline.segment(at: end) == segment else {
            return nil
        }
        let next = timeline.position(at: end)
        return next.state == .playing ? next : nil
    }

    /// Keeps the passes after the current one queued, so the player moves on gaplessly.
    private func refillQueue(_ timeline: Timeline, plan: FollowPlan) {
        guard let last = plan.lastQueued, player.items().count < Self.queueDepth else { return }
        following.plan?.lastQueued = queuePasses(
            after: last, in: timeline, segment: timeline.segment(at: plan.segmentFrom))
    }

    /// Items queued in the player at once: the current pass and the next. The player hands the
    /// next one to GStreamer when the current pass reaches its end in the pipeline, a pass length
    /// after it was queued here.
    static let queueDepth = 2

    /// Queues the passes after `last` until the player holds `queueDepth` items; returns the last
    /// one queued. When the playlist ends, the player holds the last frame.
    private func queuePasses(after last: TimelinePosition, in timeline: Timeline, segment: TimelineSegment)
        -> TimelinePosition
    {
        var last = last
        while player.items().count < Self.queueDepth {
            guard let next = nextPass(after: last, in: timeline, segment: segment) else {
                if last.rate == .normal { player.actionAtItemEnd = .pause }
                break
            }
            guard let item = try? passItem(next, from: next.entry.inPoint) else { break }
            player.insert(item.item, after: nil)
            last = next
        }
        return last
    }

    /// Judges the newest presented frame against the timeline; returns true when the node is off
    /// it and has started to rejoin.
    private func judgeFrames(_ timeline: Timeline, plan: FollowPlan, now: MediaTime) -> Bool {
        guard let record = frames.latest else { return false }
        if let last = following.lastFrame, last.sequence == record.sequence {
            guard now - last.seenAt > Self.stallLimit, now - plan.anchor > Self.stallLimit else { return false }
            return rejoin(because: "no frame presented for \((now - last.seenAt).seconds) s", now: now)
        }
        following.lastFrame = (record.sequence, now)
        guard record.dueAt >= plan.anchor - settings.displayLatency else { return false }
        // The frame stands for the host time it was due at, display latency added back.
        let position = timeline.position(at: record.dueAt + settings.displayLatency)
        var offset = record.presentedAt - record.dueAt
        if position.state == .playing {
            let behind = position.itemTime - record.presentationTimestamp
            offset = offset + (behind.magnitude < MediaTime(value: 1, timescale: 1) ? behind : MediaTime(value: 1, timescale: 1))
        }
        let inStep = offset.magnitude <= Self.offTolerance
        following.judged = (inStep, offset)
        following.offFrames = inStep ? 0 : following.offFrames + 1
        guard following.offFrames >= Self.offFramesToRejoin else { return false }
        return rejoin(because: "\(following.offFrames) frames off the timeline by \(offset.seconds) s", now: now)
    }

    private func rejoin(because reason: String, now: MediaTime) -> Bool {
        following.rejoins += 1
        following.renewPipeline = true
        following.plan = nil
        following.offFrames = 0
        following.lastFrame = nil
        logger.warning(
            "off the timeline; rejoining where the wall is",
            metadata: ["timeline.reason": "\(reason)", "timeline.rejoins": .value(following.rejoins)])
        return true
    }

    /// The config's playlist from master time zero on the master's timeline: what every node of a
    /// wall that plays by itself computes alone, identically.
    private func autoplayTimeline() -> Timeline? {
        var entries: [TimelineEntry] = []
        for item in settings.playlist {
            guard let outPoint = item.outPoint else { return nil }
            entries.append(
                TimelineEntry(
                    media: item.media, inPoint: item.inPoint, outPoint: outPoint,
                    repeats: item.repeats.map { .times($0) } ?? .forever))
        }
        return try? Timeline(
            wall: settings.wallName, version: 1, epoch: clock.masterEpoch ?? 0,
            playlist: Playlist(entries: entries, loops: settings.loop), start: .zero)
    }

    // MARK: Status

    func timelineReport() -> TimelineReport? {
        guard let timeline = following.timeline else { return nil }
        let now = clock.masterClock?.now()
        let position = now.map { timeline.position(at: $0) }
        let problem =
            following.suspended.map { "following suspended: \($0) took the player; send a timeline to follow again" }
            ?? following.problem
        return TimelineReport(
            version: timeline.version, state: position?.state.rawValue ?? "unknown", entry: position?.entryIndex ?? 0,
            pass: position?.pass ?? 0, itemTime: position?.itemTime ?? .invalid,
            inStep: following.plan == nil ? false : following.judged?.inStep, offset: following.judged?.offset,
            rejoins: following.rejoins, problem: problem)
    }
}
