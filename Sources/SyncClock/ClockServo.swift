import LockstepTime

/// Turns estimates into the published local → master mapping: steps while locking, slews once locked,
/// coasts in holdover, and bounds the published mapping's error.
///
/// Once locked, each new estimate moves the mapping by changing its rate only: the new line starts
/// from the old line's value at the update instant, with the estimated rate plus a correction that
/// removes the phase error over the slew time constant (a proportional servo with the estimated
/// frequency fed forward, bounded by `maximumSlewPPM`). A GStreamer clock following the mapping
/// therefore never jumps and never runs backwards.
struct ClockServo: Sendable {
    struct Configuration: Sendable, Hashable {
        /// Samples in the window before locking.
        var lockSampleCount = 8
        /// The window must span this long before locking, so the rate is known, ns.
        var lockMinimumSpan: Int64 = 200_000_000
        /// The guaranteed error bound must be within this before locking, ns.
        var lockErrorBound: Int64 = 5_000_000
        /// The shortest time over which a phase error is slewed away, ns. The servo uses at least four
        /// poll intervals, so a correction lasts until several newer estimates refine it: short while
        /// polls are frequent (just locked, estimates improving fast), longer once polls slow down.
        var slewTimeConstant: Int64 = 250_000_000
        /// The largest rate correction, ns/s (500 ppm).
        var maximumSlewRate: Double = 500_000
        /// Silence after which a locked clock is in holdover, ns.
        var holdoverTimeout: Int64 = 3_000_000_000
        /// A phase error this large while locked is not slewed (it would take too long): the mapping
        /// starts a new timeline, ns.
        var relockThreshold: Int64 = 50_000_000
    }

    let configuration: Configuration
    private(set) var state: ClockState = .unsynced
    private(set) var mapping: ClockMapping = .identity
    private(set) var timeline = 0
    private(set) var estimate: ClockEstimate?
    /// When the current slew ends and the mapping returns to the estimated rate.
    private(set) var slewEnd: Int64?
    private var lastEstimateTime: Int64?

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The master timeline changed: forget the estimate; the next one starts a new timeline.
    mutating func reset() {
        state = .unsynced
        estimate = nil
        slewEnd = nil
        lastEstimateTime = nil
    }

    /// Follows a new estimate at local time `now`.
    ///
    /// - Parameters:
    ///   - restarted: the estimate starts over on a new master timeline (a confirmed jump).
    ///   - pollInterval: the current poll interval, ns.
    mutating func follow(_ estimate: ClockEstimate, now: Int64, restarted: Bool, pollInterval: Int64) {
        self.estimate = estimate
        lastEstimateTime = now
        if restarted || state == .unsynced {
            timeline += 1
            state = .locking
        }
        switch state {
        case .unsynced, .locking:
            step(to: estimate, at: now)
            if isReadyToLock(estimate, at: now) { state = .locked }
        case .locked, .holdover:
            let phaseError = Double(
                estimate.masterNanoseconds(atLocal: now) - mapping.masterNanoseconds(atLocalNanoseconds: now))
            if abs(phaseError) > Double(configuration.relockThreshold) {
                timeline += 1
                step(to: estimate, at: now)
                state = .locked
                return
            }
            let timeConstant = Double(max(configuration.slewTimeConstant, 4 * pollInterval)) / 1e9
            let wanted = phaseError / timeConstant
            let correction = min(max(wanted, -configuration.maximumSlewRate), configuration.maximumSlewRate)
            let duration = correction == 0 ? 0 : phaseError / correction
            mapping = ClockMapping(
                localTime: MediaTime(nanoseconds: now),
                masterTime: MediaTime(nanoseconds: mapping.masterNanoseconds(atLocalNanoseconds: now)),
                rate: 1 + (estimate.rate + correction) / 1e9)
            slewEnd = duration > 0 ? now + Int64((duration * 1e9).rounded()) : nil
            state = .locked
        }
    }

    /// Advances time without a new estimate: ends a finished slew, enters holdover after silence.
    ///
    /// - Returns: whether the mapping or the state changed.
    mutating func advance(to now: Int64) -> Bool {
        guard let estimate else { return false }
        var changed = false
        if state == .locked, let last = lastEstimateTime, now - last > configuration.holdoverTimeout {
            state = .holdover
            changed = true
        }
        if changed || (slewEnd.map { now >= $0 } ?? false) {
            // Continue from where the mapping is now, at the estimated rate alone.
            mapping = ClockMapping(
                localTime: MediaTime(nanoseconds: now),
                masterTime: MediaTime(nanoseconds: mapping.masterNanoseconds(atLocalNanoseconds: now)),
                rate: 1 + estimate.rate / 1e9)
            slewEnd = nil
            changed = true
        }
        return changed
    }

    /// The next local time `advance` has something to do, if any.
    var nextDeadline: Int64? {
        let holdover = state == .locked ? lastEstimateTime.map { $0 + configuration.holdoverTimeout + 1 } : nil
        switch (slewEnd, holdover) {
        case (let slew?, let holdover?): return min(slew, holdover)
        case (let slew?, nil): return slew
        case (nil, let holdover?): return holdover
        case (nil, nil): return nil
        }
    }

    /// The published mapping's error bound at local time `local`, and how fast it grows after, ns and
    /// ns/s; infinite before any estimate.
    ///
    /// The true offset lies in the range the estimate allows (`ClockEstimate.symmetricRegion`, or
    /// with `guaranteed` the region that holds whatever the path's asymmetry); the bound is the
    /// distance from the mapping's offset to the far end of that range. Between `local` and any later
    /// time the bound grows at most by the largest rate difference between the mapping and an allowed
    /// line, plus the rate wander allowance (the distance to a set of lines is convex in time).
    func errorBound(atLocal local: Int64, guaranteed: Bool = false) -> (bound: Double, growth: Double) {
        guard let estimate else { return (.infinity, 0) }
        let mapped = Double(mapping.masterNanoseconds(atLocalNanoseconds: local) - local - estimate.referenceOffset)
        let allowed = estimate.offsetRange(atLocal: local, guaranteed: guaranteed)
        let bound = max(mapped - allowed.lowerBound, allowed.upperBound - mapped, 0)
        let mappingRate = (mapping.rate - 1) * 1e9
        let region = guaranteed ? estimate.region : estimate.symmetricRegion
        return (bound, region.largestRateDifference(from: mappingRate) + estimate.wander)
    }

    private mutating func step(to estimate: ClockEstimate, at now: Int64) {
        mapping = ClockMapping(
            localTime: MediaTime(nanoseconds: now),
            masterTime: MediaTime(nanoseconds: estimate.masterNanoseconds(atLocal: now)),
            rate: 1 + estimate.rate / 1e9)
        slewEnd = nil
    }

    private func isReadyToLock(_ estimate: ClockEstimate, at now: Int64) -> Bool {
        estimate.sampleCount >= configuration.lockSampleCount
            && estimate.span.upperBound - estimate.span.lowerBound >= configuration.lockMinimumSpan
            && errorBound(atLocal: now, guaranteed: true).bound <= Double(configuration.lockErrorBound)
    }
}
