import LockstepTime

/// The one servo: it turns the line a clock follows (the selected source's estimate) into the
/// published local → master mapping, and alone decides when that mapping slews and when it steps.
///
/// Each new target moves the mapping by changing its rate only: the new line starts from the old
/// line's value at that instant, with the target's rate plus a correction that removes the phase
/// error over the slew time constant (a proportional servo with the frequency fed forward, bounded
/// by `maximumSlewRate`). A GStreamer clock following the mapping therefore never jumps and never
/// runs backwards. A phase error beyond `stepThreshold` (a master whose time jumped, or a new
/// epoch) is not slewed, which would take too long: the mapping steps, and `generation` counts it,
/// so a consumer that must never step re-bases.
struct ClockServo: Sendable {
    struct Configuration: Sendable, Hashable {
        /// The shortest time over which a phase error is slewed away, ns. The servo uses at least four
        /// poll intervals, so a correction lasts until several newer estimates refine it: short while
        /// polls are frequent (just locked, estimates improving fast), longer once polls slow down.
        var slewTimeConstant: Int64 = 250_000_000
        /// The largest rate correction, ns/s (500 ppm).
        var maximumSlewRate: Double = 500_000
        /// A phase error this large is not slewed (it would take too long): the mapping steps, ns.
        var stepThreshold: Int64 = 50_000_000
    }

    let configuration: Configuration
    private(set) var mapping: ClockMapping = .identity
    /// Counts the mapping's steps: 0 before the first target, then 1, and one more at each step.
    private(set) var generation = 0
    /// The line followed, and the end of the slew toward it under way, if any.
    private(set) var target: ClockMapping?
    private(set) var slewEnd: Int64?

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Steps onto `target` at local time `now`: the first target, a new timeline, or a source whose
    /// estimate may still move a lot (locking).
    mutating func step(to target: ClockMapping, at now: Int64) {
        mapping = target.anchored(atLocal: MediaTime(nanoseconds: now))
        self.target = target
        generation += 1
        slewEnd = nil
    }

    /// Follows `target` from the published mapping at local time `now`: slews onto it, or steps
    /// beyond `stepThreshold`. `pollInterval` (ns) sets the time constant (at least four of them).
    mutating func follow(_ target: ClockMapping, at now: Int64, pollInterval: Int64) {
        guard generation > 0 else { return step(to: target, at: now) }
        let current = mapping.masterNanoseconds(atLocalNanoseconds: now)
        let phaseError = Double(target.masterNanoseconds(atLocalNanoseconds: now) - current)
        guard abs(phaseError) <= Double(configuration.stepThreshold) else { return step(to: target, at: now) }
        self.target = target
        let timeConstant = Double(max(configuration.slewTimeConstant, 4 * pollInterval)) / 1e9
        let wanted = phaseError / timeConstant
        let correction = min(max(wanted, -configuration.maximumSlewRate), configuration.maximumSlewRate)
        let duration = correction == 0 ? 0 : phaseError / correction
        mapping = ClockMapping(
            localTime: MediaTime(nanoseconds: now), masterTime: MediaTime(nanoseconds: current),
            rate: target.rate + correction / 1e9)
        slewEnd = duration > 0 ? now + Int64((duration * 1e9).rounded()) : nil
    }

    /// Lets time pass: a finished slew returns the mapping to the target's rate.
    ///
    /// - Returns: whether the mapping changed.
    mutating func advance(to now: Int64) -> Bool {
        guard let end = slewEnd, now >= end, let target else { return false }
        mapping = ClockMapping(
            localTime: MediaTime(nanoseconds: now),
            masterTime: MediaTime(nanoseconds: mapping.masterNanoseconds(atLocalNanoseconds: now)), rate: target.rate)
        slewEnd = nil
        return true
    }

    /// The next local time at which `advance` has work.
    func nextDeadline(after now: Int64) -> Int64? { slewEnd.map { max($0, now) } }
}
