import Foundation
import LockstepTime

extension Timeline {
    /// Whether this timeline takes the place of `other` on a node: a newer version, or the same
    /// version with the greater canonical encoding. Every node orders timelines alike, so two
    /// timelines given one version (two controllers at once, a replayed request) cannot split a
    /// wall: its nodes all end on the greater.
    public func supersedes(_ other: Timeline) -> Bool {
        guard version == other.version else { return version > other.version }
        return other.canonicalEncoding.lexicographicallyPrecedes(canonicalEncoding)
    }

    /// The JSON every node encodes this timeline to, keys sorted.
    var canonicalEncoding: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { Array($0) } ?? []
    }
}

/// Which timelines a node takes, from a controller or from a peer: the one rule that keeps a
/// wall's nodes converging on one timeline whatever sequence of requests they accept.
///
/// - A timeline must be valid, the wall's, and anchored on the epoch of the master the node
///   follows: an epoch from elsewhere would move the wall to master time zero. A node with no
///   master clock yet takes only a timeline on the epoch of the one it holds (a node restarted
///   catches up with its peers before its clock locks); with none held, it takes none.
/// - From a controller, a version newer than the one held, by a step within an allowance that
///   refills at `versionsPerSecond` up to `burst`: the bound on a step is also a bound on the sum,
///   so no sequence of accepted requests walks a wall's versions to their end (at the refill
///   rate, 2^53 versions last 285,000 years).
/// - From a peer, any timeline that supersedes the one held (`Timeline.supersedes`), however far
///   ahead: it entered the wall through some node's allowance already, and a node that refused it
///   would split the wall for good.
public struct TimelineAdmission: Sendable {
    /// Where an offered timeline comes from.
    public enum Source: Sendable, Hashable {
        case controller
        case peer
    }

    /// The master epoch the node follows, as its clock reads it.
    public enum Epoch: Sendable, Hashable {
        case known(UInt64)
        /// The master names none (GStreamer's format): there is nothing to check.
        case unnamed
        /// The node has no usable master clock yet.
        case noClock
    }

    /// Versions a controller may move a node's version by at once.
    public static let burst: UInt64 = 1 << 20
    /// Versions the allowance regains a second.
    public static let versionsPerSecond = 1_000.0

    private var allowance = Double(Self.burst)
    private var updated: MediaTime?

    public init() {}

    /// Checks `offered` in place of `current`; a controller's step is taken from the allowance.
    /// Returns false when `offered` is the timeline held (a resend), true when it is taken.
    ///
    /// - Parameter now: the node's monotonic time, which refills the allowance.
    public mutating func admit(
        _ offered: Timeline, current: Timeline?, wall: String, epoch: Epoch, from source: Source, now: MediaTime
    ) throws(TimelineError) -> Bool {
        try offered.validate()
        guard offered.wall == wall else { throw .otherWall(expected: wall, got: offered.wall) }
        switch epoch {
        case .noClock where current?.epoch != offered.epoch: throw .noMasterClock
        case .known(let master) where offered.epoch != master: throw .otherEpoch(offered.epoch, master: master)
        case .known, .unnamed, .noClock: break
        }
        if offered == current { return false }
        switch source {
        case .peer:
            if let current, !offered.supersedes(current) {
                throw .notNewer(version: offered.version, current: current.version)
            }
        case .controller:
            let held = current?.version ?? 0
            guard offered.version > held else { throw .notNewer(version: offered.version, current: held) }
            refill(now)
            let step = offered.version - held
            guard Double(step) <= allowance else {
                throw .versionJump(version: offered.version, current: held, allowed: UInt64(allowance))
            }
            allowance -= Double(step)
        }
        return true
    }

    private mutating func refill(_ now: MediaTime) {
        if let updated, now > updated {
            allowance = min(Double(Self.burst), allowance + (now - updated).seconds * Self.versionsPerSecond)
        }
        updated = max(updated ?? now, now)
    }
}
