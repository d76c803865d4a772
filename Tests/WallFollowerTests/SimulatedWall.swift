import LockstepTime
import WallFollower
import WallTimeline

/// A wall of follower state machines on simulated screens and one simulated master clock, run as
/// discrete events in simulated time: ticks, preparations that take time, kills and restarts,
/// stopped processes, a master that starts over. Nothing sleeps; a minute of wall time runs in
/// milliseconds, and the same run gives the same result every time.
final class SimulatedWall {
    /// One node: its machine, its screen, and its state file.
    final class Node {
        let id: String
        var machine: FollowerStateMachine
        let screen: SimulatedScreen
        /// What the node's state file holds.
        var stored: Timeline?
        var alive = true
        var frozenUntil: MediaTime?
        var nextTick: MediaTime
        var pendingPrepare: (preparation: Preparation, at: MediaTime)?
        var pendingShow: (show: TimelineShow, at: MediaTime)?
        var pendingExactFrame: (itemTime: MediaTime, at: MediaTime)?
        var notes: [FollowerNote] = []
        /// Screens of earlier lives of this node (before a kill), for the record.
        var earlierScreens: [SimulatedScreen] = []

        init(id: String, wall: String, configuration: FollowerStateMachine.Configuration, at time: MediaTime) {
            self.id = id
            machine = FollowerStateMachine(wall: wall, configuration: configuration)
            screen = SimulatedScreen(node: id)
            nextTick = time
        }

        var rejoins: Int { notes.filter { if case .rejoining = $0 { return true } else { return false } }.count }
    }

    let name = "sim"
    /// True time: the master's time is this minus `masterShift`.
    private(set) var now = MediaTime.zero
    private var masterShift = MediaTime.zero
    private(set) var epoch: UInt64 = 1
    private(set) var nodes: [String: Node] = [:]
    /// How long a node's preparation (load and preroll) takes.
    var preparationTime = MediaTime(value: 150, timescale: 1000)
    var tick = MediaTime(value: 40, timescale: 1000)
    /// Preparations that fail, for nodes whose media is missing.
    var failingNodes: Set<String> = []
    /// The newest timeline any controller made.
    private(set) var timeline: Timeline?

    var masterNow: MediaTime { now - masterShift }

    /// Starts node `id`, reading its state file back (a restart) when it has one.
    func start(_ id: String, displayLatency: MediaTime = .zero) {
        var configuration = FollowerStateMachine.Configuration(displayLatency: displayLatency)
        configuration.queueDepth = 2
        let stored = nodes[id]?.stored
        let earlier = nodes[id].map { $0.earlierScreens + [$0.screen] } ?? []
        let node = Node(
            id: id, wall: name, configuration: configuration,
            at: now + tick.multiplied(byRatio: Int64(nodes.count % 4), 4))
        node.earlierScreens = earlier
        node.stored = stored
        if let stored { node.machine.adopt(stored, now: nil) }
        nodes[id] = node
    }

    /// kill -9: the node's process is gone, its screen goes dark.
    func kill(_ id: String) {
        guard let node = nodes[id] else { return }
        node.alive = false
        node.screen.show(.black, at: masterNow)
    }

    /// SIGSTOP for `duration`, then SIGCONT.
    func freeze(_ id: String, for duration: MediaTime) {
        guard let node = nodes[id] else { return }
        node.frozenUntil = now + duration
        node.screen.freeze(at: now, for: duration)
        node.pendingPrepare = node.pendingPrepare.map { ($0.preparation, $0.at + duration) }
    }

    /// The master restarts on a new epoch: its time starts over from zero.
    func restartMaster() {
        let delta = masterNow
        for node in nodes.values {
            node.screen.advance(to: masterNow)
            node.screen.rebase(by: delta)
            node.pendingShow = nil
        }
        masterShift = now
        shifts.append((now, masterShift))
        epoch += 1
    }

