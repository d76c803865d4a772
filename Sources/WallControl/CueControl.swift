import Foundation
import LockstepLocks
import LockstepNet
import LockstepTime
import ShowControl
import WallProtocol
import WallTimeline

/// Show control: cues by name and the transport verbs, from `wallctl cue` or from the inputs a
/// control daemon or a node listens on (`ShowInput`), each carried out as a timeline edit at one
/// master time, like every other verb.
public final class CueControl: Sendable {
    public let control: TimelineControl
    /// The config's cues, their clips' lengths resolved (the nodes asked once).
    private let resolved: [String: Cue]
    /// The timeline this sent last: a cue held in standby edits it without asking the nodes for it
    /// when they all follow its version.
    private let lastSent = Mutex<Timeline?>(nil)

    /// Resolves every cue of the wall's config (asking the nodes the lengths of clips without an
    /// out point): an unknown length is an error naming the cue.
    ///
    /// - Parameter only: the one cue to resolve (`wallctl cue NAME`), sparing the others' files a
    ///   look on every node; nil: all.
    public static func prepare(_ wall: Wall, only: String? = nil) async throws -> CueControl {
        let control = TimelineControl(wall: wall)
        let cues = wall.config.cues.filter { only == nil || $0.key == only }
        // Only clips without an out point need the nodes' word on their length.
        let media = Array(Set(cues.values.flatMap(\.mediaOfUnknownLength))).sorted()
        let lengths = media.isEmpty ? [:] : try await control.lengths(of: media)
        var resolved: [String: Cue] = [:]
        for (name, config) in cues {
            guard let cue = config.cue(lengths: lengths) else {
                throw ControlError.timeline("cue \(name): a node does not know its clip's length; give it an out point")
            }
            resolved[name] = cue
        }
        return CueControl(control: control, resolved: resolved, fixedLead: wall.config.showControl?.cueLead)
    }

    private init(control: TimelineControl, resolved: [String: Cue], fixedLead: MediaTime?) {
        self.control = control
        self.resolved = resolved
        self.fixedLead = fixedLead
    }

    /// The cues it knows, by name.
    public var names: [String] { resolved.keys.sorted() }

    /// The timeline edit `command` asks for, as a function of the timeline and the edit's master
    /// time: a cue's, or its transport verb's (`WallVerb`, as the command line and the console make
    /// it); an error names what is wrong (an unknown cue).
    public func edit(for command: ShowCommand) throws(ControlError) -> @Sendable (Timeline, MediaTime) -> TimelineEdit {
        if case .cue(let name) = command {
            guard let cue = resolved[name] else {
                let all = control.wall.config.cues.keys.sorted()
                let known = all.isEmpty ? "the config has no cues:" : "its cues are \(all.joined(separator: ", "))"
                throw .timeline("no cue \"\(name)\" in wall \(control.wall.config.name): \(known)")
            }
            return { _, _ in .cue(name: name, cue) }
        }
        guard let verb = WallVerb(command) else { throw .timeline("\(command) is neither a cue nor a verb") }
        return { timeline, at in verb.edit(of: timeline, at: at) }
    }

    /// The lead of a cue every node holds in standby before any cut was measured: the edit's way
    /// to the nodes and a step of their followers, with room for a busy scheduler.
    public static let standbyLead = MediaTime(value: 60, timescale: 1000)

    /// The least lead of a cue every node holds, once cuts were measured.
    public static let leastHeldLead = MediaTime(value: 15, timescale: 1000)

    /// What a cut needs on top of the slowest need measured and a quarter of it: what a node needs
    /// varies with its load (the master time the daemon estimates from a status up to half a second
    /// old, the send, the node's step), and a node whose held cut is ready after its time starts it
    /// late (up to the follower's `lateStartTolerance`, its first frame late; past it, a lead later).
    static let heldCutMargin = MediaTime(value: 5, timescale: 1000)

    /// How long the recent sends took, to every node and back (its state file written), before any
    /// cut was measured: a busy controller or wall answers slowly, and a cut due before the nodes
    /// have it would miss its first frames.
    private let sendTimes = Mutex(RecentValues<MediaTime>(capacity: 8))

    /// What each recent held cut needed, on its slowest node: from the master time the daemon read
    /// for it to the node's start, ready, less its `lead` (`TimelineReport.lastStartSlack`), and
    /// the cut whose nodes have not all said yet.
    private let needs = Mutex<(recent: RecentValues<MediaTime>, pending: PendingCut?)>((.init(capacity: 8), nil))

    private struct PendingCut: Sendable {
        var version: UInt64
        var at: MediaTime
        var lead: MediaTime
        var needs: [String: MediaTime] = [:]
    }

    /// A lead the config fixes for cues held in standby (`show-control: {lead: ...}`), in place of
    /// the measured one.
    private let fixedLead: MediaTime?

