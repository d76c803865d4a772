import Foundation
import LockstepTime
import XCTest

@testable import NetImpair

final class ImpairmentModelTests: XCTestCase {
    private func milliseconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func testDecisions_repeatForTheSameSeed() {
        let impairment = Impairment(
            delay: milliseconds(2), jitter: milliseconds(1), lossPercent: 10, reorderPercent: 5, duplicatePercent: 5)
        var first = ImpairmentModel(impairment: impairment, seed: 42)
        var second = ImpairmentModel(impairment: impairment, seed: 42)
        var other = ImpairmentModel(impairment: impairment, seed: 43)
        let a = (0..<1_000).map { _ in first.decide() }
        XCTAssertEqual(a, (0..<1_000).map { _ in second.decide() })
        XCTAssertNotEqual(a, (0..<1_000).map { _ in other.decide() })
    }

    func testDecisions_followTheConfiguredRates() {
        let impairment = Impairment(
            delay: milliseconds(2), jitter: milliseconds(2), lossPercent: 20, reorderPercent: 10, duplicatePercent: 5)
        var model = ImpairmentModel(impairment: impairment, seed: 7)
        let decisions = (0..<100_000).map { _ in model.decide() }
        let lost = decisions.filter { $0.departures.isEmpty }.count
        let reordered = decisions.filter(\.reordered).count
        let duplicated = decisions.filter { $0.departures.count == 2 }.count
        XCTAssertEqual(Double(lost) / 1e5, 0.20, accuracy: 0.01)
        XCTAssertEqual(Double(reordered) / 1e5, 0.80 * 0.10, accuracy: 0.01)
        XCTAssertEqual(Double(duplicated) / 1e5, 0.80 * 0.90 * 0.05, accuracy: 0.01)
        let held = decisions.filter { !$0.reordered }.flatMap(\.departures)
        XCTAssertGreaterThanOrEqual(held.min()!, 0)
        XCTAssertLessThanOrEqual(held.max()!, 4_000_000)
        XCTAssertEqual(Double(held.reduce(0, +)) / Double(held.count), 2_000_000, accuracy: 30_000)
        XCTAssertTrue(
            decisions.filter(\.reordered).allSatisfy { $0.departures == [0] }, "reordered datagrams leave at once")
    }

    func testHold_whenJitterExceedsDelay_isClampedAtZero() {
        var model = ImpairmentModel(impairment: Impairment(delay: milliseconds(1), jitter: milliseconds(2)), seed: 5)
        let held = (0..<10_000).flatMap { _ in model.decide().departures }
        XCTAssertEqual(held.min(), 0)
        XCTAssertEqual(Double(held.filter { $0 == 0 }.count) / 1e4, 0.25, accuracy: 0.02, "the quarter below zero")
    }

    /// Holds of `count` datagrams toward the server, one arriving every `spacing` ns.
    private func holds(_ impairment: Impairment, count: Int = 200_000, spacing: Int64 = 1_000_000, seed: UInt64 = 3)
        -> [Int64]
    {
        var model = ImpairmentModel(impairment: impairment, seed: seed)
        return (0..<count).compactMap { model.decide(toServer: true, at: Int64($0) * spacing).departures.first }
    }

