import LockstepTime
import XCTest

@testable import WallAnalysis

final class GroundTruthComparisonTests: XCTestCase {
    // MARK: Matching

    func testMatching_acrossCodeWrapAroundAndLoops_matchesEveryFrame() throws {
        var scenario = Scenario(nodes: ["a", "b", "c"])
        // 10 000 frames of a 4500-frame clip: codes wrap at 4096 inside each loop, and the loop
        // restarts them twice. b's per-frame jitter would show as disagreement after any mismatch.
        scenario.wall.loopFrames = 4_500
        scenario.wall.skew = ["b": { Int64($0 % 7) * 50_000 }, "c": { _ in 300_000 }]
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        let frames = 10_000
        var largestQueue = 0
        // The receiver sees frames as they render; the report comes 3 s later.
        try comparison.ingest(scenario.arrivals(0..<90))
        for start in stride(from: 0, to: frames, by: 30) {
            try comparison.ingest(scenario.arrivals(min(start + 90, frames)..<min(start + 120, frames)))
            try comparison.ingest(scenario.frames(start..<min(start + 30, frames)))
            largestQueue = max(largestQueue, comparison.queuedArrivalCount)
        }
        comparison.finish()
        let report = comparison.report()

        XCTAssertEqual(report.framesMatched, frames)
        XCTAssertEqual(report.framesUnmatched, 0)
        XCTAssertEqual(report.nodes.map(\.unmatchedArrivals), [0, 0, 0])
        XCTAssertEqual(report.nodes.map(\.arrivals), [frames, frames, frames])
        XCTAssertEqual(report.disagreement.maximum, .zero)
        XCTAssertEqual(report.pairs.map(\.pair.description), ["a–b", "a–c", "b–c"])
        XCTAssertEqual(report.pairs.map(\.truthSkew.maximum), [.ms(0.3), .ms(0.3), .ms(0.3)])
        XCTAssertEqual(report.pairs[1].truthSkew.minimum, .ms(0.3))
        XCTAssertEqual(report.pairs[2].truthSkew.minimum, .zero)
        XCTAssertEqual(report.spread.maximum, .ms(0.3))
        XCTAssertLessThanOrEqual(largestQueue, 3 * 120, "arrivals are kept only until their frames come")
    }

    func testMatching_whenAnArrivalIsLost_countsThatFrameUnmatched() throws {
        var scenario = Scenario(nodes: ["a", "b", "c"])
        scenario.lostArrivals = ["c": [100]]
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        try comparison.ingest(scenario.arrivals(0..<300))
        try comparison.ingest(scenario.frames(0..<300))
        comparison.finish()
        let report = comparison.report()
        XCTAssertEqual(report.framesMatched, 299)
        XCTAssertEqual(report.framesUnmatched, 1)
        XCTAssertEqual(report.nodes.map(\.unmatchedFrames), [0, 0, 1])
        XCTAssertEqual(report.nodes.map(\.unmatchedArrivals), [0, 0, 0])
    }

    func testMatching_whenArrivalsComeAfterTheirFrames_waitsForThem() throws {
        let scenario = Scenario(nodes: ["a", "b"])
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        try comparison.ingest(scenario.frames(0..<300))
        XCTAssertEqual(comparison.pendingFrameCount, 300)
        for start in stride(from: 0, to: 300, by: 30) {
            try comparison.ingest(scenario.arrivals(start..<start + 30))
        }
        XCTAssertEqual(comparison.pendingFrameCount, 0)
        XCTAssertEqual(comparison.report().framesMatched, 300)
    }