    /// The lead of a cue every node holds: the one the config fixes; else the most the last eight
    /// held cuts needed on their slowest node, and a quarter more, plus `heldCutMargin` (at least
    /// `leastHeldLead`): 20 ms at p50 on loopback with four nodes decoding (docs/BENCHMARKS.md); before any
    /// was measured, `standbyLead`, or the slowest recent send plus `heldCutMargin` when longer.
    /// And whether it rests on measured cuts (or the config's fixed lead, taken as is).
    private var heldLead: (lead: MediaTime, measured: Bool) {
        if let fixedLead { return (fixedLead, true) }
        if let need = needs.withLock({ $0.recent.values.max() }) {
            return (
                MediaTime.maximum(Self.leastHeldLead, need + need.multiplied(byRatio: 1, 4) + Self.heldCutMargin), true
            )
        }
        let slowest = sendTimes.withLock { $0.values.max() } ?? .zero
        return (MediaTime.maximum(Self.standbyLead, slowest + Self.heldCutMargin), false)
    }

    /// Learns from the nodes' statuses what the pending held cut needed: once every node said how
    /// far ahead of it its start was ready, the slowest one's need counts. A cut a newer edit
    /// overtook on some node before its start is not measured.
    private func learn(from samples: [String: StatusSample]) {
        needs.withLock { needs in
            guard var pending = needs.pending else { return }
            for (id, sample) in samples {
                guard let timeline = sample.status.timeline, let version = timeline.lastStartVersion else { continue }
                if version == pending.version, timeline.lastStartAt == pending.at, let slack = timeline.lastStartSlack {
                    pending.needs[id] = pending.lead - slack
                } else if version > pending.version {
                    needs.pending = nil
                    return
                }
            }
            if pending.needs.count == samples.count, let slowest = pending.needs.values.max() {
                needs.recent.append(slowest)
                needs.pending = nil
            } else {
                needs.pending = pending
            }
        }
    }

    /// What the nodes said last of the cues they hold, so that a cue finds it without a round trip
    /// before its cut (`watchStandby`).
    struct StandbyView: Sendable {
        var samples: [String: StatusSample]
        /// The timeline version every node followed when they said so, or nil when they followed
        /// different ones (the view then serves no cue); advanced by each held cue sent since.
        var version: UInt64?
        /// Cues sent since the nodes said so: each took its player off standby.
        var taken: Set<String> = []
        /// The last held cue sent since, and its cut's master time: a cue sent before that cut
        /// overtakes it, and the nodes put its players back in standby, prerolled.
        var cutting: (name: String, at: MediaTime)?

        init(samples: [String: StatusSample]) {
            self.samples = samples
            let versions = Set(samples.values.map { $0.status.timeline?.version })
            version = versions.count == 1 ? versions.first ?? nil : nil
        }

        /// Held cue `name` was sent for a cut at `at`, as timeline `version`, when the master's
        /// time was `master`. The cue it overtakes, with its cut still `overtakingMargin` or more
        /// ahead, is held again.
        mutating func sent(_ name: String, at: MediaTime, version: UInt64, master: MediaTime) {
            if let cutting, cutting.at - master >= CueControl.overtakingMargin { taken.remove(cutting.name) }
            taken.insert(name)
            cutting = (name, at)
            // A view of nodes on different versions serves no cue, sent or not: what they said
            // was about different timelines.
            if self.version != nil { self.version = version }
        }
    }

    /// How far ahead a held cue's cut must still be when the next cue is sent for it to count as
    /// overtaken (its players back in standby): the next cue's way to the nodes, with room.
    static let overtakingMargin = MediaTime(value: 10, timescale: 1000)
    private let standby = Mutex<(view: StandbyView?, sends: UInt64)>((nil, 0))

    /// How long what the nodes said of their standby counts: past it, a cue asks them again.
    static let standbyViewLifetime = MediaTime(value: 500, timescale: 1000)
    /// How often `watchStandby` asks.
    static let standbyWatchInterval = Duration.milliseconds(200)

