import Foundation
import LockstepTime
import SyncClock
import WallControl
import WallProtocol

/// One screen as the console shows it: what its last `/status` (and `/content`) said, or that it
/// does not answer, with the times its state last changed. Sent to the page as JSON; times are
/// milliseconds since 1970 on the controller's clock (`...UnixMs`), durations with their unit.
public struct NodeView: Sendable, Hashable, Codable {
    public var id: String
    public var reachable: Bool
    /// Why the node is not answering, or what keeps it off its timeline.
    public var problem: String?
    /// Since when it has been unreachable, or in step, or out of step.
    public var unreachableSinceUnixMs: Int64?
    public var inStepSinceUnixMs: Int64?
    public var outOfStepSinceUnixMs: Int64?

    public var clockState: ClockState?
    public var clockSource: String?
    public var clockUsable: Bool?
    public var errorBoundUs: Double?

    public var version: UInt64?
    public var state: String?
    public var show: String?
    public var entry: Int?
    public var pass: Int?
    public var itemTimeS: Double?
    public var inStep: Bool?
    public var settled: Bool?
    /// The node's rejoins, its restarts counted in: a restarted node counts its own from 0 again.
    public var rejoins: Int?
    /// Restarts seen (its frame count went back), and the rejoins counted before the last one.
    public var restarts = 0
    public var rejoinsBefore = 0
    public var missingMedia: [String]?

    public var framesPresented: UInt64?
    /// The node's machine (`MachineHealth`).
    public var health: MachineHealth?
    public var framesLate: UInt64?
    public var framesDropped: UInt64?
    public var media: String?

    /// Files held in the node's content store, and transfers under way.
    public var contentHeld: Int?
    public var transfers: [Transfer]?

    /// Counts the node's thumbnails: a new one is fetched when it grows (0: none yet).
    public var thumbnail: Int = 0

    /// The node's master-clock time when it answered (nanoseconds).
    public var masterTimeNs: Int64?

    /// When the daemon sent the status request this view is from, and when the answer came.
    public var polledAtUnixMs: Int64?
    public var answeredAtUnixMs: Int64?

    public struct Transfer: Sendable, Hashable, Codable {
        public var name: String
        public var have: UInt64
        public var size: UInt64
        public var bytesPerSecond: Double?
        public var source: String?
        public var problem: String?
    }

    public init(id: String) {
        self.id = id
        reachable = false
    }

    /// The view after a status answer, keeping what the status does not say (content, thumbnail)
    /// and the times of the last changes.
    public func updated(with status: NodeStatus, at now: Int64) -> NodeView {
        var next = self
        // A node that restarted counts its frames from 0 again: the restart is counted, and is a
        // rejoin of the wall (the node's own count starts over).
        if let previous = framesPresented, status.player.framesPresented < previous {
            next.restarts += 1
            next.rejoinsBefore = (rejoins ?? rejoinsBefore) + 1
        }
        next.reachable = true
        next.unreachableSinceUnixMs = nil
        next.masterTimeNs = status.masterTime?.nanoseconds
        next.clockState = status.clock.state
        next.clockSource = status.clock.server
        next.clockUsable = status.clock.usable
        next.errorBoundUs = status.clock.errorBound.map { ($0.seconds * 1e6).rounded() }
        let timeline = status.timeline
        next.version = timeline?.version
        next.state = timeline?.state ?? status.player.timeControlStatus
        next.show = timeline?.show
        next.entry = timeline?.entry
        next.pass = timeline?.pass
        next.itemTimeS = timeline.map { $0.itemTime.seconds } ?? status.player.position.seconds
        next.inStep = timeline?.inStep
        next.settled = timeline?.settled
        next.rejoins = (timeline?.rejoins).map { $0 + next.rejoinsBefore }
        next.missingMedia = timeline?.missingMedia
        // Every problem the node reports, its timeline's and player's first: a service's (a
        // content store unusable, an input that cannot listen) is shown beside them, not hidden.
        let problems =
            [timeline?.problem, status.player.error].compactMap { $0 }
            + (status.problems ?? []).map { "\($0.service): \($0.problem)" }
        next.problem = problems.isEmpty ? nil : problems.joined(separator: "; ")
        next.framesPresented = status.player.framesPresented
        next.framesLate = status.player.framesLate
        next.framesDropped = status.player.framesDropped
        next.media = status.player.media
        next.health = status.health
        if next.inStep == true, self.inStep != true || !self.reachable {
            next.inStepSinceUnixMs = now
            next.outOfStepSinceUnixMs = nil
        } else if next.inStep != true, self.inStep == true || self.outOfStepSinceUnixMs == nil {
            next.outOfStepSinceUnixMs = now
            next.inStepSinceUnixMs = nil
        }
        return next
    }

    /// The view once a status request failed with `reason`.
    public func unreachable(_ reason: String, at now: Int64) -> NodeView {
        var next = self
        if reachable || unreachableSinceUnixMs == nil { next.unreachableSinceUnixMs = now }
        next.reachable = false
        next.problem = reason
        next.inStep = nil
        next.inStepSinceUnixMs = nil
        next.outOfStepSinceUnixMs = nil
        return next
    }

    /// The view with the node's content report.
    public func updated(with content: ContentReport) -> NodeView {
        var next = self
        next.contentHeld = content.held.count
        next.transfers = content.transfers.map {
            Transfer(
                name: $0.name, have: $0.have, size: $0.id.size, bytesPerSecond: $0.bytesPerSecond, source: $0.source,
                problem: $0.problem)
        }
        return next
    }

    /// Whether `other` differs in anything but the poll's own times (and the master's time, which
    /// moves on every poll): what makes an update worth
    /// sending. Position moves on every poll while the wall plays, so a playing wall is sent each
    /// poll; a paused one is not.
    public func differs(from other: NodeView) -> Bool {
        var a = self
        var b = other
        for view in [\NodeView.polledAtUnixMs, \.answeredAtUnixMs, \.masterTimeNs] {
            a[keyPath: view] = nil
            b[keyPath: view] = nil
        }
        return a != b
    }
}
