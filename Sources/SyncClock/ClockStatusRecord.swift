import LockstepTime

/// A clock status as one JSON object: a line of `wallctl clock probe --json`, which benches and
/// scripts read (times in integer nanoseconds, the state by name, identities in hex).
public struct ClockStatusRecord: Codable, Sendable, Equatable {
    /// "estimate" for a new estimate, "sample" for a periodic reading of the current mapping.
    public var kind: String
    public var localNs: Int64
    public var masterNs: Int64
    public var errorBoundNs: Int64?
    /// The bound that holds whatever the path's asymmetry (`ClockStatus.guaranteedErrorBound`).
    public var guaranteedErrorBoundNs: Int64?
    public var errorBoundGrowthPPM: Double
    public var roundTripNs: Int64?
    public var ratePPM: Double
    public var state: ClockState
    public var offsetNs: Int64
    public var elapsedNs: Int64
    /// Counts the mapping's steps (`ClockStatus.generation`).
    public var generation: Int
    public var pollIntervalNs: Int64?
    public var samplesUsed: Int
    public var samplesRejected: Int
    public var serverIdentity: String?
    public var epoch: String?

    /// - Parameters:
    ///   - start: the local time the run began at (`elapsedNs` counts from it).
    ///   - kind: "estimate" for a new estimate, "sample" for a periodic reading of the mapping.
    public init(status: ClockStatus, start: Int64, kind: String) {
        self.kind = kind
        localNs = status.localTime.nanoseconds ?? 0
        masterNs = status.masterTime.nanoseconds ?? 0
        errorBoundNs = status.errorBound.nanoseconds
        guaranteedErrorBoundNs = status.guaranteedErrorBound.nanoseconds
        errorBoundGrowthPPM = status.errorBoundGrowthPPM
        roundTripNs = status.roundTrip.last.nanoseconds
        ratePPM = status.ratePPM
        state = status.state
        offsetNs = status.offset.nanoseconds ?? 0
        elapsedNs = localNs - start
        generation = status.generation
        pollIntervalNs = status.pollInterval.nanoseconds
        samplesUsed = status.counters.samplesUsed
        samplesRejected = status.counters.samplesRejected
        serverIdentity = status.master.map { String($0.identity, radix: 16) }
        epoch = status.master.map { String($0.epoch, radix: 16) }
    }
}

extension ClockStatus {
    /// This status read at a later local time: the same mapping and estimate, the bound grown.
    public func extrapolated(to local: Int64) -> ClockStatus {
        var later = self
        let time = MediaTime(nanoseconds: local)
        later.errorBound = errorBound(atLocal: time)
        later.offset = mapping.masterTime(atLocal: time) - time
        later.localTime = time
        return later
    }
}
