import LockstepTime
import WallTimeline

/// How a node follows its wall's timeline: a pure state machine, as a controller reconciles
/// desired state. Events go in (a tick with what the driver observed, a new timeline, the outcome
/// of a preparation); `FollowerAction`s come out, which the driver carries out on the player. No
/// field changes outside the machine, no clock is read and nothing sleeps here, so every transition
/// is a unit test in simulated time.
///
/// - An anchor loads the entry the timeline calls for at a host time a little ahead (`lead`, what
///   the last anchor took, doubled), prepares it exactly there and starts it at that host time; the
///   next pass is queued behind it with its bounds, so passes and entries follow one another
///   gaplessly at exactly the master times the timeline gives.
/// - An edit is carried out at its host time: a pause pauses the running player there, a resume
///   from the paused frame starts it again; anything else anchors there. A show that is not the
///   playlist (stopped, black, a still, the test card) goes on the screen at its time.
/// - Every presented frame is judged against the timeline; a node that finds itself off it (after
///   SIGSTOP, a stall, replaced media) for several frames, or that stopped presenting, anchors
///   again where the wall is by then: it rejoins by itself, and nobody else is disturbed.
/// - A node that starts with a stored timeline does the same: it joins the wall where it is.
public struct FollowerStateMachine: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// This screen's display latency: it presents everything this much before the wall's time.
        public var displayLatency: MediaTime
        public var initialLead = MediaTime(value: 600, timescale: 1000)
        public var minimumLead = MediaTime(value: 300, timescale: 1000)
        public var maximumLead = MediaTime(value: 4, timescale: 1)
        /// A start whose preparation is done up to this long after its time still starts, at its
        /// time: its first frame shows that much late, the frames after it on time (the player
        /// arms it and goes to PLAYING at once, its first frame prerolled). A cut held in standby
        /// on a busy machine is a few milliseconds late at worst; anchoring it again further
        /// ahead would miss it by the lead. Later than this, it is anchored again.
        public var lateStartTolerance = MediaTime(value: 25, timescale: 1000)
        /// A frame this far from where the timeline says is off it.
        public var offTolerance = MediaTime(value: 40, timescale: 1000)
        /// A frame whose timestamp is this far from the item time its due time stands for is off
        /// the timeline, however punctually the sink presents it: the pipeline's running time has
        /// slipped against the anchor (a gapless hand-over made late, as after the process was
        /// stopped for seconds). Due times come from the pipeline's arithmetic, not from a clock
        /// wait: a pipeline that follows its anchor is exact here to its rate's rounding (a float
        /// rate other than 1 drifts ~0.1 ms an hour, and its passes are each anchored anyway).
        public var slipTolerance = MediaTime(value: 2, timescale: 1000)
        /// A node that slips again this soon after anchoring again for a slip anchors on a new
        /// pipeline.
        public var slipRenewalWindow = MediaTime(value: 20, timescale: 1)
        /// Off frames in a row that make a node rejoin.
        public var offFramesToRejoin = 6
        /// A playing node that presented nothing for this long rejoins.
        public var stallLimit = MediaTime(value: 1500, timescale: 1000)
        /// How long the clock stays usable before the node anchors on it: the player takes up the
        /// master clock when it locks.
        public var clockSettling = MediaTime(value: 500, timescale: 1000)
        /// How long after a failed anchor the node tries again (on a new pipeline).
        public var retryDelay = MediaTime(value: 1, timescale: 1)
        /// How long after its host time a pause that falls on the first instant of a pass stops the
        /// player, so that the pass's first frame, the one held, is presented on time. Any other
        /// pause stops the player at its own time: frames due from then on wait at the sink on every
        /// node alike, however late the pause wakes, and the one on the glass stays there.
        public var boundaryPauseDelay = MediaTime(value: 5, timescale: 1000)
        /// How long after a scheduled pause the player is surely paused.
        public var pauseSettling = MediaTime(value: 150, timescale: 1000)
        /// How early a show other than the playlist is handed to the driver, which prepares it and
        /// has it presented at its time: more than a tick, and than preparing a picture takes.
        public var showAhead = MediaTime(value: 300, timescale: 1000)
        /// Passes the player holds at once: the current one and the next. The player hands the next
        /// one over when the current reaches its end in the pipeline.
        public var queueDepth = 2
        /// Whether the screen prepares what comes next on the pipeline it shows (a KMS plane, a
        /// Wayland surface, `standby: false`): the playing clip stops when the preparation begins.
        /// A held frame after a playing segment is then prepared as late as this node's recent
        /// preparations allow (`inPlaceHoldAhead`), so the clip plays on; the frame, prepared
        /// undrawn, reaches the glass at its time, and at once should it be ready only after it.
        public var preparesInPlace = false

        public init(displayLatency: MediaTime = .zero, preparesInPlace: Bool = false) {
            self.displayLatency = displayLatency
            self.preparesInPlace = preparesInPlace
        }
    }

    /// What the machine is doing.
    enum State: Hashable, Sendable {
        /// Nothing to carry out: no timeline, or the next step is an anchor.
        case idle
        /// An anchor is being prepared by the driver.
        case preparing(Anchor)
        /// The player carries out a segment of the playlist.
        case following(FollowPlan)
        /// A show other than the playlist is (or is about to be) on the screen.
        case showing(ShowPlan)
        /// An anchor failed: the next one no earlier than `until`.
        case backingOff(until: MediaTime)
    }

    /// An anchor under preparation.
    struct Anchor: Hashable, Sendable {
        var preparation: Preparation
        /// Where on the timeline it starts.
        var at: MediaTime
        var position: TimelinePosition
        var segmentFrom: MediaTime
        var version: UInt64
        /// When it began, to measure what it took.
        var began: MediaTime
        /// The passes the preparation hands the player, in order, when it plays them.
        var handed: [TimelinePosition]
        /// A timeline that arrived meanwhile changed what holds at its time.
        var superseded = false
    }

    /// What the player was set to do for one segment of the playlist.
    struct FollowPlan: Hashable, Sendable {
        /// The timeline segment it carries out (its `from`).
        var segmentFrom: MediaTime
        /// The host time from which the player presents for it.
        var anchor: MediaTime
        var state: TimelinePosition.State
        /// The passes handed to the player, in order, as far back as it still holds them: the
        /// last `queuedPasses` of them are its current pass and those queued behind it. The next
        /// pass starts where the last ends.
        var handed: [TimelinePosition]
        var lastQueued: TimelinePosition? { handed.last }

        /// The pass the player is on when it holds `queued` passes, when the plan knows.
        func currentPass(queued: Int) -> TimelinePosition? {
            queued >= 1 && queued <= handed.count ? handed[handed.count - queued] : nil
        }
        /// A scheduled pause whose frame is still to be made exact, once the player has paused.
        var pausedAt: MediaTime?
        /// The host time the player pauses at: `pausedAt`, or a little after when the pause falls on
        /// a pass's first instant, so the player presents that pass's first frame.
        var pauseInstant: MediaTime?
        /// Where the player stands while paused: a resume from there needs no new preparation.
        var pausedPosition: TimelinePosition?
        /// An exact move to the paused frame is under way: until it is answered, the screen may
        /// still show the frame the pause stopped on.
        var movingToPausedFrame = false
    }

    /// A show other than the playlist, for one segment.
    struct ShowPlan: Hashable, Sendable {
        var segmentFrom: MediaTime
        var show: TimelineShow
        var at: MediaTime
        /// Whether it was handed to the driver.
        var handed: Bool
        /// Whether the driver reported it on the screen.
        var onScreen = false
    }

    public let configuration: Configuration
    /// The wall this node belongs to: another wall's timeline is refused.
    public let wall: String
    private(set) var state: State = .idle
    /// The timeline followed.
    public private(set) var timeline: Timeline?
    /// How far ahead of its start an anchor begins: a little over twice what the last one took.
    public private(set) var lead: MediaTime
    /// What the last preparation took.
    private var preparationTime: MediaTime
    /// What the last preparations of a held frame took (a load, an exact move and a preroll: more
    /// than a start's), the newest last.
    private var holdPreparations: [MediaTime] = []
    /// The last start made ready, and how far ahead of its time (`FollowerReport.lastStart`).
    private var lastStart: StartSlack?
    public private(set) var rejoins = 0
    /// Why the node is not where the timeline says, if it knows.
    public private(set) var problem: String?
    /// The last frame judged against the timeline: in step or not, and by how much it was off.
    private var judged: (inStep: Bool, offset: MediaTime)?
    private var offFrames = 0
    /// Frames in a row whose timestamps slipped against their due times (`slipTolerance`).
    private var slippedFrames = 0
    /// When the node last anchored again for a slip.
    private var lastSlip: MediaTime?
    private var lastFrame: (sequence: UInt64, seenAt: MediaTime)?
    /// When the clock was last seen usable after it was not.
    private var usableSince: MediaTime?
    /// The next anchor starts on a new pipeline (at the first, after a rejoin or a failure).
    private var renewPipeline = true
    private var preparations: UInt64 = 0

    public init(wall: String, configuration: Configuration = Configuration()) {
        self.wall = wall
        self.configuration = configuration
        lead = configuration.initialLead
        preparationTime = configuration.minimumLead
    }

    // MARK: Events

    /// Follows `timeline` from now on (the driver checked it and stored it). What the player does
    /// for the segment in force stays, unless the new timeline changes that segment.
    public mutating func adopt(_ timeline: Timeline, now: MediaTime?) {
        let previous = self.timeline
        self.timeline = timeline
        let unchanged = { (time: MediaTime) -> Bool in
            previous.map { $0.segment(at: time) == timeline.segment(at: time) } ?? false
        }
        switch state {
        case .idle, .backingOff:
            break
        case .preparing(var anchor):
            if !unchanged(anchor.at) {
                anchor.superseded = true
                state = .preparing(anchor)
            }
        case .following(let plan):
            // The segment in force, and the one a start prepared ahead of its time is for: an edit
            // that comes before that start (a cue 40 ms after a load's start was prepared) makes it
            // no longer the timeline's, and the node carries out the new edit at its own time.
            if !(now.map { unchanged($0) && (plan.anchor <= $0 || unchanged(plan.anchor)) } ?? false) {
                state = .idle
            }
        case .showing(let plan):
            if !(now.map { unchanged($0) && (plan.at <= $0 || unchanged(plan.at)) } ?? false) { state = .idle }
        }
    }

    /// One step: `observation` is what the driver read just now.
    public mutating func tick(_ observation: FollowerObservation) -> [FollowerAction] {
        guard case .usable(let now, let epoch) = observation.clock else {
            usableSince = nil
            if timeline != nil, case .unusable(let clockState) = observation.clock {
                problem = "waiting for the master clock to lock (\(clockState))"
            }
            return []
        }
        let since = usableSince ?? now
        usableSince = since
        guard now - since >= configuration.clockSettling, var timeline else { return [] }
        var actions: [FollowerAction] = []
        if let epoch, epoch != timeline.epoch {
            do {
                let moved = try timeline.reanchored(onto: epoch)
                adopt(moved, now: nil)
                timeline = moved
                actions += [.store(moved), .note(.epochMoved(epoch: epoch, version: moved.version))]
            } catch {
                problem = "cannot move the timeline onto the master's new time: \(error)"
                return [.note(.epochMoveFailed("\(error)"))]
            }
        }
        if case .preparing = state { return actions }
        if case .backingOff(let until) = state {
            guard now >= until else { return actions }
            state = .idle
        }
        let current = timeline.segment(at: now)
        let upcoming = timeline.segment(after: now)
        switch state {
        case .idle, .preparing, .backingOff:
            let soon = upcoming.flatMap { $0.from - now <= lead + lead ? $0.from : nil }
            return actions + anchor(timeline, at: soon ?? now + lead, now: now)
        case .showing(var plan):
            if plan.segmentFrom != current.from, plan.segmentFrom <= now {
                return actions + anchor(timeline, at: now + lead, now: now)
            }
            if let upcoming, upcoming.from > plan.segmentFrom, upcoming.from - now <= lead {
                return actions + anchor(timeline, at: upcoming.from, now: now)
            }
            if !plan.handed, plan.at - now <= configuration.showAhead {
                plan.handed = true
                state = .showing(plan)
                actions.append(.show(plan.show, presentAt: plan.at - configuration.displayLatency))
            }
            return actions
        case .following(let plan):
            if plan.segmentFrom != current.from, plan.segmentFrom <= now {
                // An edit took effect that no anchor carried out (it arrived late): go where the wall is.
                return actions + anchor(timeline, at: now + lead, now: now)
            }
            // An edit is prepared a lead ahead of its time, and shown at its time. A held frame
            // after a playing clip, on a screen that prepares in place, is prepared as late as
            // its preparation allows: the clip stops when it begins.
            let heldAfterPlaying =
                plan.state == .playing
                && upcoming.map {
                    !$0.isPlaying && $0.show == .playlist && !Self.continuesPlaylist($0, after: current)
                } ?? false
            let ahead =
                heldAfterPlaying && configuration.preparesInPlace ? MediaTime.minimum(inPlaceHoldAhead, lead) : lead
            if let upcoming, upcoming.from > plan.segmentFrom, upcoming.from - now <= ahead, plan.pausedAt == nil {
                return actions + carryOut(upcoming, of: timeline, plan: plan, observation: observation, now: now)
            }
            if plan.state == .playing, now > plan.anchor, timeline.position(at: now).state == .ended {
                // The playlist ended (a clip that holds its last frame): the player stopped there by
                // itself, its last pass not advancing, and no frame is due from now on.
                var ended = plan
                ended.state = .ended
                state = .following(ended)
                return actions
            }
            if plan.state == .playing, now > plan.anchor {
                if let rejoin = judgeFrames(timeline, plan: plan, latest: observation.latestFrame, now: now) {
                    return actions + [rejoin]
                }
                // At a rate other than 1 no pass follows gaplessly: the next is anchored at its time.
                let position = timeline.position(at: now)
                if position.rate != .normal, let end = position.passEnd, end > plan.anchor, end - now <= lead,
                    timeline.segment(at: end).from == plan.segmentFrom
                {
                    return actions + anchor(timeline, at: end, now: now)
                }
                actions += refillQueue(timeline, plan: plan, queued: observation.queuedPasses)
            }
            if let pausedAt = plan.pausedAt, now > pausedAt + configuration.pauseSettling {
                return actions
                    + showPausedFrame(timeline, plan: plan, pausedAt: pausedAt, observation: observation, now: now)
            }
            return actions
        }
    }

    /// The driver's answer to `.prepare(preparation)`, at master time `now`; the process stood
    /// still `stoodStill` of the time it took (stopped by SIGSTOP, a paused machine): that time was
    /// no preparation's, and does not make the next anchor further ahead. A stop during a
    /// preparation made it look seconds long, and the next lead the 4 s maximum: 4 s out of step
    /// after a stop that otherwise cost 0.1 s.
    public mutating func prepared(
        _ id: UInt64, outcome: PreparationOutcome, now: MediaTime, stoodStill: MediaTime = .zero
    ) -> [FollowerAction] {
        guard case .preparing(let anchor) = state, anchor.preparation.id == id else { return [] }
        if case .failed(let reason) = outcome {
            return failAnchor("entry \(anchor.position.entryIndex): \(reason)", now: now)
        }
        let took = MediaTime.maximum(now - anchor.began - stoodStill, .zero)
        let position = anchor.position
        if let hold = anchor.preparation.hold {
            holdPreparations.append(took)
            if holdPreparations.count > 8 { holdPreparations.removeFirst() }
            settle(
                FollowPlan(segmentFrom: anchor.segmentFrom, anchor: anchor.at, state: position.state, handed: []),
                anchor: anchor, took: took)
            // Prepared behind a screen that plays on, the held frame takes the screen at its time.
            let presentAt = presentation(anchor.at)
            return [
                .presentHeld(itemTime: hold, presentAt: presentAt),
                .note(
                    .holding(
                        version: anchor.version, state: position.state, itemTime: hold, aheadBy: presentAt - now)),
            ]
        }
        let presentAt = presentation(anchor.at)
        lastStart = StartSlack(version: anchor.version, at: anchor.at, slack: presentAt - now)
        guard presentAt >= now - configuration.lateStartTolerance else {
            // The next try is as far ahead as this preparation needs (it was asked too close, or
            // took long): no further, so that a short clip the wall plays is not skipped whole.
            lead = lead(forPreparationTaking: took)
            state = .idle
            return [.note(.readyTooLate(lateBy: now - presentAt, newLead: lead))]
        }
        settle(
            FollowPlan(
                segmentFrom: anchor.segmentFrom, anchor: anchor.at, state: .playing, handed: anchor.handed),
            anchor: anchor, took: took)
        guard case .following = state else { return [] }
        return [
            .start(rate: position.rate, itemTime: position.itemTime, presentAt: presentAt),
            .note(
                .anchored(
                    version: anchor.version, entry: position.entryIndex, pass: position.pass,
                    itemTime: position.itemTime, at: anchor.at, aheadBy: anchor.at - now)),
        ]
    }

    /// After a scheduled pause: the player stopped on whichever frame was on its way to the sink;
    /// the timeline calls for the one shown at the pause's time, so the node moves there exactly.
    /// Where the player is on another pass than the held frame's, that pass is prepared afresh: a
    /// pause on a pass boundary with no successor queued (at a rate other than 1), or one inside a
    /// pass's last frame (the player moves on to the next pass once the last frame of one is
    /// presented, as the next stream's start follows it to the sink, so it stopped on the next pass
    /// with the held frame still on the glass).
    private mutating func showPausedFrame(
        _ timeline: Timeline, plan: FollowPlan, pausedAt: MediaTime, observation: FollowerObservation, now: MediaTime
    ) -> [FollowerAction] {
        let held = timeline.position(at: pausedAt)
        // Passes compared by host time: a paused segment counts the playlist's cycles from its own
        // origin, the playing one from its own.
        let onHeldPass =
            plan.currentPass(queued: observation.queuedPasses).map {
                ($0.passStart - held.passStart).magnitude <= MediaTime(value: 1, timescale: 1000)
            } ?? ((plan.pauseInstant ?? pausedAt) >= held.passStart)
        guard onHeldPass else {
            return anchor(timeline, at: pausedAt, now: now)
        }
        var settled = plan
        settled.pausedAt = nil
        settled.movingToPausedFrame = observation.playerPaused
        state = .following(settled)
        return observation.playerPaused ? [.showExactFrame(itemTime: held.itemTime)] : []
    }

    /// The driver's answer to `.showExactFrame`: whether the player answered at all.
    public mutating func pausedFrameShown(answered: Bool, now: MediaTime) -> [FollowerAction] {
        guard case .following(var plan) = state else { return [] }
        plan.movingToPausedFrame = false
        state = .following(plan)
        guard !answered else { return [] }
        return [rejoin(because: "the player did not show the paused frame")]
    }

    /// The driver put `show` on the screen (after `.show`).
    public mutating func shown(_ show: TimelineShow) {
        guard case .showing(var plan) = state, plan.show == show else { return }
        plan.onScreen = true
        state = .showing(plan)
    }

    /// The screen's output went away and came back (a compositor restarted): whatever the screen
    /// showed is gone with its pipeline, so the node shows where the wall is again, on a new one. A
    /// preparation under way finishes on the old one and is then done again.
    public mutating func outputLost(_ reason: String) -> [FollowerAction] {
        guard timeline != nil else { return [] }
        switch state {
        case .idle, .backingOff:
            renewPipeline = true
            return []
        case .preparing(var anchor):
            renewPipeline = true
            anchor.superseded = true
            state = .preparing(anchor)
            return []
        case .following, .showing:
            return [rejoin(because: reason)]
        }
    }

    /// The player refused an action (a start, a pause): anchor again where the wall is.
    public mutating func playerRefused(_ reason: String) -> [FollowerAction] {
        guard case .following = state else { return [] }
        state = .idle
        return [.note(.playerRefused(reason))]
    }

    // MARK: Anchoring

    /// The host time at which this screen presents what the wall shows at `hostTime`.
    func presentation(_ hostTime: MediaTime) -> MediaTime { hostTime - configuration.displayLatency }

    /// Prepares what the timeline calls for at `requested` (its start, if that is later), with the
    /// next pass queued behind it; or puts a show other than the playlist on the screen.
    private mutating func anchor(_ timeline: Timeline, at requested: MediaTime, now: MediaTime) -> [FollowerAction] {
        var at = MediaTime.maximum(requested, timeline.start)
        var position = timeline.position(at: at)
        if position.state == .waiting {
            at = timeline.start
            position = timeline.position(at: at)
        }
        let segment = timeline.segment(at: at)
        offFrames = 0
        slippedFrames = 0
        lastFrame = nil
        // A cut prepared ahead leaves the screen on what it shows until then: that judgment stands
        // until the first frame of the cut is judged.
        switch state {
        case .following where at > now: break
        case .showing(let plan) where at > now: judged = (plan.onScreen, .zero)
        default: judged = nil
        }
        guard position.show == .playlist else {
            // A show needs no preparation: on from its segment's time, or at once when that has passed.
            let showAt = MediaTime.maximum(segment.from, now)
            problem = nil
            state = .showing(ShowPlan(segmentFrom: segment.from, show: position.show, at: showAt, handed: false))
            return [.note(.showing(version: timeline.version, show: position.show, at: showAt))]
        }
        let playing = position.state == .playing
        var passes = [Pass(position, from: playing ? position.itemTime : position.entry.inPoint)]
        var handed = [position]
        var advances = true
        if playing {
            let queued = queuePasses(after: position, in: timeline, segment: segment, queued: 1)
            passes += queued.passes
            handed += queued.positions
            advances = queued.advances
        }
        preparations += 1
        let preparation = Preparation(
            id: preparations, passes: passes,
            hold: playing
                ? nil
                : position.state == .ended
                    ? position.entry.outPoint - MediaTime(value: 1, timescale: 1000) : position.itemTime,
            renewPipeline: renewPipeline, advanceAtItemEnd: advances)
        renewPipeline = false
        state = .preparing(
            Anchor(
                preparation: preparation, at: at, position: position, segmentFrom: segment.from,
                version: timeline.version, began: now, handed: handed))
        return [.prepare(preparation)]
    }

    /// Records an anchor's plan (unless a newer timeline superseded it meanwhile) and what it took.
    private mutating func settle(_ plan: FollowPlan, anchor: Anchor, took: MediaTime) {
        preparationTime = took
        lead = lead(forPreparationTaking: took)
        problem = nil
        state = anchor.superseded ? .idle : .following(plan)
    }

    /// How far ahead of its time a held frame after a playing clip is prepared on a screen that
    /// prepares in place: the slowest of the last eight held frames' preparations, and at least the
    /// last preparation (before any held frame, twice that: a load and a preroll, and an exact move
    /// that may cost as much again), a quarter more and 120 ms (a driver's tick, 40 ms, may come
    /// that much after the instant; a player presents a prepared frame through its sink only when
    /// it has 50 ms to; 30 ms to spare).
    var inPlaceHoldAhead: MediaTime {
        let took =
            holdPreparations.max().map { MediaTime.maximum($0, preparationTime) }
            ?? preparationTime + preparationTime
        return took + MediaTime(nanoseconds: (took.nanoseconds ?? 0) / 4 + 120_000_000)
    }

    /// How far ahead to anchor after a preparation that took `took`: twice that, plus 150 ms.
    private func lead(forPreparationTaking took: MediaTime) -> MediaTime {
        MediaTime.minimum(
            MediaTime.maximum(took + took + MediaTime(value: 150, timescale: 1000), configuration.minimumLead),
            configuration.maximumLead)
    }

    private mutating func failAnchor(_ reason: String, now: MediaTime) -> [FollowerAction] {
        problem = reason
        renewPipeline = true
        state = .backingOff(until: now + configuration.retryDelay)
        return [.note(.anchorFailed(reason))]
    }

    /// An edit at its host time: a pause pauses the running player there, a resume from the paused
    /// frame starts it there; anything else anchors.
    private mutating func carryOut(
        _ segment: TimelineSegment, of timeline: Timeline, plan: FollowPlan, observation: FollowerObservation,
        now: MediaTime
    ) -> [FollowerAction] {
        let before = timeline.segment(at: segment.from - MediaTime(value: 1, timescale: 1_000_000_000))
        let samePlaylist = Self.continuesPlaylist(segment, after: before)
        if plan.state == .playing, !segment.isPlaying, samePlaylist {
            let held = timeline.position(at: segment.from)
            // By host time: the paused segment counts the playlist's cycles from its own origin.
            let onPassStart = segment.from - MediaTime(value: 1, timescale: 1_000_000) < held.passStart
            // The passes that follow are queued while the player still plays, so that a resume from
            // here needs nothing loaded again. (After a paused anchor a resume anchors again: a
            // successor queued while paused for long did not always start, with audio.)
            let refill = refillQueue(timeline, plan: plan, queued: observation.queuedPasses)
            guard case .following(var paused) = state else { return refill }
            paused.segmentFrom = segment.from
            paused.state = .paused
            paused.pausedAt = segment.from
            paused.pauseInstant = onPassStart ? segment.from + configuration.boundaryPauseDelay : segment.from
            paused.pausedPosition = held
            state = .following(paused)
            return refill + [
                .pause(presentAt: presentation(paused.pauseInstant!)),
                .note(.pauseScheduled(at: segment.from)),
            ]
        }
        if plan.state == .paused, plan.pausedAt == nil, segment.isPlaying, samePlaylist,
            let paused = plan.pausedPosition,
            let actions = resume(from: paused, at: segment, of: timeline, queued: observation.queuedPasses)
        {
            return actions
        }
        return anchor(timeline, at: segment.from, now: now)
    }

    /// Whether `segment` shows the playlist `before` showed (a pause or a resume of it, not a cut
    /// elsewhere).
    private static func continuesPlaylist(_ segment: TimelineSegment, after before: TimelineSegment) -> Bool {
        segment.show == .playlist && before.show == .playlist && segment.playlist == before.playlist
    }

    /// A resume where the player already holds the paused frame, prerolled: a start at the resume's
    /// host time, with nothing loaded again. Nil when it does not apply.
    private mutating func resume(
        from paused: TimelinePosition, at segment: TimelineSegment, of timeline: Timeline, queued: Int
    ) -> [FollowerAction]? {
        let position = timeline.position(at: segment.from)
        guard position.state == .playing, samePass(position, paused), position.itemTime == paused.itemTime, queued > 0
        else { return nil }
        var actions: [FollowerAction] = [
            .start(rate: position.rate, itemTime: position.itemTime, presentAt: presentation(segment.from))
        ]
        var plan = FollowPlan(segmentFrom: segment.from, anchor: segment.from, state: .playing, handed: [position])
        if queued >= 2 {
            // The next pass is queued since before the pause.
            plan.handed += nextPass(after: position, in: timeline, segment: segment).map { [$0] } ?? []
        } else {
            let more = queuePasses(after: position, in: timeline, segment: segment, queued: queued)
            actions += [.advanceAtItemEnd(more.advances)] + more.passes.map { .enqueue($0) }
            plan.handed += more.positions
        }
        state = .following(plan)
        offFrames = 0
        slippedFrames = 0
        lastFrame = nil
        judged = nil
        return actions + [.note(.resumeScheduled(at: segment.from))]
    }

    // MARK: Passes

    /// Whether two positions are in the same pass of the same entry, in the same cycle.
    private func samePass(_ a: TimelinePosition, _ b: TimelinePosition) -> Bool {
        a.entryIndex == b.entryIndex && a.pass == b.pass && a.cycle == b.cycle
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

    /// The passes after `last` that fill the player to `queueDepth` when it holds `queued`, with
    /// their positions; and whether the player moves on at the end (not when the playlist ends there).
    private func queuePasses(
        after last: TimelinePosition, in timeline: Timeline, segment: TimelineSegment, queued: Int
    ) -> (passes: [Pass], positions: [TimelinePosition], advances: Bool) {
        var positions: [TimelinePosition] = []
        var advances = true
        while queued + positions.count < configuration.queueDepth {
            let last = positions.last ?? last
            guard let next = nextPass(after: last, in: timeline, segment: segment) else {
                if last.rate == .normal { advances = false }
                break
            }
            positions.append(next)
        }
        return (positions.map { Pass($0, from: $0.entry.inPoint) }, positions, advances)
    }

    /// Keeps the passes after the current one queued, so the player moves on gaplessly.
    private mutating func refillQueue(_ timeline: Timeline, plan: FollowPlan, queued: Int) -> [FollowerAction] {
        guard let last = plan.lastQueued, queued < configuration.queueDepth else { return [] }
        let more = queuePasses(
            after: last, in: timeline, segment: timeline.segment(at: plan.segmentFrom), queued: queued)
        var refilled = plan
        refilled.handed = plan.handed.suffix(queued) + more.positions
        state = .following(refilled)
        return more.passes.map { .enqueue($0) } + (more.advances ? [] : [.advanceAtItemEnd(false)])
    }

    // MARK: Judging

    /// Judges the newest presented frame against the timeline; returns the rejoin's note when the
    /// node is off it (or presents nothing) and has started to rejoin.
    private mutating func judgeFrames(
        _ timeline: Timeline, plan: FollowPlan, latest: FrameSample?, now: MediaTime
    ) -> FollowerAction? {
        let limit = configuration.stallLimit
        let stalled = { (since: MediaTime) in now - since > limit && now - plan.anchor > limit }
        guard let record = latest else {
            return stalled(plan.anchor) ? rejoin(because: "no frame presented since the start") : nil
        }
        if let last = lastFrame, last.sequence == record.sequence {
            guard stalled(last.seenAt) else { return nil }
            return rejoin(because: "no frame presented for \((now - last.seenAt).seconds) s")
        }
        lastFrame = (record.sequence, now)
        // A frame with no running time (the one before a start's in-point, the one held over a
        // resume) has no due time to judge.
        guard record.dueAt.isNumeric, record.dueAt >= presentation(plan.anchor) else { return nil }
        // The frame stands for the host time it was due at, display latency added back.
        let position = timeline.position(at: record.dueAt + configuration.displayLatency)
        var offset = record.presentedAt - record.dueAt
        var slip = MediaTime.zero
        if position.state == .playing {
            let second = MediaTime(value: 1, timescale: 1)
            slip = MediaTime.minimum(
                MediaTime.maximum(position.itemTime - record.presentationTimestamp, .zero - second), second)
            offset = offset + slip
        }
        let off = offset.magnitude > configuration.offTolerance
        let slipped = slip.magnitude > configuration.slipTolerance
        judged = (!off && !slipped, offset)
        offFrames = off ? offFrames + 1 : 0
        slippedFrames = slipped ? slippedFrames + 1 : 0
        if offFrames >= configuration.offFramesToRejoin {
            return rejoin(because: "\(offFrames) frames off the timeline by \(offset.seconds) s")
        }
        guard slippedFrames >= configuration.offFramesToRejoin else { return nil }
        // The sink is punctual: anchoring again, with no new pipeline, puts the frames back. A
        // pipeline that slips again soon after is not sound: the next anchor is on a new one.
        let again = lastSlip.map { now - $0 < configuration.slipRenewalWindow } ?? false
        lastSlip = now
        return rejoin(
            because: "\(slippedFrames) frames due \(slip.seconds) s off their timestamps' place on the timeline",
            renewingPipeline: again)
    }

    private mutating func rejoin(because reason: String, renewingPipeline: Bool = true) -> FollowerAction {
        rejoins += 1
        renewPipeline = renewingPipeline
        state = .idle
        offFrames = 0
        slippedFrames = 0
        lastFrame = nil
        judged = nil
        return .note(.rejoining(reason: reason, rejoins: rejoins))
    }

    // MARK: Report

    /// Where the node is on its timeline at master time `now` (nil when it is unknown), and how
    /// well it follows it; nil without a timeline.
    public func report(now: MediaTime?) -> FollowerReport? {
        guard let timeline else { return nil }
        let position = now.map { timeline.position(at: $0) }
        let current = now.map { timeline.segment(at: $0).from }
        let inStep: Bool?
        let settled: Bool
        switch state {
        case .following(let plan):
            inStep = judged?.inStep
            settled = plan.segmentFrom == current && plan.pausedAt == nil && !plan.movingToPausedFrame
        case .showing(let plan):
            inStep = plan.onScreen
            settled = plan.onScreen && plan.segmentFrom == current
        case .preparing(let anchor):
            // A cut prepared ahead of its time: the screen follows the segment before it meanwhile.
            inStep = now.map { anchor.at > $0 } == true ? judged?.inStep ?? false : false
            settled = false
        case .idle, .backingOff:
            inStep = false
            settled = false
        }
        return FollowerReport(
            version: timeline.version, position: position, inStep: inStep, offset: judged?.offset, rejoins: rejoins,
            problem: problem, settled: settled, lastStart: lastStart)
    }

    /// What the machine does now, for tests and logs: idle, preparing, following, showing or
    /// backing off.
    public var activity: String {
        switch state {
        case .idle: return "idle"
        case .preparing: return "preparing"
        case .following(let plan): return "following (\(plan.state.rawValue))"
        case .showing(let plan): return "showing \(plan.show)"
        case .backingOff: return "backing off"
        }
    }
}

