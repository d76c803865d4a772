import LockstepLocks
import LockstepTime
import Logging
import WallTimeline

/// Runs a `FollowerStateMachine` against the real player and clock: every tick it reads what the
/// player did, steps the machine, and carries out the actions it returns, feeding back the outcome
/// of those that take time.
public actor Follower {
    /// How often the machine steps: often enough to queue a pass and judge frames well within one.
    public static let tickInterval = Duration.milliseconds(40)

    private var machine: FollowerStateMachine
    private let player: any FollowerPlayer
    private let clock: any FollowerClock
    private let keeper: any TimelineKeeper
    private let logger: Logger
    /// The last master time read while the clock was usable.
    private var lastNow: MediaTime?
    /// The run loop between two steps, and whether a step is wanted before its next one.
    private var sleeper: (continuation: CheckedContinuation<Void, Never>, generation: UInt64)?
    private var sleeps: UInt64 = 0
    private var nudged = false
    /// The one writer of the state file: one write at a time, never one older than the newest.
    private let kept = KeptTimeline()
    /// A timeline followed that could not be kept (a read-only or full disk): written again every
    /// `keepRetryTicks` until it is, so that a restart after the disk recovers does not go back to
    /// an older one.
    private var unkept: Timeline?
    private var ticksSinceKeepAttempt = 0
    static let keepRetryTicks = 25

    /// One write at a time, and the newest timeline written.
    private final class KeptTimeline: Sendable {
        let newest = Mutex<Timeline?>(nil)
    }

    public init(
        wall: String, configuration: FollowerStateMachine.Configuration, player: any FollowerPlayer,
        clock: any FollowerClock, keeper: any TimelineKeeper, logger: Logger
    ) {
        machine = FollowerStateMachine(wall: wall, configuration: configuration)
        self.player = player
        self.clock = clock
        self.keeper = keeper
        self.logger = logger
    }

    /// The timeline followed.
    public var timeline: Timeline? { machine.timeline }

    /// Where the node is on its timeline and how well it follows it.
    public func report() -> FollowerReport? {
        machine.report(now: now())
    }

    /// Follows `timeline` from now on, if it is this wall's, valid and newer than the one followed,
    /// and keeps it, so a restart comes back to it; returns once it is kept. Returns false when it is
    /// the one followed.
    ///
    /// The follower takes it up at once, while it is written: an edit due a few frames from now (a
    /// cue held in standby) does not wait for the disk. One that cannot be kept is followed still,
    /// the wall in step, and the error says so.
    @discardableResult
    public func adopt(_ timeline: Timeline) async throws(FollowerError) -> Bool {
        do throws(TimelineError) {
            try timeline.validate()
            guard timeline.wall == machine.wall else { throw .otherWall(expected: machine.wall, got: timeline.wall) }
            if let current = machine.timeline {
                if current == timeline { return false }
                guard timeline.supersedes(current) else {
                    throw .notNewer(version: timeline.version, current: current.version)
                }
            }
        } catch {
            throw .refused(error)
        }
        machine.adopt(timeline, now: now())
        // The next step comes at once: an edit due a few frames from now is not kept waiting for
        // the tick.
        wake(nil)
        logger.info(
            "timeline adopted",
            metadata: [
                "timeline.version": .value(timeline.version), "timeline.segments": .value(timeline.segments.count),
                "timeline.epoch": .value(timeline.epoch),
            ])
        if let outcome = await keep(timeline) {
            if unkept.map({ timeline.supersedes($0) }) ?? true { unkept = timeline }
            throw .notKept(outcome)
        }
        if let waiting = unkept, !waiting.supersedes(timeline) { unkept = nil }
        return true
    }

    /// Writes `timeline` to the state file, off the actor so the follower steps meanwhile: the one
    /// path every write takes (an adoption, a move onto a new epoch), one at a time, never one
    /// older than the newest written (two adoptions may reach here out of order).
    private func keep(_ timeline: Timeline) async -> TimelineStoreError? {
        let keeper = self.keeper
        let kept = self.kept
        return await Task.detached { () -> TimelineStoreError? in
            kept.newest.withLock { newest -> TimelineStoreError? in
                guard newest.map({ timeline.supersedes($0) }) ?? true else { return nil }
                do throws(TimelineStoreError) {
                    try keeper.keep(timeline)
                } catch {
                    return error
                }
                newest = timeline
                return nil
            }
        }.value
    }

    /// The screen's output went away and came back (`FollowerStateMachine.outputLost`): the node
    /// shows where the wall is again, on a new pipeline, at once.
    public func outputLost(_ reason: String) async {
        await perform(machine.outputLost(reason))
        wake(nil)
    }

    /// Follows a timeline read back from the state file at start: checked there already, kept.
    public func resume(_ timeline: Timeline) {
        machine.adopt(timeline, now: nil)
    }

    /// Steps the machine every `tickInterval` until cancelled.
    public func run() async {
        while !Task.isCancelled {
            await step()
            await keepAgain()
            await pause()
        }
    }

    /// Tries again to keep the newest timeline that could not be kept, once every `keepRetryTicks`.
    private func keepAgain() async {
        guard let waiting = unkept else { return }
        ticksSinceKeepAttempt += 1
        guard ticksSinceKeepAttempt >= Self.keepRetryTicks else { return }
        ticksSinceKeepAttempt = 0
        if await keep(waiting) == nil, unkept == waiting {
            unkept = nil
            logger.notice("the timeline is kept again", metadata: ["timeline.version": .value(waiting.version)])
        }
    }

    /// Waits a tick, or until a new timeline is adopted.
    private func pause() async {
        if nudged {
            nudged = false
            return
        }
        sleeps += 1
        let generation = sleeps
        let timer = Task {
            try? await Task.sleep(for: Self.tickInterval)
            await self.wake(generation)
        }
        await withCheckedContinuation { sleeper = ($0, generation) }
        timer.cancel()
    }

    /// Ends the pause of `generation` (the tick), or any (nil: an adoption), or has the next one
    /// end at once.
    private func wake(_ generation: UInt64?) {
        guard let current = sleeper else {
            if generation == nil { nudged = true }
            return
        }
        guard generation == nil || generation == current.generation else { return }
        sleeper = nil
        current.continuation.resume()
    }

    /// One step of the machine and its actions.
    public func step() async {
        let observation = FollowerObservation(
            clock: clock.reading(), latestFrame: player.latestFrame, queuedPasses: player.queuedPasses,
            playerPaused: player.isPaused)
        if case .usable(let now, _) = observation.clock { lastNow = now }
        await perform(machine.tick(observation))
    }

    private func now() -> MediaTime? {
        if case .usable(let now, _) = clock.reading() {
            lastNow = now
            return now
        }
        return nil
    }

    /// Makes `call`, one the player may refuse; a refusal goes to the machine, whose answer is
    /// carried out in place of the rest. Whether the player took it.
    private func taken(_ what: String, _ call: () throws -> Void) async -> Bool {
        do {
            try call()
            return true
        } catch {
            await perform(machine.playerRefused("\(what): \(error)"))
            return false
        }
    }

    private func perform(_ actions: [FollowerAction]) async {
        for action in actions {
            guard !Task.isCancelled else { return }
            switch action {
            case .prepare(let preparation):
                let stillBefore = clock.stoodStill()
                var outcome = await player.prepare(preparation)
                let now = self.now()
                if now == nil, outcome == .ready { outcome = .failed("the master clock is no longer usable") }
                await perform(
                    machine.prepared(
                        preparation.id, outcome: outcome, now: now ?? lastNow ?? .zero,
                        stoodStill: clock.stoodStill() - stillBefore))
            case .start(let rate, let itemTime, let presentAt):
                guard
                    await taken("the start", { try player.start(rate: rate, itemTime: itemTime, presentAt: presentAt) })
                else { return }
            case .presentHeld(let itemTime, let presentAt):
                guard
                    await taken("the held frame", { try player.presentHeld(itemTime: itemTime, presentAt: presentAt) })
                else { return }
            case .pause(let presentAt):
                guard await taken("the scheduled pause", { try player.pause(presentAt: presentAt) }) else { return }
            case .enqueue(let pass):
                player.enqueue(pass)
            case .advanceAtItemEnd(let advances):
                player.setAdvancesAtItemEnd(advances)
            case .showExactFrame(let itemTime):
                let answer = await player.showExactFrame(itemTime: itemTime)
                guard !Task.isCancelled else { return }
                await perform(machine.pausedFrameShown(answered: answer != nil, now: now() ?? lastNow ?? .zero))
            case .show(let show, let presentAt):
                await player.show(show, presentAt: presentAt)
                machine.shown(show)
            case .store(let timeline):
                if let error = await keep(timeline) {
                    if unkept.map({ timeline.supersedes($0) }) ?? true { unkept = timeline }
                    logger.error("the timeline moved onto the new epoch was not kept", metadata: ["error": "\(error)"])
                }
            case .note(let note):
                log(note)
            }
        }
    }

    private func log(_ note: FollowerNote) {
        switch note {
        case .anchored(let version, let entry, let pass, let itemTime, let at, let aheadBy):
            logger.info(
                "anchored",
                metadata: [
                    "timeline.version": .value(version), "timeline.entry": .value(entry), "timeline.pass": .value(pass),
                    "timeline.item_time_ns": .nanoseconds(itemTime), "timeline.at_ns": .nanoseconds(at),
                    "timeline.in_ns": .nanoseconds(aheadBy),
                ])
        case .holding(let version, let state, let itemTime, let aheadBy):
            logger.info(
                "holding a frame",
                metadata: [
                    "timeline.version": .value(version), "timeline.state": "\(state.rawValue)",
                    "timeline.item_time_ns": .nanoseconds(itemTime), "timeline.in_ns": .nanoseconds(aheadBy),
                ])
        case .showing(let version, let show, let at):
            logger.info(
                "showing",
                metadata: [
                    "timeline.version": .value(version), "timeline.show": "\(show)", "timeline.at_ns": .nanoseconds(at),
                ])
        case .pauseScheduled(let at):
            logger.info("pause scheduled", metadata: ["timeline.at_ns": .nanoseconds(at)])
        case .resumeScheduled(let at):
            logger.info("resume scheduled", metadata: ["timeline.at_ns": .nanoseconds(at)])
        case .readyTooLate(let lateBy, let newLead):
            logger.warning(
                "anchor ready too late; trying again further ahead",
                metadata: ["timeline.late_by_ns": .nanoseconds(lateBy), "timeline.lead_ns": .nanoseconds(newLead)])
        case .anchorFailed(let reason):
            logger.error("cannot follow the timeline", metadata: ["timeline.problem": "\(reason)"])
        case .rejoining(let reason, let rejoins):
            logger.warning(
                "off the timeline; rejoining where the wall is",
                metadata: ["timeline.reason": "\(reason)", "timeline.rejoins": .value(rejoins)])
        case .epochMoved(let epoch, let version):
            logger.warning(
                "the master's time started over: the timeline now holds from master time zero of its new epoch",
                metadata: ["clock.epoch": .value(epoch), "timeline.version": .value(version)])
        case .epochMoveFailed(let reason):
            logger.error("cannot move the timeline onto the master's new epoch", metadata: ["error": "\(reason)"])
        case .playerRefused(let reason):
            logger.warning("the player refused; anchoring again", metadata: ["error": "\(reason)"])
        }
    }
}

/// Why a timeline was not followed.
public enum FollowerError: Error, CustomStringConvertible {
    case refused(TimelineError)
    case notKept(TimelineStoreError)

    public var description: String {
        switch self {
        case .refused(let error): return "timeline refused: \(error)"
        case .notKept(let error): return "\(error)"
        }
    }
}
