import Foundation
import LockstepNet
import LockstepTime
import XCTest

@testable import NetImpair
@testable import SyncClock

/// The client on the paths issue 9 names, through `wallctl impair`'s own model in simulated time:
/// a 1 ms base delay with ±0.5 ms uniform jitter, a congested path (pareto tail, correlation,
/// stalls), and bursty loss. The error is sampled every 20 ms against the true master time, as
/// bench/clock samples it. `LOCKSTEP_TRACE=1` prints the error and bound once a second.
final class RealisticPathTests: XCTestCase {
    private static let second: Int64 = 1_000_000_000
    private static func milliseconds(_ value: Double) -> MediaTime {
        MediaTime(seconds: value / 1e3, preferredTimescale: 1_000_000_000)
    }

    struct Outcome: CustomStringConvertible {
        /// Seconds from the start until |error| stayed under 100 µs to the end; nil if it never did.
        var lock: Double?
        var p99AfterTwenty: Int64
        var maximumAfterTwenty: Int64
        var boundViolations: Int

        var description: String {
            "lock \(lock.map { String(format: "%.2f s", $0) } ?? "never"), after 20 s p99 \(p99AfterTwenty / 1000) µs, "
                + "max \(maximumAfterTwenty / 1000) µs, bound exceeded \(boundViolations)"
        }
    }

    static let uniform = Impairment(delay: milliseconds(1), jitter: milliseconds(0.5))
    static let congested = Impairment(
        delay: milliseconds(1), jitter: milliseconds(1), distribution: .pareto, correlationPercent: 50,
        stallPercent: 0.1, stall: milliseconds(20))
    static let burstyLoss = Impairment(
        delay: milliseconds(1), jitter: milliseconds(0.5), lossPercent: 5, lossBurst: 5)
    static let heavyLoss = Impairment(delay: milliseconds(1), jitter: milliseconds(0.5), lossPercent: 20)

    func measure(_ impairment: Impairment, seconds: Int64 = 60, seed: UInt64) -> Outcome {
        var simulation = ClockSimulation(
            client: SimulatedClock(offset: -1_800 * Self.second, driftPPM: -150),
            master: SimulatedClock(offset: 3_600 * Self.second, driftPPM: 100), seed: seed)
        simulation.impairment = ImpairmentModel(impairment: impairment, seed: seed)
        let start = simulation.now
        var samples: [(time: Int64, error: Int64, locked: Bool, bound: Int64?)] = []
        for _ in 0..<(seconds * 50) {
            simulation.run(for: 20_000_000)
            let local = simulation.client.reading(at: simulation.now)
            let status = simulation.engine.status(at: local)
            samples.append(
                (simulation.now - start, simulation.error(atTrueTime: simulation.now), status.state == .locked,
                 status.errorBound.nanoseconds))
        }
        if ProcessInfo.processInfo.environment["LOCKSTEP_TRACE"] != nil {
            for sample in samples where sample.time % Self.second < 20_000_000 {
                print("t \(sample.time / Self.second) error \(sample.error / 1000) µs bound \((sample.bound ?? 0) / 1000) µs")
            }
        }
        let lastBad = samples.lastIndex { !$0.locked || abs($0.error) >= 100_000 }
        let lock: Double? =
            lastBad.map { $0 + 1 < samples.count ? Double(samples[$0 + 1].time) / 1e9 : nil } ?? 0
        let late = samples.filter { $0.time >= 20 * Self.second }.map { abs($0.error) }.sorted()
        return Outcome(
            lock: lock, p99AfterTwenty: late[Int(Double(late.count - 1) * 0.99)], maximumAfterTwenty: late.last ?? 0,
            boundViolations: samples.filter { sample in sample.bound.map { abs(sample.error) > $0 } ?? false }.count)
    }

    /// The error bound is honest on every path: the true error never exceeds it (issue 9 asks for
    /// 99.9 % of samples; a simulation of two seeds per path allows no exception). The outcomes are
    /// printed: on the congested path the clock does not yet meet issue 9's targets (docs/BENCHMARKS.md).
    func testErrorBound_containsTheTrueError_onRealisticPaths() {
        let paths = [("1 ms ± 0.5 ms", Self.uniform), ("congested", Self.congested), ("bursty loss", Self.burstyLoss),
                     ("20 % loss", Self.heavyLoss)]
        for (name, impairment) in paths {
            for seed: UInt64 in 1...2 {
                let outcome = measure(impairment, seconds: 40, seed: seed)
                print("realistic path \(name), seed \(seed): \(outcome)")
                XCTAssertEqual(outcome.boundViolations, 0, "\(name), seed \(seed): true error beyond the bound")
            }
        }
    }
}
