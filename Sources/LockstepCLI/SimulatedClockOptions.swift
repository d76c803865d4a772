public import ArgumentParser
public import LockstepTime

/// The test options that put a process on a simulated clock: `--simulate-clock-offset SECONDS` and
/// `--simulate-clock-drift-ppm PPM`.
///
/// One machine can then stand for a wall of machines whose clocks disagree: every timestamp the
/// process takes (clock samples, the master clock it serves, its GStreamer clock) reads
/// `offset + t_mono * (1 + drift / 1e6)`. Every executable that runs a clock server or client pulls
/// these in with `@OptionGroup` and calls `apply()` first thing in `run()`, before any timestamp is
/// taken.
public struct SimulatedClockOptions: ParsableArguments, Sendable {
    @Option(
        name: .customLong("simulate-clock-offset"), parsing: .unconditional,
        help: ArgumentHelp(
            "Test option: run on a simulated clock this many seconds ahead of CLOCK_MONOTONIC (negative: behind).",
            valueName: "seconds"))
    public var offsetSeconds: Double = 0

    @Option(
        name: .customLong("simulate-clock-drift-ppm"), parsing: .unconditional,
        help: ArgumentHelp(
            "Test option: make the simulated clock run this many parts per million fast (negative: slow).",
            valueName: "ppm"))
    public var driftPPM: Double = 0

    public init() {}

    /// Whether either option was given a non-zero value.
    public var isSimulated: Bool { offsetSeconds != 0 || driftPPM != 0 }

    /// The clock these options describe.
    public func makeClock() throws(LocalClock.ConfigurationError) -> LocalClock {
        guard isSimulated else { return .monotonic }
        return try LocalClock(
            simulatedOffset: MediaTime(seconds: offsetSeconds, preferredTimescale: MediaTime.nanosecondTimescale),
            driftPPM: driftPPM)
    }

    public func validate() throws {
        guard offsetSeconds.isFinite else {
            throw ValidationError("--simulate-clock-offset must be a finite number of seconds, got \(offsetSeconds)")
        }
        do {
            _ = try makeClock()
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Sets the process clock (`LocalClock.setProcessClock`) and returns it.
    @discardableResult
    public func apply() throws -> LocalClock {
        let clock = try makeClock()
        LocalClock.setProcessClock(clock)
        return clock
    }
}
