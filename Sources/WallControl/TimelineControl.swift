import Foundation
import LockstepTime
import WallProtocol
import WallTimeline

/// Driving a wall through its timeline: every verb is a new version of the wall's desired state.
/// `play` and `start` make a new timeline, every other verb an edit of the newest one the nodes
/// hold, applied here (WallTimeline is pure: every node would compute the same) and sent to every
/// node, which keeps it and follows it from the edit's master time on.
///
/// Each waits first, up to the wall's `waitLimit`, for what it needs (every node answering with a
/// usable clock, every node holding the media it names), and afterwards for every node to carry
/// the new version out, saying what it waits for.
public struct TimelineControl: Sendable {
    /// How far ahead an edit takes effect at the least: a node prepares a change (loads and
    /// prerolls what comes next) before its master time, which takes a few hundred milliseconds.
    public static let minimumEditLead = MediaTime(value: 1, timescale: 1)
    /// Extra allowance on top of what was measured, for a command that meets a busy scheduler.
    static let safety = MediaTime(value: 20, timescale: 1000)

    public let wall: Wall

    public init(wall: Wall) {
        self.wall = wall
    }

    /// The newest timeline any node holds (nil when none holds one), and each node's version.
    public func current() async throws -> (timeline: Timeline?, versions: [String: UInt64?]) {
        let timelines = try await wall.everyNode { client throws(ControlError) in try await client.timeline() }
        let newest = timelines.values.compactMap { $0 }.filter { $0.wall == wall.config.name }
            .max { $1.supersedes($0) }
        return (newest, timelines.mapValues { $0?.version })
    }

    /// The master time an edit or a new timeline takes effect at: the master's now, as the fastest
    /// node tells it, plus a lead that covers the control round trips and a node's preparation.
    ///
    /// - Parameter minimum: the least lead: `minimumEditLead` for what nodes prepare; less for a
    ///   cut every node holds prepared already (a cue in standby).
    public func effectiveTime(lead: MediaTime, minimum: MediaTime = minimumEditLead) async throws -> MediaTime {
        try Self.effectiveTime(lead: lead, minimum: minimum, master: try await wall.masterNow())
    }

    static func effectiveTime(
        lead: MediaTime, minimum: MediaTime, master: (time: MediaTime, slowestRoundTrip: MediaTime)
    ) throws -> MediaTime {
        let (now, slowest) = master
        let margin = MediaTime.maximum(MediaTime.maximum(lead, minimum), slowest * 3 + Self.safety)
        return (now + margin).convertScale(MediaTime.nanosecondTimescale)
    }

    /// The master's epoch every node follows, which a new timeline is anchored on.
    static func epoch(_ statuses: [String: NodeStatus]) throws -> UInt64 {
        let known = Set(statuses.values.compactMap(\.clock.epoch))
        guard known.count <= 1 else {
            throw ControlError.timeline(
                "the nodes follow different master clocks: "
                    + statuses.sorted { $0.key < $1.key }
                    .map { "\($0.key): epoch \($0.value.clock.epoch.map { String($0, radix: 16) } ?? "none")" }
                    .joined(separator: ", "))
        }
        return known.first ?? 0
    }

    /// Playlist entries for `items`, once every node has their media, with each missing out-point
    /// resolved to the shortest of the nodes' files for it, so no screen runs out of picture before
    /// the others change entry.
    ///
    /// - Parameter distributed: for media the wall distributes, each node's content ID by node id:
    ///   the entry names it (one ID for every node, or each node's own for tiles).
    public func entries(_ items: [PlaylistItemConfig], distributed: [String: [String: ContentID]] = [:]) async throws
        -> [TimelineEntry]
    {
        let lengths = try await lengths(of: items.map(\.media), distributed: distributed)
        return try items.map { item in
            guard let outPoint = item.outPoint ?? lengths[item.media] else {
                throw ControlError.timeline(
                    "\(item.media): a node does not know its length; give the entry an out point")
            }
            guard outPoint > item.inPoint else {
                throw ControlError.timeline(
                    "\(item.media): it is not longer than its in point \(item.inPoint.seconds) s")
            }
            var entry = item.entry(outPoint: outPoint)
            entry.distribute(distributed[item.media] ?? [:])
            return entry
        }
    }

