import XCTest

@testable import SyncClock

/// The estimator's anchors: the fastest exchange of each interval before the window.
final class ClockEstimatorTests: XCTestCase {
    /// Exchanges every 100 ms against a master at `offset` + `ratePPB`·t, each way 1 ms plus up to
    /// `jitter` ns (a fixed pseudo-random sequence), with a 10 µs turnaround.
    struct Path {
        var offset: Int64 = 5_000_000_000
        var ratePPB: Int64 = 40_000
        var jitter: Int64 = 500_000
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15

        mutating func random() -> Int64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int64((state >> 33) % UInt64(jitter + 1))
        }

        func master(at local: Int64) -> Int64 { local + offset + local / 1_000_000 * ratePPB / 1_000 }

        mutating func sample(at local: Int64) -> ClockSample {
            let arrival = local + 1_000_000 + random()
            let serverReceive = master(at: arrival)
            let reply = arrival + 10_000
            return ClockSample(
                clientSend: local, serverReceive: serverReceive, serverSend: master(at: reply),
                clientReceive: reply + 1_000_000 + random())
        }
    }

    static func configuration(anchors: Int) -> ClockEstimator.Configuration {
        var configuration = ClockEstimator.Configuration()
        configuration.windowSize = 16
        configuration.anchorInterval = 1_000_000_000
        configuration.anchorCount = anchors
        return configuration
    }

    func testAnchors_keepTheFastestExchangeOfEachIntervalBeforeTheWindow() {
        var estimator = ClockEstimator(configuration: Self.configuration(anchors: 20))
        var path = Path()
        var all: [ClockSample] = []
        for step in 0..<300 {
            let sample = path.sample(at: 1_000_000_000 + Int64(step) * 100_000_000)
            all.append(sample)
            guard case .accepted = estimator.add(sample) else { return XCTFail("sample \(step) not accepted") }
        }
        XCTAssertEqual(estimator.window.count, 16)
        XCTAssertEqual(estimator.anchors.count, 20, "the newest 20 intervals before the window")
        let windowStart = estimator.window[0].clientSend
        for anchor in estimator.anchors {
            XCTAssertLessThan(anchor.clientSend, windowStart)
            let second = anchor.clientSend / 1_000_000_000
            let fastest = all.filter { $0.clientSend / 1_000_000_000 == second && $0.clientSend < windowStart }
                .min { $0.delay < $1.delay }
            XCTAssertEqual(anchor, fastest, "second \(second)")
        }
        XCTAssertEqual(estimator.anchors.map { $0.clientSend / 1_000_000_000 }, Array(Int64(10)...29))
    }

    func testAnchors_narrowTheRatesAWindowAllows() throws {
        var path = Path()
        var withAnchors = ClockEstimator(configuration: Self.configuration(anchors: 20))
        var without = ClockEstimator(configuration: Self.configuration(anchors: 0))
        for step in 0..<300 {
            let sample = path.sample(at: 1_000_000_000 + Int64(step) * 100_000_000)
            _ = withAnchors.add(sample)
            _ = without.add(sample)
        }
        XCTAssertTrue(without.anchors.isEmpty)
        let anchored = try XCTUnwrap(withAnchors.estimate).region.largestRateDifference(from: Double(path.ratePPB))
        let windowed = try XCTUnwrap(without.estimate).region.largestRateDifference(from: Double(path.ratePPB))
        // A 1.6 s window of ±0.5 ms jitter allows hundreds of ppm; 20 s of anchors, a few.
        XCTAssertLessThan(anchored, windowed / 10, "anchored \(anchored) ppb, window alone \(windowed) ppb")
        let estimate = try XCTUnwrap(withAnchors.estimate)
        XCTAssertEqual(estimate.rate, Double(path.ratePPB), accuracy: 5_000)
    }

    func testAnchors_goWhenTheRateMoves_andTheWindowAloneCarriesOn() {
        var path = Path()
        var estimator = ClockEstimator(configuration: Self.configuration(anchors: 20))
        var local: Int64 = 1_000_000_000
        for _ in 0..<300 {
            _ = estimator.add(path.sample(at: local))
            local += 100_000_000
        }
        XCTAssertFalse(estimator.anchors.isEmpty)
        let change = local
        // The master's oscillator jumps by 2000 ppm, continuously: the old anchors no longer fit.
        let before = path.master(at: local)
        path.offset = before - local - local / 1_000_000 * (path.ratePPB + 2_000_000) / 1_000
        path.ratePPB += 2_000_000
        XCTAssertEqual(path.master(at: local), before)
        var rejected = 0
        for _ in 0..<100 {
            if case .rejected = estimator.add(path.sample(at: local)) { rejected += 1 }
            local += 100_000_000
        }
        XCTAssertLessThanOrEqual(rejected, 3, "the new rate is taken from the window, not held off by anchors")
        XCTAssertEqual(estimator.estimate?.rate ?? 0, Double(path.ratePPB), accuracy: 100_000)
        // Exchanges within a few hundred ms of the change fit both rates within their delays.
        for anchor in estimator.anchors {
            XCTAssertGreaterThan(anchor.clientSend, change - 1_000_000_000, "an anchor from well before the change")
        }
    }

    func testReset_forgetsTheAnchors() {
        var path = Path()
        var estimator = ClockEstimator(configuration: Self.configuration(anchors: 20))
        for step in 0..<100 { _ = estimator.add(path.sample(at: 1_000_000_000 + Int64(step) * 100_000_000)) }
        XCTAssertFalse(estimator.anchors.isEmpty)
        estimator.reset()
        XCTAssertTrue(estimator.anchors.isEmpty)
        XCTAssertTrue(estimator.window.isEmpty)
    }
}
