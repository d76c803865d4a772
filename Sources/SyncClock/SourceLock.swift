import LockstepTime

/// Whether one source's estimate is good enough to follow: the source's own state, which the
/// selector reads to choose whom the clock follows. It moves nothing: slewing and stepping are the
/// one `ClockServo`'s, after the selection (as in chrony, where every source only estimates and
/// `reference.c` alone adjusts the clock).
///
/// Unsynced with no estimate; locking while the estimate settles; locked once it has enough samples
/// over enough time and a guaranteed bound within `lockErrorBound`; holdover after `holdoverTimeout`
/// of silence once locked. A new timeline of the master's (a restart, a jump) starts again at locking.
struct SourceLock: Sendable {
    struct Configuration: Sendable, Hashable {
        /// Samples in the window before locking.
        var lockSampleCount = 8
        /// The window must span this long before locking, so the rate is known, ns.
        var lockMinimumSpan: Int64 = 200_000_000
        /// The estimate's guaranteed error bound must be within this before locking, ns.
        var lockErrorBound: Int64 = 5_000_000
        /// Silence after which a locked source is in holdover, ns.
        var holdoverTimeout: Int64 = 3_000_000_000
    }

    let configuration: Configuration
    private(set) var state: ClockState = .unsynced
    /// The newest estimate.
    private(set) var estimate: ClockEstimate?
    /// Counts the source's timelines: a new value means its estimate started over (a new epoch, or
    /// the master's time jumped).
    private(set) var generation = 0
    private var lastEstimateTime: Int64?

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The master's timeline changed: forget the estimate; the next one starts a new generation.
    mutating func reset() {
        state = .unsynced
        estimate = nil
        lastEstimateTime = nil
    }

    /// Takes a new estimate at local time `now`; `restarted` when it starts over on a new timeline
    /// of the master's (a confirmed jump).
    mutating func take(_ estimate: ClockEstimate, now: Int64, restarted: Bool) {
        self.estimate = estimate
        lastEstimateTime = now
        if restarted || state == .unsynced {
            generation += 1
            state = .locking
        }
        if state == .holdover { state = .locked }
        if state == .locking, isReadyToLock(estimate, at: now) { state = .locked }
    }

    /// Lets time pass: a locked source that fell silent goes to holdover.
    ///
    /// - Returns: whether the state changed.
    mutating func advance(to now: Int64) -> Bool {
        guard state == .locked, let last = lastEstimateTime, now - last > configuration.holdoverTimeout else {
            return false
        }
        state = .holdover
        return true
    }

    /// The next local time `advance` has something to do, if any.
    var nextDeadline: Int64? {
        state == .locked ? lastEstimateTime.map { $0 + configuration.holdoverTimeout + 1 } : nil
    }

    private func isReadyToLock(_ estimate: ClockEstimate, at now: Int64) -> Bool {
        estimate.sampleCount >= configuration.lockSampleCount
            && estimate.span.upperBound - estimate.span.lowerBound >= configuration.lockMinimumSpan
            && estimate.errorBound(of: estimate.line, atLocal: now, guaranteed: true).bound
                <= Double(configuration.lockErrorBound)
    }
}

extension ClockEstimate {
    /// The estimated line as a mapping: where the samples put the master, sample by sample, before
    /// any servo smooths it.
    var line: ClockMapping {
        ClockMapping(
            localTime: MediaTime(nanoseconds: referenceLocal),
            masterTime: MediaTime(nanoseconds: masterNanoseconds(atLocal: referenceLocal)), rate: 1 + rate / 1e9)
    }

    /// The error bound of `mapping` at local time `local`, and how fast it grows after, ns and ns/s.
    ///
    /// The true offset lies in the range the estimate allows (`symmetricRegion`, or with
    /// `guaranteed` the region that holds whatever the path's asymmetry); the bound is the distance
    /// from the mapping's offset to the far end of that range. Between `local` and any later time the
    /// bound grows at most by the largest rate difference between the mapping and an allowed line,
    /// plus the rate wander allowance (the distance to a set of lines is convex in time).
    func errorBound(of mapping: ClockMapping, atLocal local: Int64, guaranteed: Bool = false)
        -> (bound: Double, growth: Double)
    {
        // In floating point: local times and offsets each within ±2^62 can sum past Int64.
        let mapped = Double(mapping.masterNanoseconds(atLocalNanoseconds: local)) - Double(local) - Double(referenceOffset)
        let allowed = offsetRange(atLocal: local, guaranteed: guaranteed)
        let bound = max(mapped - allowed.lowerBound, allowed.upperBound - mapped, 0)
        let mappingRate = (mapping.rate - 1) * 1e9
        let region = guaranteed ? self.region : symmetricRegion
        return (bound, region.largestRateDifference(from: mappingRate) + wander)
    }
}