    /// The length of each of `media` once every node holds it: the shortest of the nodes' files,
    /// so no screen runs out of picture before the others change entry (absent when a node cannot
    /// tell).
    func lengths(of media: [String], distributed: [String: [String: ContentID]] = [:]) async throws
        -> [String: MediaTime]
    {
        // Every node answering with its clock first: a node that is not up yet is waited for once.
        _ = try await wall.waitForClocks()
        let media = Array(Set(media)).sorted()
        var content: [String: [ContentID?]] = [:]
        if !distributed.isEmpty {
            for client in wall.clients { content[client.id] = media.map { distributed[$0]?[client.id] } }
        }
        let durations = try await wall.waitForMedia(media, content: content)
        var lengths: [String: MediaTime] = [:]
        for (index, name) in media.enumerated() {
            let each = durations.values.map { $0[index] }
            if let shortest = each.filter(\.isNumeric).min(), each.allSatisfy(\.isNumeric) { lengths[name] = shortest }
        }
        return lengths
    }

    /// A new timeline that plays `config` by the calendar from one master time `lead` ahead: every
    /// node computes its transitions from then on by itself. Needs a master serving real time.
    @discardableResult
    ///
    /// - Parameter distributed: for the schedule's media the wall distributes, each node's content ID
    ///   by node id (`ContentPush`).
    public func play(
        _ what: String, schedule config: ScheduleConfig, lead: MediaTime,
        distributed: [String: [String: ContentID]] = [:]
    ) async throws -> Timeline {
        let statuses = try await realTimeClocks()
        let lengths = try await lengths(of: config.media, distributed: distributed)
        guard let schedule = config.schedule(lengths: lengths, distributed: distributed) else {
            throw ControlError.timeline(
                "a node does not know the length of a scheduled file; give its entry an out point")
        }
        return try await publish(what, statuses: statuses, lead: lead) { version, epoch, at throws(TimelineError) in
            let timeline = try Timeline(
                wall: wall.config.name, version: version, epoch: epoch, configSHA256: wall.config.digest,
                schedule: schedule, now: at)
            describe(timeline, at: at, what: what)
            for change in schedule.changes(from: at, days: 2).dropFirst().prefix(4) {
                wall.say("  \(ScheduleListing.line(change))")
            }
            return timeline
        }
    }

    /// Every node's status once each answers with its clock, if every one follows a master serving
    /// real time, as a schedule needs; else why not.
    func realTimeClocks() async throws -> [String: NodeStatus] {
        let statuses = try await wall.waitForClocks()
        let notRealtime = statuses.filter { $0.value.clock.realtime != true }.keys.sorted()
        guard notRealtime.isEmpty else {
            throw ControlError.timeline(
                "\(TimelineError.scheduleNeedsRealTime) (nodes \(notRealtime.joined(separator: ", ")) follow one that "
                    + "does not)")
        }
        return statuses
    }

    /// A new timeline: `playlist` from `origin` at `rate`, on every screen from one master time
    /// `lead` ahead. Returns it once every node carries it out.
    @discardableResult
    public func play(
        _ what: String, playlist: Playlist, origin: PlaylistPoint = PlaylistPoint(entry: 0),
        rate: PlaybackRate = .normal, lead: MediaTime
    ) async throws -> Timeline {
        try await publish(what, statuses: try await wall.waitForClocks(), lead: lead) {
            version, epoch, at throws(TimelineError) in
            let timeline = try Timeline(
                wall: wall.config.name, version: version, epoch: epoch, configSHA256: wall.config.digest,
                playlist: playlist, start: at, origin: origin, rate: rate)
            describe(timeline, at: at, what: what)
            return timeline
        }
    }