    func testMatching_whenReceiverStartsLateOnAShortLoop_usesTheClockOffsetToAvoidTheNextLoop() throws {
        var scenario = Scenario(nodes: ["a", "b"])
        // A 2 s clip: frame 0's code comes round again at frame 60, inside the first poll's reach.
        scenario.wall.loopFrames = 60
        scenario.wall.skew = ["b": { Int64($0 % 7) * 50_000 }]
        var comparison = try GroundTruthComparison(
            nodes: scenario.nodes,
            configuration: GroundTruthComparison.Configuration(
                clockOffset: MediaTime(nanoseconds: scenario.clockOffset)))
        try comparison.ingest(scenario.arrivals(30..<600))
        try comparison.ingest(scenario.frames(0..<600))
        comparison.finish()
        let report = comparison.report()
        XCTAssertEqual(report.framesMatched, 570)
        XCTAssertEqual(report.framesUnmatched, 30)
        XCTAssertEqual(report.disagreement.maximum, .zero)
    }

    func testMatching_whenFrameDurationIsInferred_readsAnNTSCClip() throws {
        var scenario = Scenario(nodes: ["a", "b"])
        scenario.wall.frameInterval = 33_366_667
        var comparison = try GroundTruthComparison(
            nodes: scenario.nodes, configuration: GroundTruthComparison.Configuration(frameDuration: nil))
        try comparison.ingest(scenario.arrivals(0..<200))
        try comparison.ingest(scenario.frames(0..<5))
        XCTAssertEqual(comparison.pendingFrameCount, 5, "five frames are too few steps to infer from")
        try comparison.ingest(scenario.frames(5..<200))
        comparison.finish()
        XCTAssertEqual(comparison.report().framesMatched, 200)
    }

    func testFrameDurationInference_snapsToWholeAndNTSCRates() {
        func inferred(_ step: Int64) -> MediaTime? {
            var inference = GroundTruthComparison.FrameDurationInference()
            var result: MediaTime?
            // Every third step skips a frame, as a wall that drops frames would show.
            var time: Int64 = 0
            for index in 0..<12 {
                result = inference.add(MediaTime(nanoseconds: time))
                time += index % 3 == 2 ? 2 * step : step
            }
            return result
        }
        XCTAssertEqual(inferred(33_333_333), MediaTime(value: 1, timescale: 30))
        XCTAssertEqual(inferred(40_000_000), MediaTime(value: 1, timescale: 25))
        XCTAssertEqual(inferred(33_366_667), MediaTime(value: 1_001, timescale: 30_000))
        XCTAssertEqual(inferred(16_683_333), MediaTime(value: 1_001, timescale: 60_000))
        XCTAssertEqual(inferred(7_777_777), MediaTime(nanoseconds: 7_777_777))
    }

    func testCode_isRoundedFrameNumberModulo4096() {
        let duration = MediaTime(value: 1, timescale: 30)
        XCTAssertEqual(
            GroundTruthComparison.code(of: MediaTime(nanoseconds: 4_095 * 33_333_333), frameDuration: duration), 4_095)
        XCTAssertEqual(
            GroundTruthComparison.code(of: MediaTime(nanoseconds: 4_097 * 33_333_333), frameDuration: duration), 1)
        XCTAssertEqual(GroundTruthComparison.code(of: MediaTime(value: 7, timescale: 60), frameDuration: duration), 4)
    }

    // MARK: Disagreement and verdict

    func testDisagreement_whenOneNodeReportsAKnownErrorOfAThirdMillisecond_isConfirmed() throws {
        var scenario = Scenario(nodes: ["a", "b", "c"])
        scenario.reportError = ["b": 300_000]
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        try comparison.ingest(scenario.arrivals(0..<300))
        try comparison.ingest(scenario.frames(0..<300))
        let report = comparison.report()

        XCTAssertEqual(report.pairs.map(\.disagreement.p99), [.ms(0.3), .zero, .ms(0.3)])
        XCTAssertEqual(report.pairs.map(\.disagreement.p50), [.ms(0.3), .zero, .ms(0.3)])
        XCTAssertEqual(report.pairs.map(\.truthSkew.maximum), [.zero, .zero, .zero])
        XCTAssertEqual(report.disagreement.p99, .ms(0.3))
        XCTAssertEqual(report.disagreement.count, 900)
        XCTAssertTrue(report.verdict.confirmed)
        XCTAssertEqual(
            report.verdict.sentence,
            "CONFIRMED: by ground truth the worst pair, a–b, is 0.000 ms apart at p99 (limit 2.000 ms), and the "
                + "nodes' own report agrees within 0.300 ms at p99 (limit 0.500 ms).")
        XCTAssertEqual(
            report.summaryLine,
            "ground truth: p99 skew 0.000 ms, nodes' report agrees within 0.300 ms at p99 → CONFIRMED")
    }