    /// True time minus master time, from each true time on.
    private var shifts: [(from: MediaTime, shift: MediaTime)] = [(.zero, .zero)]

    /// The master's time at true time `time`.
    func master(at time: MediaTime) -> MediaTime {
        time - (shifts.last { $0.from <= time }?.shift ?? .zero)
    }

    /// A controller's `play`: a new timeline `lead` ahead, sent to every live node.
    @discardableResult
    func play(_ playlist: Playlist, lead: MediaTime = MediaTime(value: 2, timescale: 1)) throws -> Timeline {
        let made = try Timeline(
            wall: name, version: (timeline?.version ?? 0) + 1, epoch: epoch, playlist: playlist, start: masterNow + lead
        )
        send(made)
        return made
    }

    /// A controller's edit `lead` ahead of the master's now, sent to every live node.
    @discardableResult
    func edit(_ edit: TimelineEdit, lead: MediaTime = MediaTime(value: 1, timescale: 1)) throws -> Timeline {
        guard let timeline else { throw SimulationError("no timeline to edit") }
        let edited = try timeline.applying(edit, at: masterNow + lead)
        send(edited)
        return edited
    }

    /// Sends `timeline` to every live node (a peer's timeline reaches a node that joins later).
    func send(_ timeline: Timeline) {
        self.timeline = timeline
        for node in nodes.values where node.alive { deliver(timeline, to: node) }
    }

    func deliver(_ timeline: Timeline, to node: Node) {
        node.stored = timeline
        node.machine.adopt(timeline, now: masterNow)
    }

    /// Runs the wall until true time `end`.
    func run(until end: MediaTime) {
        while true {
            let live = nodes.values.filter(\.alive).sorted { $0.id < $1.id }
            let times = live.flatMap { node in
                [node.nextTick, node.pendingPrepare?.at, node.pendingShow?.at, node.pendingExactFrame?.at]
                    .compactMap { $0 }
            }
            guard let next = times.min(), next <= end else { break }
            now = next
            for node in live { process(node) }
        }
        now = end
        for node in nodes.values where node.alive { node.screen.advance(to: now) }
    }

    func run(for duration: MediaTime) { run(until: now + duration) }

    private func process(_ node: Node) {
        if let until = node.frozenUntil {
            guard now >= until else {
                node.nextTick = until
                return
            }
            node.frozenUntil = nil
        }
        node.screen.advance(to: masterNow)
        if let pending = node.pendingPrepare, pending.at <= now {
            node.pendingPrepare = nil
            let outcome: PreparationOutcome
            if failingNodes.contains(node.id) {
                outcome = .failed("the media is missing")
            } else {
                node.screen.prepare(pending.preparation, at: masterNow)
                outcome = .ready
            }
            perform(node.machine.prepared(pending.preparation.id, outcome: outcome, now: masterNow), on: node)
        }
        if let pending = node.pendingShow, pending.at <= now {
            node.pendingShow = nil
            node.screen.show(pending.show, at: masterNow)
            node.machine.shown(pending.show)
        }
        if let pending = node.pendingExactFrame, pending.at <= now {
            node.pendingExactFrame = nil
            node.screen.showExactFrame(pending.itemTime, at: masterNow)
            perform(node.machine.pausedFrameShown(answered: true, now: masterNow), on: node)
        }
        guard node.nextTick <= now else { return }
        node.nextTick = now + tick
        // A node whose preparation is under way steps no further until it is answered (the driver
        // awaits it).
        guard node.pendingPrepare == nil, node.pendingExactFrame == nil else { return }
        let observation = FollowerObservation(
            clock: .usable(now: masterNow, epoch: epoch), latestFrame: node.screen.latest,
            queuedPasses: node.screen.queuedPasses, playerPaused: node.screen.isPaused)
        perform(node.machine.tick(observation), on: node)
    }