    /// Plays the config's show, as `wallctl play` and the console's play do: its schedule by the
    /// calendar, else its playlist (looping as `loops` says, else as the config does), from one
    /// master time `lead` ahead.
    ///
    /// - Parameter distribute: for the schedule's media, sends the files the nodes lack and names
    ///   each node's copy (`ContentPush`); the playlist's are in the nodes' media roots.
    @discardableResult
    public func playShow(
        _ what: String = "play", lead: MediaTime, loops: Bool? = nil,
        distribute: ([String]) async throws -> [String: [String: ContentID]] = { _ in [:] }
    ) async throws -> Timeline {
        if let schedule = wall.config.schedule {
            // Refused before a file is sent, not after.
            _ = try await realTimeClocks()
            return try await play(
                what, schedule: schedule, lead: lead, distributed: try await distribute(schedule.media))
        }
        let playlist = Playlist(
            entries: try await entries(wall.config.playlistItems), loops: loops ?? wall.config.loop)
        return try await play(what, playlist: playlist, lead: lead)
    }

    /// Makes the wall's next timeline version on the nodes' master epoch, from a master time `lead`
    /// ahead (never less than the config's `start-margin`, which every new timeline keeps), sends
    /// it, and returns it once every node carries it out.
    private func publish(
        _ what: String, statuses: [String: NodeStatus], lead: MediaTime,
        _ make: (_ version: UInt64, _ epoch: UInt64, _ at: MediaTime) throws(TimelineError) -> Timeline
    ) async throws -> Timeline {
        let epoch = try Self.epoch(statuses)
        let version = try (try await current().timeline)?.nextVersion ?? 1
        let at = try await effectiveTime(lead: MediaTime.maximum(lead, wall.config.startMargin))
        let timeline: Timeline
        do {
            timeline = try make(version, epoch, at)
        } catch {
            throw ControlError.timeline("\(error)")
        }
        try await send(timeline)
        try await confirm(timeline, at: at)
        return timeline
    }

    /// Applies the edit `make` chooses (from the timeline and the edit's master time, a lead
    /// ahead), sends the result, and returns it once every node carries it out.
    ///
    /// - Parameters:
    ///   - at: a master time asked for (an OSC bundle's time tag), used when it is later than the
    ///     lead allows.
    ///   - confirming: whether to wait for every node to carry it out, or return once every node
    ///     holds it (show control, which must not keep the next button waiting).
    @discardableResult
    public func carryOut(
        _ what: String, lead: MediaTime, minimumLead: MediaTime = minimumEditLead, at requested: MediaTime? = nil,
        confirming: Bool = true, _ make: @Sendable (Timeline, MediaTime) throws -> TimelineEdit
    ) async throws -> Timeline {
        _ = try await wall.waitForClocks()
        guard let timeline = try await current().timeline else {
            throw ControlError.timeline(
                "no node holds a timeline of wall \"\(wall.config.name)\": start one with wallctl play or wallctl start"
            )
        }
        let at = try await effectiveTime(lead: lead, minimum: minimumLead)
        return try await carryOut(
            what, on: timeline, at: at, lead: lead, requested: requested, confirming: confirming, make)
    }

    /// `carryOut` on `timeline` (the one every node follows, as the caller knows) at master time
    /// `at`: for a cut that cannot wait for the round trips that find them.
    public func carryOut(
        _ what: String, on timeline: Timeline, at: MediaTime, lead: MediaTime, requested: MediaTime? = nil,
        confirming: Bool = true, _ make: @Sendable (Timeline, MediaTime) throws -> TimelineEdit
    ) async throws -> Timeline {
        var timeline = timeline
        var at = at
        if let requested {
            at = try Self.requestedTime(requested, earliest: at, horizon: wall.config.startHorizon, what)
        }
        // What no time from now on needs is dropped, so a timeline edited for months stays small.
        timeline.forget(before: at - lead - lead)
        let edited: Timeline
        do {
            var next = try timeline.applying(try make(timeline, at), at: at)
            next.configSHA256 = wall.config.digest
            edited = next
        } catch let error as TimelineError {
            throw ControlError.timeline("\(error)")
        }
        try await send(edited)
        describe(edited, at: at, what: what)
        if confirming { try await confirm(edited, at: at) }
        return edited
    }