    func testVerdict_whenWallIsSkewedAndReportIsOff_isNotConfirmedOnBothCounts() throws {
        var scenario = Scenario(nodes: ["a", "b", "c"])
        scenario.wall.skew = ["b": { _ in 2_500_000 }]
        scenario.reportError = ["b": -800_000]
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        try comparison.ingest(scenario.arrivals(0..<100))
        try comparison.ingest(scenario.frames(0..<100))
        let verdict = comparison.report().verdict
        XCTAssertFalse(verdict.confirmed)
        XCTAssertFalse(verdict.skewWithinThreshold)
        XCTAssertFalse(verdict.agreementWithinThreshold)
        XCTAssertEqual(
            verdict.sentence,
            "NOT CONFIRMED: by ground truth a–b are 2.500 ms apart at p99, over the 2.000 ms limit, and the nodes' "
                + "own report is off by 0.800 ms at p99, over the 0.500 ms limit.")
        XCTAssertEqual(
            comparison.report().summaryLine,
            "ground truth: p99 skew 2.500 ms, nodes' report agrees within 0.800 ms at p99 → NOT CONFIRMED")
    }

    func testVerdict_whenNothingMatched_isNotConfirmed() throws {
        var comparison = try GroundTruthComparison(nodes: ["a", "b"])
        comparison.finish()
        let report = comparison.report()
        XCTAssertFalse(report.verdict.confirmed)
        XCTAssertEqual(report.summaryLine, "ground truth: no frame matched on every node → NOT CONFIRMED")
    }

    // MARK: Feeding from the analyzer

    func testComparison_fedByTheDriftAnalyzer_confirmsAnAccurateWall() throws {
        var scenario = Scenario(nodes: ["left", "middle", "right"])
        scenario.wall.skew = ["right": { Int64($0 % 3) * 100_000 }]
        var analyzer = try DriftAnalyzer(nodes: scenario.nodes)
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        for start in stride(from: 0, to: 900, by: 30) {
            try comparison.ingest(scenario.arrivals(start..<start + 30))
            try comparison.ingest(scenario.wall.feed(start..<start + 30, to: &analyzer))
        }
        comparison.finish()
        let report = comparison.report()
        XCTAssertEqual(report.framesMatched, 900)
        XCTAssertEqual(report.disagreement.maximum, .zero)
        XCTAssertEqual(report.pairs[1].truthSkew.maximum, .ms(0.2))
        XCTAssertTrue(report.verdict.confirmed)
    }

    // MARK: Bounds and errors

    func testQueue_whenNoFramesCome_staysBounded() throws {
        let scenario = Scenario(nodes: ["a", "b"])
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        try comparison.ingest(scenario.arrivals(0..<5_000))
        XCTAssertEqual(comparison.queuedArrivalCount, 2 * 2_048)
        comparison.finish()
        XCTAssertEqual(comparison.queuedArrivalCount, 0)
        XCTAssertEqual(comparison.report().nodes.map(\.unmatchedArrivals), [5_000, 5_000])
    }

