/// A linear map from a local clock to a master clock: at local time `localTime` the master reads
/// `masterTime`, and the master advances `rate` seconds for every local second.
///
/// This is what a clock servo produces and what the player's GStreamer clock follows.
public struct ClockMapping: Sendable, Hashable, Codable, CustomStringConvertible {
    public let localTime: MediaTime
    public let masterTime: MediaTime
    /// Master seconds per local second.
    public let rate: Double

    public init(localTime: MediaTime, masterTime: MediaTime, rate: Double) {
        self.localTime = localTime
        self.masterTime = masterTime
        self.rate = rate
    }

    /// The mapping of a clock to itself.
    public static let identity = ClockMapping(localTime: .zero, masterTime: .zero, rate: 1)

    /// The rate's deviation from 1 in parts per million.
    public var ratePPM: Double { (rate - 1) * 1e6 }

    /// The master time at local time `local`.
    public func masterTime(atLocal local: MediaTime) -> MediaTime {
        guard let ns = local.nanoseconds else { return local }
        return MediaTime(nanoseconds: masterNanoseconds(atLocalNanoseconds: ns))
    }

    /// The local time at which the master reads `master`.
    public func localTime(atMaster master: MediaTime) -> MediaTime {
        guard let ns = master.nanoseconds else { return master }
        return MediaTime(nanoseconds: localNanoseconds(atMasterNanoseconds: ns))
    }

    /// `masterTime(atLocal:)` in nanoseconds, for hot paths.
    public func masterNanoseconds(atLocalNanoseconds local: Int64) -> Int64 {
        let elapsed = local &- (localTime.nanoseconds ?? 0)
        let correction = (Double(elapsed) * (rate - 1)).rounded(.toNearestOrAwayFromZero)
        return (masterTime.nanoseconds ?? 0) &+ elapsed &+ Int64(correction)
    }

    /// `localTime(atMaster:)` in nanoseconds, for hot paths.
    public func localNanoseconds(atMasterNanoseconds master: Int64) -> Int64 {
        let elapsed = master &- (masterTime.nanoseconds ?? 0)
        let local = (Double(elapsed) / rate).rounded(.toNearestOrAwayFromZero)
        return (localTime.nanoseconds ?? 0) &+ Int64(local)
    }

    /// This mapping re-anchored at local time `local`: the same line, another reference point.
    public func anchored(atLocal local: MediaTime) -> ClockMapping {
        ClockMapping(localTime: local, masterTime: masterTime(atLocal: local), rate: rate)
    }

    public var description: String {
        "master(\(localTime)) = \(masterTime), rate \(ratePPM >= 0 ? "+" : "")\(ratePPM) ppm"
    }
}