/// Where a node is on its timeline, and how well it follows it.
public struct FollowerReport: Hashable, Sendable {
    public var version: UInt64
    /// What the timeline calls for now (nil when the master's time is unknown).
    public var position: TimelinePosition?
    /// Whether the last frames presented were where the timeline says (a show other than the
    /// playlist: whether it is on the screen); nil until a frame was judged.
    public var inStep: Bool?
    /// How far behind the timeline the last frame was (negative: ahead).
    public var offset: MediaTime?
    public var rejoins: Int
    public var problem: String?
    /// Whether the player carries out the segment in force: what a controller waits for after an edit.
    public var settled: Bool
    /// The last start this node made ready (or found ready too late): how far ahead of its time.
    public var lastStart: StartSlack?
}

/// How far ahead of its master time a start was ready on a node, for the timeline version that
/// asked for it: a controller that sent the cut learns from it how much lead a cut needs (negative:
/// ready too late, and anchored again further ahead).
public struct StartSlack: Hashable, Sendable {
    public var version: UInt64
    /// The start's master time: the edit's, for a cut at its time.
    public var at: MediaTime
    public var slack: MediaTime

    public init(version: UInt64, at: MediaTime, slack: MediaTime) {
        self.version = version
        self.at = at
        self.slack = slack
    }
}