    private func quantile(_ values: [Int64], _ fraction: Double) -> Int64 {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))]
    }

    func testPareto_holdsNeverBelowTheBaseDelay_withAHeavyTailOfMeanJitter() {
        let held = holds(Impairment(delay: milliseconds(1), jitter: milliseconds(1), distribution: .pareto))
        XCTAssertEqual(held.min()!, 1_000_000, accuracy: 1_000, "the base delay is the floor")
        let mean = Double(held.reduce(0, +)) / Double(held.count)
        XCTAssertEqual(mean, 2_000_000, accuracy: 60_000, "mean excess = jitter")
        XCTAssertLessThan(quantile(held, 0.5), 1_600_000, "most datagrams close to the floor")
        XCTAssertGreaterThan(quantile(held, 0.99), 6_000_000, "a few many times the jitter past it")
    }

    func testNormal_hasTheJitterAsStandardDeviation() {
        let held = holds(Impairment(delay: milliseconds(10), jitter: milliseconds(1), distribution: .normal))
        let mean = Double(held.reduce(0, +)) / Double(held.count)
        let deviation = (held.map { pow(Double($0) - mean, 2) }.reduce(0, +) / Double(held.count)).squareRoot()
        XCTAssertEqual(mean, 10_000_000, accuracy: 20_000)
        XCTAssertEqual(deviation, 1_000_000, accuracy: 20_000)
    }

    func testCorrelation_carriesIntoTheNextHold() {
        let correlated = holds(Impairment(delay: milliseconds(10), jitter: milliseconds(2), correlationPercent: 60))
        XCTAssertEqual(lagOneAutocorrelation(correlated), 0.6, accuracy: 0.02)
        let independent = holds(Impairment(delay: milliseconds(10), jitter: milliseconds(2)))
        XCTAssertEqual(lagOneAutocorrelation(independent), 0, accuracy: 0.02)
    }

    private func lagOneAutocorrelation(_ values: [Int64]) -> Double {
        let doubles = values.map(Double.init)
        let mean: Double = doubles.reduce(0, +) / Double(doubles.count)
        let centred: [Double] = doubles.map { $0 - mean }
        let lagged: Double = zip(centred, centred.dropFirst()).map { $0 * $1 }.reduce(0, +)
        let variance: Double = centred.map { $0 * $0 }.reduce(0, +)
        return lagged / variance
    }

    func testStall_holdsEverythingArrivingUntilItClears() {
        // A datagram every millisecond; about one in a hundred starts a 20 ms stall.
        let held = holds(
            Impairment(delay: milliseconds(1), stallPercent: 1, stall: milliseconds(20)), count: 100_000)
        let departures = held.enumerated().map { Int64($0.offset) * 1_000_000 + $0.element }
        XCTAssertEqual(held.max(), 20_000_000, "the datagram that meets the stall waits it out")
        XCTAssertGreaterThan(Double(held.filter { $0 > 1_000_000 }.count) / 1e5, 0.05, "stalls hold runs of datagrams")
        XCTAssertTrue(zip(departures, departures.dropFirst()).allSatisfy { $0 <= $1 }, "a stalled path keeps order")
        // Within a stall, each datagram waits a millisecond less than the one before.
        let start = held.firstIndex(of: 20_000_000)!
        XCTAssertEqual(Array(held[start..<(start + 5)]), [20, 19, 18, 17, 16].map { Int64($0) * 1_000_000 })
    }

    func testBurstyLoss_losesTheRateInRunsOfTheMeanLength() {
        var model = ImpairmentModel(impairment: Impairment(lossPercent: 10, lossBurst: 5), seed: 11)
        let lost = (0..<200_000).map { _ in model.decide().departures.isEmpty }
        XCTAssertEqual(Double(lost.filter { $0 }.count) / 2e5, 0.10, accuracy: 0.01)
        var runs: [Int] = []
        var run = 0
        for isLost in lost {
            if isLost {
                run += 1
            } else if run > 0 {
                runs.append(run)
                run = 0
            }
        }
        XCTAssertEqual(Double(runs.reduce(0, +)) / Double(runs.count), 5, accuracy: 0.3, "mean run of losses")
    }

    func testReplies_haveTheirOwnBaseDelay() {
        var model = ImpairmentModel(
            impairment: Impairment(delay: milliseconds(1), replyDelay: milliseconds(3)), seed: 1)
        XCTAssertEqual(model.decide(toServer: true, at: 0).departures, [1_000_000])
        XCTAssertEqual(model.decide(toServer: false, at: 0).departures, [3_000_000])
    }

    /// A path that queues one way: requests pass clean, replies wait behind a pareto tail.
    func testReplies_haveTheirOwnJitter() {
        var model = ImpairmentModel(
            impairment: Impairment(
                delay: milliseconds(1), jitter: .zero, replyJitter: milliseconds(2), distribution: .pareto),
            seed: 7)
        let requests = (0..<2_000).map { model.decide(toServer: true, at: Int64($0) * 1_000_000).departures[0] }
        let replies = (0..<2_000).map { model.decide(toServer: false, at: Int64($0) * 1_000_000).departures[0] }
        XCTAssertEqual(Set(requests), [1_000_000], "no jitter toward the server")
        let mean = Double(replies.reduce(0, +)) / Double(replies.count)
        XCTAssertEqual(mean, 3_000_000, accuracy: 250_000, "the base delay plus a 2 ms mean excess")
        XCTAssertGreaterThanOrEqual(replies.min() ?? 0, 1_000_000, "a pareto tail is above the base delay")
        XCTAssertTrue(
            "\(Impairment(delay: milliseconds(1), jitter: milliseconds(1), replyJitter: milliseconds(4)))".contains(
                "uniform (replies ± 0.004000000s)"))
        XCTAssertThrowsError(try Impairment(replyJitter: milliseconds(-1)).validate()) { error in
            XCTAssertEqual(error as? ImpairmentError, .invalidTime(name: "reply jitter", value: self.milliseconds(-1)))
        }
    }

    func testValidate_namesTheValueOutOfRange() {
        XCTAssertThrowsError(try Impairment(lossPercent: 101).validate()) { error in
            XCTAssertEqual(error as? ImpairmentError, .invalidPercentage(name: "loss", value: 101))
        }
        XCTAssertThrowsError(try Impairment(duplicatePercent: .nan).validate())
        XCTAssertThrowsError(try Impairment(delay: milliseconds(-1)).validate()) { error in
            XCTAssertEqual(error as? ImpairmentError, .invalidTime(name: "delay", value: self.milliseconds(-1)))
        }
        XCTAssertNoThrow(try Impairment(delay: milliseconds(5), jitter: milliseconds(5), lossPercent: 100).validate())
        XCTAssertThrowsError(try Impairment(lossPercent: 5, lossBurst: 0.5).validate()) { error in
            XCTAssertEqual(error as? ImpairmentError, .invalidBurst(value: 0.5))
        }
        XCTAssertThrowsError(try Impairment(lossPercent: 100, lossBurst: 3).validate())
        XCTAssertThrowsError(try Impairment(stall: milliseconds(-1)).validate())
        XCTAssertThrowsError(try Impairment(correlationPercent: 120).validate())
    }
}