    private func perform(_ actions: [FollowerAction], on node: Node) {
        for action in actions {
            switch action {
            case .prepare(let preparation):
                node.pendingPrepare = (preparation, now + preparationTime)
            case .start(let rate, let itemTime, let presentAt):
                node.screen.start(rate: rate, itemTime: itemTime, presentAt: presentAt, at: masterNow)
            case .presentHeld(let itemTime, let presentAt):
                node.screen.presentHeld(itemTime: itemTime, presentAt: presentAt, at: masterNow)
            case .pause(let presentAt):
                node.screen.pause(presentAt: presentAt, at: masterNow)
            case .enqueue(let pass):
                node.screen.enqueue(pass)
            case .advanceAtItemEnd(let advances):
                node.screen.setAdvances(advances)
            case .showExactFrame(let itemTime):
                node.pendingExactFrame = (itemTime, now + MediaTime(value: 30, timescale: 1000))
            case .show(let show, let presentAt):
                node.pendingShow = (show, MediaTime.maximum(presentAt + masterShift, now))
            case .store(let timeline):
                node.stored = timeline
            case .note(let note):
                node.notes.append(note)
            }
        }
    }

    // MARK: Ground truth

    /// What node `id`'s glass should show at true time `time`, by the timeline it should follow.
    func expected(_ id: String, at time: MediaTime, timeline: Timeline) -> SimulatedScreen.Glass {
        let position = timeline.position(at: master(at: time))
        switch position.state {
        case .playing, .paused:
            return .frame(
                media: position.entry.media(forNode: id), number: (position.itemTime.nanoseconds ?? 0) / 40_000_000)
        case .ended:
            let last = position.entry.outPoint - MediaTime(value: 1, timescale: 1000)
            return .frame(media: position.entry.media(forNode: id), number: (last.nanoseconds ?? 0) / 40_000_000)
        case .waiting:
            return .frame(
                media: position.entry.media(forNode: id), number: (position.itemTime.nanoseconds ?? 0) / 40_000_000)
        case .stopped, .black, .still, .testCard:
            return .show(position.show.kind)
        }
    }

    /// The share of `samples` times in `window` at which node `id`'s glass showed what the timeline
    /// (by default the newest) says, and the first times it did not.
    func agreement(
        _ id: String, in window: Range<MediaTime>, timeline: Timeline? = nil,
        step: MediaTime = MediaTime(value: 10, timescale: 1000)
    ) -> (share: Double, misses: [(MediaTime, SimulatedScreen.Glass, SimulatedScreen.Glass)]) {
        guard let node = nodes[id], let timeline = timeline ?? self.timeline else { return (0, []) }
        var total = 0
        var misses: [(MediaTime, SimulatedScreen.Glass, SimulatedScreen.Glass)] = []
        var time = window.lowerBound
        while time < window.upperBound {
            total += 1
            let shown = node.screen.glass(at: time)
            let wanted = expected(id, at: time, timeline: timeline)
            if shown != wanted { misses.append((time, shown, wanted)) }
            time = time + step
        }
        return (Double(total - misses.count) / Double(max(total, 1)), Array(misses.prefix(5)))
    }

    /// How long after `since` node `id` showed what the timeline says for `run` in a row (true time),
    /// checked every 5 ms; nil if never within `within`.
    func inStep(
        _ id: String, since: MediaTime, within: MediaTime, run: MediaTime = MediaTime(value: 500, timescale: 1000),
        timeline: Timeline? = nil
    ) -> MediaTime? {
        guard let node = nodes[id], let timeline = timeline ?? self.timeline else { return nil }
        let step = MediaTime(value: 5, timescale: 1000)
        var time = since
        var streak: MediaTime?
        while time < since + within {
            let shown = node.screen.glass(at: time)
            if shown == expected(id, at: time, timeline: timeline) {
                let from = streak ?? time
                streak = from
                if time - from >= run { return from - since }
            } else {
                streak = nil
            }
            time = time + step
        }
        return nil
    }
}

struct SimulationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