    func testIngest_whenInputIsWrong_throwsSentences() throws {
        var comparison = try GroundTruthComparison(nodes: ["a", "b"])
        XCTAssertThrowsError(try comparison.ingest(GroundTruthArrival(node: "a", code: 4_096, arrivedAt: .zero))) {
            XCTAssertEqual("\($0)", "node \"a\" sent frame code 4096, but codes run from 0 to 4095")
        }
        XCTAssertThrowsError(try comparison.ingest(GroundTruthArrival(node: "x", code: 1, arrivedAt: .zero))) {
            XCTAssertEqual($0 as? AnalysisError, .unknownNode("x", known: ["a", "b"]))
        }
        let frame = AlignedFrame(
            nodes: ["b", "a"], runningTime: .zero, presentationTimestamp: .zero, presentedAt: [.zero, .zero])
        XCTAssertThrowsError(try comparison.ingest(frame)) {
            XCTAssertEqual("\($0)", "an aligned frame covers nodes b, a, but the comparison was set up for a, b")
        }
        let short = AlignedFrame(
            nodes: ["a", "b"], runningTime: .zero, presentationTimestamp: .zero, presentedAt: [.zero])
        XCTAssertThrowsError(try comparison.ingest(short)) {
            XCTAssertEqual("\($0)", "an aligned frame of 2 nodes lists 1 presentation time; it needs one per node")
        }
        XCTAssertThrowsError(
            try GroundTruthComparison(
                nodes: ["a", "b"], configuration: GroundTruthComparison.Configuration(matchWindow: .ms(-1)))
        ) {
            XCTAssertEqual("\($0)", "the match window must be a positive time, but it is -0.001000000s")
        }
    }

    func testReport_roundTripsThroughJSON() throws {
        var scenario = Scenario(nodes: ["a", "b"])
        scenario.reportError = ["a": 12_345]
        scenario.lostArrivals = ["b": [3]]
        var comparison = try GroundTruthComparison(nodes: scenario.nodes)
        try comparison.ingest(scenario.arrivals(0..<50))
        try comparison.ingest(scenario.frames(0..<50))
        comparison.finish()
        let report = comparison.report()
        XCTAssertEqual(try JSONDecoder().decode(GroundTruthReport.self, from: report.jsonData()), report)
    }
}

/// A wall seen twice: through its nodes' reports (`AlignedFrame`s) and through the ground-truth
/// receiver (`GroundTruthArrival`s on another clock). 30 fps, as the frame-code clips are.
private struct Scenario {
    var wall: SyntheticWall
    /// Per node, how far its report of `presentedAt` is from the truth.
    var reportError: [String: Int64] = [:]
    /// Per node, frames whose datagram never reached the receiver.
    var lostArrivals: [String: Set<Int>] = [:]
    /// CLOCK_MONOTONIC minus master time: a machine up for a few days, master time near the epoch's.
    let clockOffset: Int64 = 300_000_000_000_000 - 1_763_000_000_000_000_000

    init(nodes: [String]) {
        wall = SyntheticWall(nodes: nodes)
        wall.frameInterval = 33_333_333
    }

    var nodes: [String] { wall.nodes }

    func frames(_ range: Range<Int>) -> [AlignedFrame] {
        range.map { frame in
            AlignedFrame(
                nodes: nodes, runningTime: MediaTime(nanoseconds: wall.runningTime(frame)),
                presentationTimestamp: wall.timestamp(frame),
                presentedAt: nodes.map { MediaTime(nanoseconds: wall.presentedAt($0, frame) + (reportError[$0] ?? 0)) })
        }
    }

    /// Every node's arrivals of `range`, in arrival order.
    func arrivals(_ range: Range<Int>) -> [GroundTruthArrival] {
        range.flatMap { frame in
            nodes.compactMap { node in
                guard !(lostArrivals[node] ?? []).contains(frame) else { return nil }
                return GroundTruthArrival(
                    node: node, code: (wall.loopFrames.map { frame % $0 } ?? frame) % 4_096,
                    arrivedAt: MediaTime(nanoseconds: wall.presentedAt(node, frame) + clockOffset))
            }
        }
    }
}