    /// The master time an edit asked for at `requested` (an OSC bundle's time tag) takes effect
    /// at: `earliest` (what the lead allows) if that is later; refused past `horizon`, which every
    /// scheduled start is held to.
    static func requestedTime(
        _ requested: MediaTime, earliest: MediaTime, horizon: MediaTime, _ what: String
    ) throws(ControlError) -> MediaTime {
        guard requested > earliest else { return earliest }
        guard requested - earliest <= horizon else {
            throw .timeline(
                "\(what): the time asked for is \(Int((requested - earliest).seconds)) s ahead, past start-horizon "
                    + "(\(Int(horizon.seconds)) s)")
        }
        return requested.convertScale(MediaTime.nanosecondTimescale)
    }

    /// Sends `timeline` to every node.
    public func send(_ timeline: Timeline) async throws {
        _ = try await wall.everyNode { client throws(ControlError) in try await client.follow(timeline) }
    }

    /// Waits until the master passes `at`, then until every node carries `timeline` out (on its
    /// version, settled on the segment in force, and in step when it plays); prints where each
    /// node stands. Throws naming the nodes that do not within the wall's wait limit.
    public func confirm(_ timeline: Timeline, at: MediaTime) async throws {
        let (now, _) = try await wall.masterNow()
        if let wait = (at - now).nanoseconds, wait > 0 { try await Task.sleep(for: .nanoseconds(wait)) }
        let statuses = try await waitForScreens(on: timeline.version)
        for (id, status) in statuses.sorted(by: { $0.key < $1.key }) {
            guard let report = status.timeline else { continue }
            wall.say("  \(id): \(Self.describe(report))")
        }
    }

    /// Waits until every node carries out `version` (or a newer one): on it, settled on the segment
    /// in force, without a problem, and in step when it plays. Returns their statuses.
    public func waitForScreens(on version: UInt64) async throws -> [String: NodeStatus] {
        try await wall.waitFor("every screen on version \(version)") { client throws(ControlError) in
            let status = try await client.status().status
            guard let report = status.timeline else { return (status, "on version none") }
            return (status, report.lack(toCarryOut: version))
        }
    }

    /// "playing, entry 1, pass 0, item time 2.500 s, in step".
    public static func describe(_ report: TimelineReport) -> String {
        var text = report.show.flatMap { $0 == "playlist" ? nil : $0 } ?? report.state
        if report.show == nil || report.show == "playlist" {
            text +=
                ", entry \(report.entry), pass \(report.pass), item time "
                + String(format: "%.3f s", report.itemTime.seconds)
        }
        if let inStep = report.inStep, report.state == TimelinePosition.State.playing.rawValue {
            text += inStep ? ", in step" : ", not in step"
        }
        return text
    }

    /// Says what `timeline` holds from `at` on.
    public func describe(_ timeline: Timeline, at: MediaTime, what: String) {
        let segment = timeline.segment(at: at)
        wall.say("\(what): timeline version \(timeline.version) from master time \(at.seconds) s")
        let position = timeline.position(at: at)
        guard segment.show == .playlist else {
            wall.say(
                "  then: \(segment.show)"
                    + (timeline.segment(after: at).map { ", until master time \($0.from.seconds) s" } ?? ""))
            return
        }
        for (index, entry) in segment.playlist.entries.enumerated() {
            let repeats: String
            switch entry.repeats {
            case .forever: repeats = "forever"
            case .times(let count): repeats = count == 1 ? "once" : "\(count) times"
            }
            wall.say("  \(index): \(entry.media)  \(entry.inPoint.seconds)–\(entry.outPoint.seconds) s, \(repeats)")
        }
        wall.say(
            "  then: \(position.state.rawValue), entry \(position.entryIndex), pass \(position.pass), item time "
                + "\(position.itemTime.seconds) s, rate \(position.rate)"
                + (segment.playlist.loops ? ", the playlist loops" : ", the playlist ends on its last frame"))
    }
}