    /// Carries `command` out on every screen at one master time `lead` ahead, or at `at` (a master
    /// time an OSC bundle named) when that is later; with `confirming`, returns once every node
    /// carries it out, else once every node holds it. A cue every node says it holds in standby
    /// (`cuesReady`) takes effect `standbyLead` ahead instead.
    ///
    /// - Returns: the timeline sent, and the lead it was sent with when every node held the cue in
    ///   standby (nil: the edit lead).
    @discardableResult
    public func perform(
        _ command: ShowCommand, lead: MediaTime, at requested: MediaTime? = nil, confirming: Bool = true
    ) async throws -> (timeline: Timeline, held: MediaTime?) {
        let edit = try edit(for: command)
        // A cue every node holds in standby: one round trip finds that, the master's time and the
        // version every node follows; the timeline itself is the one sent last, when it is that one.
        if case .cue(let name) = command, control.wall.config.cues[name]?.standby == true,
            let (samples, timeline) = try await held(name)
        {
            // Once cuts were measured, what they needed covers the round trip to the nodes; until
            // then the edits' rule adds three of the slowest.
            let (chosen, measured) = heldLead
            let master = try Wall.masterNow(from: samples)
            let at = try TimelineControl.effectiveTime(
                lead: chosen, minimum: .zero, master: measured ? (master.time, .zero) : master)
            let lead = at - master.time
            let sending = LocalClock.monotonic.now()
            let sent: Timeline
            do {
                sent = try await control.carryOut(
                    "\(command)", on: timeline, at: at, lead: lead, requested: requested, confirming: confirming, edit)
            } catch {
                forgetStandby()
                throw error
            }
            if !confirming { sendTimes.withLock { $0.append(LocalClock.monotonic.now() - sending) } }
            needs.withLock { $0.pending = PendingCut(version: sent.version, at: at, lead: lead) }
            lastSent.withLock { $0 = sent }
            standby.withLock { standby in
                standby.sends += 1
                standby.view?.sent(name, at: at, version: sent.version, master: master.time)
            }
            return (sent, lead)
        }
        forgetStandby()
        // Not held: every node must have the cue's files, or it is said now, naming what is missing.
        if case .cue(let name) = command, let media = control.wall.config.cues[name]?.media, !media.isEmpty {
            _ = try await control.lengths(of: media)
        }
        let sent = try await control.carryOut("\(command)", lead: lead, at: requested, confirming: confirming, edit)
        lastSent.withLock { $0 = sent }
        return (sent, nil)
    }

    /// The nodes' word that every one holds cue `name` in standby, the clock usable and one
    /// timeline version followed, with that timeline; nil when one does not. What `watchStandby`
    /// heard last serves while it is fresh and no cue has taken the cue's players since; else the
    /// nodes are asked (one round trip).
    private func held(_ name: String) async throws -> (
        samples: [String: StatusSample], timeline: Timeline
    )? {
        let known = lastSent.withLock { $0 }
        if let known, let view = standby.withLock({ $0.view }), view.version == known.version,
            !view.taken.contains(name), let oldest = view.samples.values.map(\.receivedAt).min(),
            LocalClock.monotonic.now() - oldest <= Self.standbyViewLifetime, Self.everyNodeHolds(name, in: view)
        {
            return (view.samples, known)
        }
        // With none sent yet (`wallctl cue`, a process per cue), the nodes' timeline is asked for
        // alongside their status, not after it: one round trip less before the cut.
        async let asked = known == nil ? Self.newest(of: control) : nil
        let sends = standby.withLock { $0.sends }
        let samples = try await control.wall.everyNode { client throws(ControlError) in try await client.status() }
        let view = StandbyView(samples: samples)
        remember(view, asOf: sends)
        guard let version = view.version, Self.everyNodeHolds(name, in: view) else { return nil }
        var timeline = known
        if timeline == nil { timeline = await asked }
        if timeline?.version != version { timeline = try await control.current().timeline }
        guard let timeline, timeline.version == version else { return nil }
        return (samples, timeline)
    }

    /// Whether every node said it holds cue `name` in standby, with a usable clock.
    private static func everyNodeHolds(_ name: String, in view: StandbyView) -> Bool {
        view.samples.values.allSatisfy { sample in
            sample.status.clock.usable && sample.status.timeline?.cuesReady?.contains(name) == true
        }
    }

    /// Learns from what the nodes said (`learn`), and keeps it, unless a cue was sent since they
    /// were asked.
    private func remember(_ view: StandbyView, asOf sends: UInt64) {
        learn(from: view.samples)
        standby.withLock { standby in
            if standby.sends == sends { standby.view = view }
        }
    }

    /// Something other than a held cue went to the nodes (or failed to): what they said of their
    /// standby no longer counts.
    private func forgetStandby() {
        standby.withLock { standby in
            standby.sends += 1
            standby.view = nil
        }
    }

    /// Asks every node what it holds in standby every `standbyWatchInterval` until cancelled, so a
    /// cue held on every node is sent with no round trip before its cut: the control daemon's
    /// inputs run it. A node that does not answer leaves the cues to ask for themselves.
    public func watchStandby() async {
        while !Task.isCancelled {
            let sends = standby.withLock { $0.sends }
            if let samples = try? await control.wall.everyNode({ client throws(ControlError) in
                try await client.status()
            }) {
                remember(StandbyView(samples: samples), asOf: sends)
            }
            try? await Task.sleep(for: Self.standbyWatchInterval)
        }
    }

    /// The newest timeline the nodes follow, or nil when they cannot say (the caller asks again,
    /// and then an error is an error).
    private static func newest(of control: TimelineControl) async -> Timeline? {
        try? await control.current().timeline
    }
}
