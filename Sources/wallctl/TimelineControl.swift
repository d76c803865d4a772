import Foundation
import LockstepTime
import WallControl
import WallProtocol
import WallTimeline

/// Driving a wall through its timeline: the newest one the nodes hold, an edit applied to it here
/// (WallTimeline is pure, so every node would compute the same), and the result sent to every
/// node, which follows it from the edit's host time on.
struct TimelineControl {
    /// How far ahead an edit takes effect at the least: a node prepares a change (loads and
    /// prerolls what comes next) before its host time, which takes a few hundred milliseconds.
    static let minimumEditLead = MediaTime(value: 1, timescale: 1)

    let wall: Wall

    /// The newest timeline any selected node holds (nil when none holds one), and each node's
    /// version.
    func current() async throws -> (timeline: Timeline?, versions: [String: UInt64?]) {
        let timelines = try await wall.everyNode { client throws(ControlError) in try await client.timeline() }
        let newest = timelines.values.compactMap { $0 }.max { $0.version < $1.version }
        return (newest, timelines.mapValues { $0?.version })
    }

    /// The host time an edit or a new timeline takes effect at: the master's now, as the fastest
    /// node tells it, plus a lead that covers the control round trips and a node's preparation.
    func effectiveTime(lead: MediaTime) async throws -> MediaTime {
        let (now, slowest) = try await WallStart(wall: wall).masterNow()
        let margin = MediaTime.maximum(MediaTime.maximum(lead, Self.minimumEditLead), slowest * 3 + WallStart.safety)
        return (now + margin).convertScale(MediaTime.nanosecondTimescale)
    }

    /// The master's timeline (epoch) the nodes follow, which a new timeline is anchored on.
    func epoch() async throws -> UInt64 {
        let epochs = try await wall.everyNode { client throws(ControlError) in
            try await client.status().status.clock.epoch
        }
        let known = Set(epochs.values.compactMap { $0 })
        guard known.count <= 1 else {
            throw ControlError.timeline(
                "the nodes follow different master timelines: "
                    + epochs.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.map { String($0, radix: 16) } ?? "none")" }
                    .joined(separator: ", "))
        }
        return known.first ?? 0
    }

    /// Applies the edit `make` chooses (from the timeline and the edit's host time, a lead ahead)
    /// and sends the result.
    private func apply(lead: MediaTime, _ make: (Timeline, MediaTime) throws -> TimelineEdit) async throws -> (
        timeline: Timeline, at: MediaTime
    ) {
        guard let timeline = try await current().timeline else {
            throw ControlError.timeline("no node holds a timeline: start one with wallctl play")
        }
        let at = try await effectiveTime(lead: lead)
        let edited: Timeline
        do {
            edited = try timeline.applying(try make(timeline, at), at: at)
        } catch let error as TimelineError {
            throw ControlError.timeline("\(error)")
        }
        try await send(edited)
        return (edited, at)
    }

    /// Applies the edit `make` chooses, reports it as `what`, and confirms every node follows it.
    func carryOut(
        _ what: String, lead: MediaTime, _ make: (Timeline, MediaTime) throws -> TimelineEdit
    ) async throws {
        let (timeline, at) = try await apply(lead: lead, make)
        Self.describe(timeline, at: at, what: what)
        try await confirm(timeline, at: at)
    }

    /// Whether any selected node holds a timeline: then transport commands edit it.
    func hasTimeline() async throws -> Bool {
        try await current().timeline != nil
    }

    /// Sends `timeline` to every selected node.
    func send(_ timeline: Timeline) async throws {
        _ = try await wall.everyNode { client throws(ControlError) in try await client.follow(timeline) }
    }

    /// Playlist entries for `items`, with each missing out-point resolved to the shortest of the
    /// nodes' files for it, so no screen runs out of picture before the others change entry.
    func entries(_ items: [PlaylistItemConfig]) async throws -> [TimelineEntry] {
        let unresolved = items.filter { $0.outPoint == nil }.map(\.media)
        var lengths: [String: MediaTime] = [:]
        if !unresolved.isEmpty {
            let durations = try await wall.everyNode { client throws(ControlError) in
                try await client.mediaDurations(unresolved)
            }
            for (index, media) in unresolved.enumerated() {
                let each = durations.values.map { $0[index] }
                guard let shortest = each.filter(\.isNumeric).min(), each.allSatisfy(\.isNumeric) else {
                    throw ControlError.timeline("\(media): a node does not know its length; give the entry an out point")
                }
                lengths[media] = shortest
            }
        }
        return try items.map { item in
            guard let outPoint = item.outPoint ?? lengths[item.media], outPoint > item.inPoint else {
                throw ControlError.timeline("\(item.media): it is not longer than its in point \(item.inPoint.seconds) s")
            }
            return TimelineEntry(
                media: item.media, inPoint: item.inPoint, outPoint: outPoint,
                repeats: item.repeats.map { .times($0) } ?? .forever)
        }
    }

    /// Waits until the master passes `at` (and a little), then prints where each node stands on
    /// the timeline; throws when a node does not follow it.
    func confirm(_ timeline: Timeline, at: MediaTime) async throws {
        try await WallStart(wall: wall).waitUntil(hostTime: at, after: MediaTime(value: 700, timescale: 1000))
        let statuses = try await wall.everyNode { client throws(ControlError) in try await client.status().status }
        var problems: [String: String] = [:]
        for (id, status) in statuses.sorted(by: { $0.key < $1.key }) {
            guard let report = status.timeline, report.version == timeline.version else {
                problems[id] = "does not follow version \(timeline.version)"
                continue
            }
            if let problem = report.problem { problems[id] = problem }
            Output.line(
                "  \(id): \(report.state), entry \(report.entry), pass \(report.pass), item time "
                    + String(format: "%.3f s", report.itemTime.seconds)
                    + (report.inStep.map { $0 ? ", in step" : ", not in step yet" } ?? ""))
        }
        guard problems.isEmpty else { throw ControlError.notReady(nodes: problems) }
    }

    /// Prints a timeline and where it takes effect.
    static func describe(_ timeline: Timeline, at: MediaTime, what: String) {
        let segment = timeline.segment(at: at)
        Output.line("\(what): timeline version \(timeline.version) from master time \(at.seconds) s")
        for (index, entry) in segment.playlist.entries.enumerated() {
            let repeats: String
            switch entry.repeats {
            case .forever: repeats = "forever"
            case .times(let count): repeats = count == 1 ? "once" : "\(count) times"
            }
            Output.line(
                "  \(index): \(entry.media)  \(entry.inPoint.seconds)–\(entry.outPoint.seconds) s, \(repeats)")
        }
        let position = timeline.position(at: at)
        Output.line(
            "  then: \(position.state.rawValue), entry \(position.entryIndex), pass \(position.pass), item time "
                + "\(position.itemTime.seconds) s, rate \(position.rate)"
                + (segment.playlist.loops ? ", the playlist loops" : ", the playlist ends on its last frame"))
    }
}
