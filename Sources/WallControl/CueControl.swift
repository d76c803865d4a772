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
        return CueControl(control: control, resolved: resolved)
    }

    private init(control: TimelineControl, resolved: [String: Cue]) {
        self.control = control
        self.resolved = resolved
    }

    /// The cues it knows, by name.
    public var names: [String] { resolved.keys.sorted() }

    /// The timeline edit `command` asks for, or an error naming what is wrong (an unknown cue).
    public func edit(for command: ShowCommand) throws(ControlError) -> TimelineEdit {
        switch command {
        case .cue(let name):
            guard let cue = resolved[name] else {
                let all = control.wall.config.cues.keys.sorted()
                let known = all.isEmpty ? "the config has no cues:" : "its cues are \(all.joined(separator: ", "))"
                throw .timeline("no cue \"\(name)\" in wall \(control.wall.config.name): \(known)")
            }
            return .cue(name: name, cue)
        case .pause: return .pause
        case .resume: return .resume
        case .next: return .next
        case .previous: return .previous
        case .black: return .black
        case .stop: return .stop
        }
    }

    /// How far ahead a cue every node holds in standby takes effect: the edit's way to the nodes
    /// and a step of their followers, with room for a busy scheduler. Its first frame is prerolled
    /// already.
    public static let standbyLead = MediaTime(value: 60, timescale: 1000)

    /// What a cut every node holds needs on top of the slowest recent send, for the nodes' steps.
    static let sendMargin = MediaTime(value: 30, timescale: 1000)

    /// How long the recent sends took, to every node and back: a busy controller or wall answers
    /// slowly, and a cut due before the nodes have it would miss its first frames.
    private let sendTimes = Mutex(RecentValues<MediaTime>(capacity: 8))

    /// The lead of a cue every node holds: `standbyLead`, or longer while recent sends took longer
    /// (the slowest of the last eight, plus `sendMargin`).
    public var heldLead: MediaTime {
        let slowest = sendTimes.withLock { $0.values.max() } ?? .zero
        return MediaTime.maximum(Self.standbyLead, slowest + Self.sendMargin)
    }

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
        if case .cue(let name) = command, control.wall.config.cues[name]?.standby == true {
            // With none sent yet (`wallctl cue`, a process per cue), the nodes' timeline is asked for
            // alongside their status, not after it: one round trip less before the cut.
            let known = lastSent.withLock { $0 }
            async let asked = known == nil ? Self.newest(of: control) : nil
            let samples = try await control.wall.everyNode { client throws(ControlError) in try await client.status() }
            let statuses = samples.values.map(\.status)
            let versions = Set(statuses.map { $0.timeline?.version })
            if statuses.allSatisfy({ $0.clock.usable && $0.timeline?.cuesReady?.contains(name) == true }),
                versions.count == 1, let version = versions.first ?? nil
            {
                var timeline = known
                if timeline == nil { timeline = await asked }
                if timeline?.version != version { timeline = try await control.current().timeline }
                if let timeline, timeline.version == version {
                    let lead = heldLead
                    let at = try TimelineControl.effectiveTime(
                        lead: lead, minimum: .zero, master: try Wall.masterNow(from: samples))
                    let sending = LocalClock.monotonic.now()
                    let sent = try await control.carryOut(
                        "\(command)", on: timeline, at: at, lead: lead, requested: requested,
                        confirming: confirming) { _, _ in edit }
                    if !confirming { sendTimes.withLock { $0.append(LocalClock.monotonic.now() - sending) } }
                    lastSent.withLock { $0 = sent }
                    return (sent, lead)
                }
            }
        }
        // Not held: every node must have the cue's files, or it is said now, naming what is missing.
        if case .cue(let name) = command, let media = control.wall.config.cues[name]?.media, !media.isEmpty {
            _ = try await control.lengths(of: media)
        }
        let sent = try await control.carryOut("\(command)", lead: lead, at: requested, confirming: confirming) { _, _ in
            edit
        }
        lastSent.withLock { $0 = sent }
        return (sent, nil)
    }

    /// The newest timeline the nodes follow, or nil when they cannot say (the caller asks again,
    /// and then an error is an error).
    private static func newest(of control: TimelineControl) async -> Timeline? {
        try? await control.current().timeline
    }
}
