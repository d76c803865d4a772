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

    func testValidate_namesTheValueOutOfRange() {
        XCTAssertThrowsError(try Impairment(lossPercent: 101).validate()) { error in
            XCTAssertEqual(error as? ImpairmentError, .invalidPercentage(name: "loss", value: 101))
        }
        XCTAssertThrowsError(try Impairment(duplicatePercent: .nan).validate())
        XCTAssertThrowsError(try Impairment(delay: milliseconds(-1)).validate()) { error in
            XCTAssertEqual(error as? ImpairmentError, .invalidTime(name: "delay", value: self.milliseconds(-1)))
        }
        XCTAssertNoThrow(try Impairment(delay: milliseconds(5), jitter: milliseconds(5), lossPercent: 100).validate())
    }
}
