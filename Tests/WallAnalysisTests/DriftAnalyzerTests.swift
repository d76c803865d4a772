import LockstepTime
import WallAnalysis
import WallProtocol
import XCTest

final class DriftAnalyzerTests: XCTestCase {
    // MARK: Alignment

    func testAlignment_whenNodesLagAndInterleave_alignsEveryFrameOnce() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        // c's running times are 0.3 ms off: frame 2 rounds to another millisecond than on a and b.
        wall.runningTimeError = ["c": 300_000]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        var aligned: [AlignedFrame] = []
        // a is polled every 10 frames, b lags 2 s behind it, c comes in uneven chunks 50 frames late.
        var (polledB, polledC) = (0, 0)
        for newest in stride(from: 10, through: 600, by: 10) {
            aligned += try analyzer.ingest(wall.records("a", newest - 10..<newest), from: "a")
            let bUpTo = max(0, newest - 120)
            aligned += try analyzer.ingest(wall.records("b", polledB..<bUpTo), from: "b")
            polledB = bUpTo
            if newest % 30 == 0 {
                let cUpTo = max(0, newest - 50)
                aligned += try analyzer.ingest(wall.records("c", polledC..<cUpTo), from: "c")
                polledC = cUpTo
            }
        }
        aligned += try analyzer.ingest(wall.records("c", polledC..<600), from: "c")
        aligned += try analyzer.ingest(wall.records("b", polledB..<600), from: "b")
        analyzer.finish()

        let report = analyzer.report()
        XCTAssertEqual(report.framesAligned, 600)
        XCTAssertEqual(report.framesIncomplete, 0)
        XCTAssertEqual(aligned.count, 600)
        XCTAssertEqual(aligned.map(\.runningTime), (0..<600).map { MediaTime(nanoseconds: wall.runningTime($0)) })
        XCTAssertEqual(aligned[2].presentedAt, ["a", "b", "c"].map { MediaTime(nanoseconds: wall.presentedAt($0, 2)) })
        XCTAssertEqual(report.nodes.map(\.missingFrames), [0, 0, 0])
        XCTAssertEqual(report.nodes.map(\.skew.count), [600, 600, 600])
        XCTAssertEqual(report.spread.maximum, .zero)
        XCTAssertEqual(report.duration, MediaTime(nanoseconds: wall.runningTime(599)))
        XCTAssertEqual(analyzer.pendingFrameCount, 0)
    }

    func testDuplicates_whenPollsOverlap_areIgnoredAndNotCounted() throws {
        var wall = SyntheticWall(nodes: ["a", "b"])
        wall.skew = ["b": { _ in 400_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try analyzer.ingest(wall.records("a", 0..<50), from: "a")
        try analyzer.ingest(wall.records("a", 0..<50), from: "a")
        try analyzer.ingest(wall.records("a", 40..<60), from: "a")
        let aligned = try analyzer.ingest(wall.records("b", 0..<60), from: "b")
        // A record out of order with a new sequence number: frame 5 again, after frame 59.
        var stray = wall.records("b", 5..<6)[0]
        stray.sequence = 1_000
        let none = try analyzer.ingest([stray], from: "b")

        let report = analyzer.report()
        XCTAssertEqual(aligned.count, 60)
        XCTAssertEqual(none, [])
        XCTAssertEqual(report.framesAligned, 60)
        XCTAssertEqual(report.nodes.map(\.framesPresented), [60, 60])
        XCTAssertEqual(report.nodes.map(\.ignoredRecords), [60, 1])
        XCTAssertEqual(report.pairs[0].skew.count, 60)
        XCTAssertEqual(report.pairs[0].skew.mean, .ms(0.4))
    }

    func testAlignment_whenTwoRecordsFallInOneMillisecond_ignoresTheOneThatCannotBePlaced() throws {
        var analyzer = try DriftAnalyzer(nodes: ["a", "b"])
        // 9.51 ms and 10.49 ms: both round to 10 ms but are not within half a millisecond.
        let records = [9_510_000, 10_490_000].enumerated().map { index, time in
            FrameRecord(
                sequence: UInt64(index + 1), presentationTimestamp: .zero, runningTime: MediaTime(nanoseconds: time),
                presentedAt: MediaTime(nanoseconds: time), dueAt: MediaTime(nanoseconds: time))
        }
        try analyzer.ingest(records, from: "a")
        analyzer.finish()
        let node = analyzer.report().nodes[0]
        XCTAssertEqual(node.framesPresented, 1)
        XCTAssertEqual(node.ignoredRecords, 1)
        XCTAssertEqual(node.lateness.count, 1)
    }

    func testUnusableRecords_areCountedNotThrown() throws {
        let wall = SyntheticWall(nodes: ["a", "b"])
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        var records = wall.records("a", 0..<3)
        records[1].presentedAt = .invalid
        try analyzer.ingest(records, from: "a")
        try analyzer.ingest(wall.records("b", 0..<3), from: "b")
        analyzer.finish()
        let report = analyzer.report()
        XCTAssertEqual(report.nodes[0].unusableRecords, 1)
        XCTAssertEqual(report.framesAligned, 2)
        XCTAssertEqual(report.framesIncomplete, 1)
        XCTAssertEqual(report.nodes[0].missingFrames, 1)
    }

    // MARK: Skew

    func testSkew_whenOneNodeIsLate() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c", "d"])
        wall.skew = ["c": { _ in 700_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<300, to: &analyzer)
        let report = analyzer.report()

        let late = report.nodes[2].skew
        XCTAssertEqual([late.mean, late.p50, late.p95, late.p99, late.maximum], Array(repeating: .ms(0.7), count: 5))
        XCTAssertEqual(report.nodes[2].meanSignedSkew, .ms(0.7))
        for index in [0, 1, 3] {
            XCTAssertEqual(report.nodes[index].skew.maximum, .zero, "the median is the on-time nodes' time")
        }
        let byPair = Dictionary(uniqueKeysWithValues: report.pairs.map { ($0.pair.description, $0) })
        for name in ["a–c", "b–c", "c–d"] {
            XCTAssertEqual(byPair[name]?.skew.p99, .ms(0.7), name)
            XCTAssertEqual(byPair[name]?.skew.p50, .ms(0.7), name)
        }
        XCTAssertEqual(byPair["a–c"]?.meanSignedSkew, .ms(-0.7))
        XCTAssertEqual(byPair["c–d"]?.meanSignedSkew, .ms(0.7))
        XCTAssertEqual(byPair["a–b"]?.skew.maximum, .zero)
        XCTAssertEqual(report.spread.p99, .ms(0.7))
        XCTAssertEqual(report.nodes[2].lateness.p50, .ms(0.8))
        XCTAssertEqual(report.nodes[0].lateness.p50, .ms(0.1))
    }

    func testSkew_whenTwoNodes_isHalfTheirDifferenceEach() throws {
        var wall = SyntheticWall(nodes: ["left", "right"])
        wall.skew = ["right": { _ in 600_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<10, to: &analyzer)
        let report = analyzer.report()
        XCTAssertEqual(report.nodes.map(\.meanSignedSkew), [.ms(-0.3), .ms(0.3)])
        XCTAssertEqual(report.nodes.map(\.skew.p99), [.ms(0.3), .ms(0.3)])
        XCTAssertEqual(report.pairs[0].skew.p99, .ms(0.6))
    }

    // MARK: Missing frames

    func testMissing_whenNodeDropsFrame_countsOnlyAfterSettleWindow() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.dropped = ["c": [10]]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        // Frame 10 is at 166.666670 ms; frame 130, at 2166.666710 ms, is the first 2 s after it.
        try wall.feed(0..<130, to: &analyzer)
        XCTAssertEqual(analyzer.pendingFrameCount, 1)
        XCTAssertEqual(analyzer.report().nodes[2].missingFrames, 0)
        XCTAssertEqual(analyzer.report().framesIncomplete, 0)

        try wall.feed(130..<131, to: &analyzer)
        let report = analyzer.report()
        XCTAssertEqual(analyzer.pendingFrameCount, 0)
        XCTAssertEqual(report.nodes.map(\.missingFrames), [0, 0, 1])
        XCTAssertEqual(report.framesIncomplete, 1)
        XCTAssertEqual(report.framesAligned, 130)
    }

    func testMissing_whenNodeStartsLater_framesBeforeItsFirstRecordAreNotMissing() throws {
        let wall = SyntheticWall(nodes: ["a", "b"])
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try analyzer.ingest(wall.records("a", 0..<100), from: "a")
        try analyzer.ingest(wall.records("b", 30..<100), from: "b")
        analyzer.finish()
        let report = analyzer.report()
        XCTAssertEqual(report.framesAligned, 70)
        XCTAssertEqual(report.framesIncomplete, 30)
        XCTAssertEqual(report.nodes.map(\.missingFrames), [0, 0])
        XCTAssertEqual(report.firstRunningTime, MediaTime(nanoseconds: wall.runningTime(30)))
    }

    func testPending_whenNodeStopsDelivering_staysWithinLimit() throws {
        let wall = SyntheticWall(nodes: ["a", "b", "c"])
        var analyzer = try DriftAnalyzer(
            nodes: wall.nodes, configuration: DriftAnalyzer.Configuration(maxPendingFrames: 100))
        try analyzer.ingest(wall.records("c", 0..<50), from: "c")
        for start in stride(from: 0, to: 1_000, by: 50) {
            try analyzer.ingest(wall.records("a", start..<start + 50), from: "a")
            try analyzer.ingest(wall.records("b", start..<start + 50), from: "b")
            XCTAssertLessThanOrEqual(analyzer.pendingFrameCount, 100)
        }
        // A late record for a frame given up on cannot bring it back.
        try analyzer.ingest(wall.records("c", 60..<61), from: "c")
        XCTAssertLessThanOrEqual(analyzer.pendingFrameCount, 100)
        analyzer.finish()
        let report = analyzer.report()
        XCTAssertEqual(analyzer.pendingFrameCount, 0)
        XCTAssertEqual(report.framesAligned, 50)
        XCTAssertEqual(report.framesIncomplete, 950)
        XCTAssertEqual(report.nodes[2].ignoredRecords, 1)
        XCTAssertEqual(report.nodes[2].missingFrames, 0, "c delivered nothing after frame 49: not polled, not missing")
    }

    // MARK: Node reports

    func testNodeReports_summarizeErrorBoundsCountersAndUndeliveredRecords() throws {
        let wall = SyntheticWall(nodes: ["a", "b"])
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try analyzer.ingest(
            FramesReply(node: "a", records: wall.records("a", 0..<5), missed: 7, clockErrorBound: .ms(0.2)))
        try analyzer.recordClockErrorBound(.ms(0.5), for: "a")
        try analyzer.recordClockErrorBound(.ms(0.3), for: "a")
        try analyzer.recordCounters(late: 10, dropped: 1, for: "a")
        try analyzer.recordCounters(late: 12, dropped: 1, for: "a")
        // The node restarted: its late counter counts on from zero (3 more), dropped rose by 1.
        try analyzer.record(
            NodeStatus(
                id: "a", masterTime: nil,
                clock: ClockReport(state: .locked, usable: true, server: "m", errorBound: .ms(0.25)),
                player: PlayerReport(
                    status: "readyToPlay", media: nil, itemStatus: nil, timeControlStatus: "playing",
                    waitingReason: nil, rate: 1, position: .zero, prerolled: true, framesPresented: 5,
                    framesLate: 3, framesDropped: 2, renderThread: "normal", error: nil)))
        let node = analyzer.report().nodes[0]
        XCTAssertEqual(node.clockErrorBound, ClockErrorBoundSummary(maximum: .ms(0.5), last: .ms(0.25)))
        XCTAssertEqual(node.lateFrames, 5)
        XCTAssertEqual(node.droppedFrames, 1)
        XCTAssertEqual(node.undeliveredRecords, 7)
        XCTAssertEqual(node.framesPresented, 5)
        let other = analyzer.report().nodes[1]
        XCTAssertNil(other.clockErrorBound)
        XCTAssertNil(other.lateFrames)
    }

    // MARK: Verdict

    func testVerdict_whenWithinThreshold_passesNamingTheWorstPair() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["b": { _ in 412_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.05, wall.nodes)
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertTrue(verdict.passed)
        XCTAssertEqual(verdict.outcome, .pass)
        XCTAssertEqual(verdict.worstPair, NodePair("a", "b"))
        XCTAssertEqual(verdict.worstPairClockUncertainty, .ms(0.1))
        XCTAssertEqual(
            verdict.sentence,
            "PASS: every pair stays within the 1.000 ms threshold at p99 with its clocks' uncertainty added to "
                + "each frame, by bounds that hold whatever the paths' asymmetry; the worst, a–b, reaches 0.512 ms "
                + "(0.412 ms by their own clocks; error bounds up to 0.050 + 0.050 ms).")
    }

    func testVerdict_withinTheThresholdOnlyIfThePathsAreSymmetric_isUncertainNamingAsymmetry() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["b": { _ in 412_000 }]
        // Estimated bounds of 0.05 ms assume the fastest exchanges symmetric; round trips of a
        // millisecond leave room for 0.5 ms of asymmetry each way.
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.05, wall.nodes, guaranteed: 0.5)
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertEqual(verdict.outcome, .uncertain)
        XCTAssertEqual(verdict.worstPairClockUncertainty, .ms(1))
        XCTAssertTrue(verdict.sentence.contains("if the paths to the master are symmetric"), verdict.sentence)
        XCTAssertTrue(verdict.sentence.contains("reaches 0.512 ms"), verdict.sentence)
        XCTAssertTrue(
            verdict.sentence.contains("asymmetry (half each round trip) they reach 1.412 ms"), verdict.sentence)
        XCTAssertTrue(verdict.sentence.contains("let the screens measure each other's clocks"), verdict.sentence)
        let report = analyzer.report()
        XCTAssertEqual(report.nodes[0].guaranteedClockErrorBound?.maximum, .ms(0.5))
        XCTAssertEqual(report.pairs[0].guaranteedClockUncertainty?.total, .ms(1))

        // Nodes that give no guaranteed bound cannot be vouched for either.
        var silent = try DriftAnalyzer(nodes: wall.nodes)
        for node in wall.nodes { try silent.recordClockErrorBound(.ms(0.05), for: node) }
        try wall.feed(0..<100, to: &silent)
        XCTAssertEqual(silent.report().verdict.outcome, .uncertain)
        XCTAssertTrue(
            silent.report().verdict.sentence.contains("reported no bound that holds whatever its path's asymmetry"))
    }

    func testVerdict_onPathsAsymmetricToTheMaster_passesOnTheNodesMeasurementOfEachOther() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["b": { _ in 100_000 }]
        // Far from the master (guaranteed 0.5 ms each), near each other: each measures the others
        // 0.02 ms away within 0.03 ms, so their clocks are within 0.05 ms whatever the asymmetry.
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.05, wall.nodes, guaranteed: 0.5)
        for node in wall.nodes {
            for peer in wall.nodes where peer != node {
                try analyzer.recordPeerClock(
                    PeerClockReport(node: peer, offset: .ms(-0.02), guaranteedErrorBound: .ms(0.03)), measuredBy: node)
            }
        }
        // A node this analysis does not follow is passed over.
        try analyzer.recordPeerClock(
            PeerClockReport(node: "elsewhere", offset: .ms(3), guaranteedErrorBound: .ms(1)), measuredBy: "a")
        try wall.feed(0..<100, to: &analyzer)
        let report = analyzer.report()
        XCTAssertEqual(report.verdict.outcome, .pass, report.verdict.sentence)
        XCTAssertEqual(report.verdict.worstPairClockUncertainty, .ms(0.05))
        XCTAssertEqual(report.pairs[0].guaranteedClockUncertainty?.measuredBetween, true)
        XCTAssertTrue(
            report.verdict.sentence.contains("clocks measured against each other directly, up to 0.050 ms apart"),
            report.verdict.sentence)

        // A measurement that finds the clocks far apart tightens no bound of the run, but says
        // which way they are apart: b's clock 1.2 ms ahead of a's puts the screens over 1 ms apart.
        var apart = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&apart, 0.05, wall.nodes, guaranteed: 0.5)
        try apart.recordPeerClock(
            PeerClockReport(node: "b", offset: .ms(1.2), guaranteedErrorBound: .ms(0.03)), measuredBy: "a")
        try wall.feed(0..<100, to: &apart)
        XCTAssertEqual(apart.report().pairs[0].guaranteedClockUncertainty?.total, .ms(1))
        XCTAssertEqual(apart.report().verdict.outcome, .fail, apart.report().verdict.sentence)
        XCTAssertTrue(
            apart.report().verdict.sentence.contains("at least 1.070 ms at p99"), apart.report().verdict.sentence)

        // Either node's measurement counts, and the pair's order does not matter.
        var reversed = try DriftAnalyzer(nodes: ["a", "b"])
        try bound(&reversed, 0.05, ["a", "b"], guaranteed: 0.5)
        try reversed.recordPeerClock(
            PeerClockReport(node: "a", offset: .ms(0.01), guaranteedErrorBound: .ms(0.02)), measuredBy: "b")
        XCTAssertEqual(reversed.report().pairs[0].guaranteedClockUncertainty?.total, .ms(0.03))
    }

    func testVerdict_whenTheNodesMeasureEachOtherApart_failsAPairInStepByItsOwnClocks() throws {
        // In step by their own clocks, but b measures a's clock 0.5 ms ahead of its own (within
        // 0.03 ms): a presents every frame 0.47–0.53 ms after b on the glass.
        var wall = SyntheticWall(nodes: ["a", "b"])
        wall.skew = ["b": { _ in 10_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes, configuration: .init(threshold: .ms(0.3)))
        try bound(&analyzer, 0.05, wall.nodes, guaranteed: 0.7)
        try analyzer.recordPeerClock(
            PeerClockReport(node: "a", offset: .ms(0.5), guaranteedErrorBound: .ms(0.03)), measuredBy: "b")
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertEqual(verdict.outcome, .fail, verdict.sentence)
        XCTAssertTrue(verdict.sentence.contains("by their own clocks, but their clocks, measured against each other"))
        XCTAssertTrue(verdict.sentence.contains("Why: their paths to the master differ in asymmetry"), verdict.sentence)
        XCTAssertFalse(verdict.sentence.contains("not the machine"), "the machines are not the cause")
        let lower = try XCTUnwrap(analyzer.report().pairs[0].skewWithGuaranteedClockUncertainty?.lower.p99)
        XCTAssertEqual(lower.seconds, 0.00046, accuracy: 0.00002)

        // Over by their own clocks as well (a presents 0.35 ms late), and measured 0.5 ms apart the
        // way that adds to it: the clocks are named first, and the machine after.
        var late = SyntheticWall(nodes: ["a", "b"])
        late.skew = ["a": { _ in 350_000 }]
        var both = try DriftAnalyzer(nodes: late.nodes, configuration: .init(threshold: .ms(0.3)))
        try bound(&both, 0.05, late.nodes, guaranteed: 0.7)
        try both.recordPeerClock(
            PeerClockReport(node: "a", offset: .ms(-0.5), guaranteedErrorBound: .ms(0.03)), measuredBy: "b")
        try late.feed(0..<100, to: &both)
        let over = both.report().verdict
        XCTAssertEqual(over.outcome, .fail, over.sentence)
        XCTAssertTrue(over.sentence.contains("clocks, measured against each other directly, are apart"), over.sentence)
        XCTAssertTrue(over.sentence.contains("at least 0.820 ms at p99"), over.sentence)
        XCTAssertTrue(over.sentence.contains("By their own clocks alone they are 0.050 ms over too"), over.sentence)
        XCTAssertFalse(over.sentence.contains("more than their clocks' uncertainty"), over.sentence)

        // The same measurement the other way round explains a skew the nodes' own clocks show:
        // b presents 0.5 ms late by its clock, whose error is 0.5 ms the other way.
        var explained = SyntheticWall(nodes: ["a", "b"])
        explained.skew = ["b": { _ in 500_000 }]
        var together = try DriftAnalyzer(nodes: explained.nodes, configuration: .init(threshold: .ms(0.3)))
        try bound(&together, 0.05, explained.nodes, guaranteed: 0.7)
        for _ in 0..<2 {
            try together.recordPeerClock(
                PeerClockReport(node: "b", offset: .ms(0.5), guaranteedErrorBound: .ms(0.03)), measuredBy: "a")
        }
        try explained.feed(0..<100, to: &together)
        XCTAssertEqual(together.report().verdict.outcome, .pass, together.report().verdict.sentence)
    }

    func testPeerClock_outOfRange_isAnErrorNamingTheMeasurement() throws {
        var analyzer = try DriftAnalyzer(nodes: ["a", "b"])
        XCTAssertThrowsError(
            try analyzer.recordPeerClock(
                PeerClockReport(node: "b", offset: .zero, guaranteedErrorBound: .ms(-1)), measuredBy: "a")
        ) { error in
            XCTAssertTrue("\(error)".contains("node \"a\"'s measurement of node \"b\""), "\(error)")
        }
    }

    func testPairIndex_findsEveryPairInEitherOrder() throws {
        for count in 2...6 {
            let nodes = (0..<count).map { "n\($0)" }
            var analyzer = try DriftAnalyzer(nodes: nodes)
            for (index, first) in nodes.enumerated() {
                for second in nodes.dropFirst(index + 1) {
                    try analyzer.recordPeerClock(
                        PeerClockReport(node: first, offset: .zero, guaranteedErrorBound: .ms(0.001)),
                        measuredBy: second)
                }
            }
            for pair in analyzer.report().pairs {
                XCTAssertEqual(pair.guaranteedClockUncertainty?.total, .ms(0.001), "\(count) nodes, \(pair.pair)")
            }
        }
    }

    func testVerdict_fails_onlyWhenEvenTheGuaranteedBoundsCannotExplainTheSkew() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["b": { _ in 1_700_000 }]
        // 1.7 ms apart; the estimated bounds (0.2 + 0.2) cannot explain it, the guaranteed ones
        // (0.5 + 0.5) leave 0.7 ms: under the threshold, so no FAIL on an assumption.
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.2, wall.nodes, guaranteed: 0.5)
        try wall.feed(0..<100, to: &analyzer)
        XCTAssertEqual(analyzer.report().verdict.outcome, .uncertain, analyzer.report().verdict.sentence)
        var tight = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&tight, 0.2, wall.nodes, guaranteed: 0.3)
        try wall.feed(0..<100, to: &tight)
        XCTAssertEqual(tight.report().verdict.outcome, .fail)
        XCTAssertTrue(
            tight.report().verdict.sentence.contains("more than their clocks' uncertainty, up to 0.600 ms, explains"),
            tight.report().verdict.sentence)
    }

    func testVerdict_whenTheClocksMayBeFurtherApartThanTheThresholdAllows_isUncertain() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["b": { _ in 170_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.7, wall.nodes)
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertEqual(verdict.outcome, .uncertain)
        XCTAssertFalse(verdict.passed, "a report that cannot vouch for the wall does not pass it")
        XCTAssertEqual(verdict.worstPair, NodePair("a", "b"))
        XCTAssertEqual(
            verdict.sentence,
            "UNCERTAIN: a–b differ by 0.170 ms at p99 by their own clocks, but with what their clocks may be apart "
                + "added to each frame they reach 1.570 ms (error bounds up to 0.700 + 0.700 ms), so the 1.000 ms "
                + "threshold cannot be confirmed; measure with --ground-truth, or give the clocks a quieter path to "
                + "the master.")
    }

    func testVerdict_whenTheClocksWereUncertainOnlyForAWhile_judgesEachFrameByItsOwnBounds() throws {
        var wall = SyntheticWall(nodes: ["a", "b"])
        wall.skew = ["b": { _ in 170_000 }]
        // A bad stretch at the start (0.7 ms bounds for 5 frames), then 0.1 ms for 995.
        let report = try badStretch(of: 5, in: 1_000, on: wall).report()
        XCTAssertEqual(report.verdict.outcome, .pass, report.verdict.sentence)
        XCTAssertEqual(report.verdict.worstPairClockUncertainty, .ms(1.4), "the largest uncertainty is still reported")
        assertWithinPrecision(report.pairs[0].skewWithClockUncertainty!.upper.p99, 370_000)
        // A stretch of 4 % of the frames shows at p99: the report cannot vouch for it.
        XCTAssertEqual(try badStretch(of: 20, in: 500, on: wall).report().verdict.outcome, .uncertain)
    }

    /// An analysis of `frames` frames whose first `stretch` were shown with 0.7 ms clock error bounds,
    /// the rest with 0.1 ms.
    private func badStretch(of stretch: Int, in frames: Int, on wall: SyntheticWall) throws -> DriftAnalyzer {
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.7, wall.nodes)
        try wall.feed(0..<stretch, to: &analyzer)
        // Two reports: the frames of a poll are judged by the larger of a node's last two bounds.
        try bound(&analyzer, 0.1, wall.nodes)
        try bound(&analyzer, 0.1, wall.nodes)
        try wall.feed(stretch..<frames, to: &analyzer)
        return analyzer
    }

    func testVerdict_whenANodeReportsNoClockBound_isUncertainNamingIt() throws {
        var wall = SyntheticWall(nodes: ["a", "b"])
        wall.skew = ["b": { _ in 100_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.05, ["a"])
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertEqual(verdict.outcome, .uncertain)
        XCTAssertNil(verdict.worstPairClockUncertainty)
        XCTAssertTrue(verdict.sentence.contains("b reported no clock error bound"), verdict.sentence)
    }

    func testVerdict_whenOverTheThresholdBeyondTheClocksUncertainty_fails() throws {
        var wall = SyntheticWall(nodes: ["a", "b"])
        wall.skew = ["b": { _ in 1_700_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.2, wall.nodes)
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertEqual(verdict.outcome, .fail)
        XCTAssertTrue(
            verdict.sentence.hasPrefix("FAIL: a–b differ by 1.700 ms at p99, 0.700 ms over"), verdict.sentence)
        XCTAssertTrue(
            verdict.sentence.contains("more than their clocks' uncertainty, up to 0.400 ms, explains"), verdict.sentence
        )
        // Over the threshold, but within what the clocks may be off by: the report cannot tell.
        var wider = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&wider, 0.5, wall.nodes)
        try wall.feed(0..<100, to: &wider)
        XCTAssertEqual(wider.report().verdict.outcome, .uncertain)
    }

    func testVerdict_whenAPairFollowsOneRelayAllAlong_takesOutTheErrorItPassedOn() throws {
        var wall = SyntheticWall(nodes: ["a", "b"])
        wall.skew = ["b": { _ in 170_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        // Both follow relay r, whose own bound from the master (0.5 ms, and then 0.6 ms as it holds)
        // is in both of theirs: it moves both screens together.
        let relay = "10.0.0.9:6000"
        for (total, inherited) in [(0.6, 0.5), (0.72, 0.6)] {
            for node in wall.nodes {
                try analyzer.recordClockErrorBound(
                    .ms(total),
                    lineage: ClockLineage(source: relay, relaying: nil, inheritedErrorBound: .ms(inherited)),
                    for: node)
            }
        }
        // Their guaranteed bounds, added whole (what of an asymmetry they share is not known).
        for node in wall.nodes { try analyzer.recordGuaranteedClockErrorBound(.ms(0.3), for: node) }
        try wall.feed(0..<100, to: &analyzer)
        let report = analyzer.report()
        XCTAssertEqual(
            report.pairs[0].clockUncertainty, PairClockUncertainty(first: .ms(0.12), second: .ms(0.12), shared: relay))
        assertWithinPrecision(report.pairs[0].skewWithClockUncertainty!.upper.p99, 410_000)
        let verdict = report.verdict
        XCTAssertEqual(verdict.outcome, .pass, verdict.sentence)
        XCTAssertEqual(verdict.worstPairClockUncertainty, .ms(0.6))
        XCTAssertEqual(
            verdict.sentence,
            "PASS: every pair stays within the 1.000 ms threshold at p99 with its clocks' uncertainty added to each "
                + "frame, by bounds that hold whatever the paths' asymmetry; the worst, a–b, reaches 0.770 ms (0.170 "
                + "ms by their own clocks; error bounds up to 0.300 + 0.300 ms).")
        // The nodes' whole bounds are still reported as they are.
        XCTAssertEqual(report.nodes[0].clockErrorBound?.maximum, .ms(0.72))
    }

    func testUncertainty_whenANodeFollowsTheOther_isOnlyTheFollowersOwnPart() throws {
        var analyzer = try DriftAnalyzer(nodes: ["relay", "screen", "other"])
        let relayAddress = "10.0.0.9:6000"
        try analyzer.recordClockErrorBound(
            .ms(0.8), lineage: ClockLineage(source: nil, relaying: relayAddress, inheritedErrorBound: nil), for: "relay"
        )
        try analyzer.recordClockErrorBound(
            .ms(0.9),
            lineage: ClockLineage(source: relayAddress, relaying: nil, inheritedErrorBound: .ms(0.8)), for: "screen")
        try analyzer.recordClockErrorBound(
            .ms(0.1), lineage: ClockLineage(source: "10.0.0.1:6000", relaying: nil, inheritedErrorBound: .zero),
            for: "other")
        let pairs = Dictionary(uniqueKeysWithValues: analyzer.report().pairs.map { ($0.pair, $0.clockUncertainty) })
        // The relay in holdover is off by up to 0.8 ms, and so is the screen that follows it, together.
        XCTAssertEqual(
            pairs[NodePair("relay", "screen")],
            PairClockUncertainty(first: .zero, second: .ms(0.1), shared: relayAddress))
        // A node on another source shares nothing with them.
        XCTAssertEqual(pairs[NodePair("screen", "other")], PairClockUncertainty(first: .ms(0.9), second: .ms(0.1)))
        XCTAssertEqual(pairs[NodePair("relay", "other")], PairClockUncertainty(first: .ms(0.8), second: .ms(0.1)))
    }

    func testUncertainty_whenTheLineageChangedOrIsUnknown_isTheSumOfTheBounds() throws {
        let relay = ClockLineage(source: "10.0.0.9:6000", relaying: nil, inheritedErrorBound: .ms(0.5))
        let holdover = ClockReport(state: .holdover, usable: true, server: "10.0.0.9:6000", errorBound: .ms(0.6))
            .lineage
        XCTAssertNil(holdover.source, "a node in holdover follows no source")
        let master = ClockLineage(source: "10.0.0.1:6000", relaying: nil, inheritedErrorBound: .zero)
        let cases: [(String, ClockLineage?)] = [
            ("went to holdover once", holdover), ("moved to another source", master),
            ("reported a bound without its lineage", nil),
            (
                "did not say what it inherited",
                ClockLineage(source: relay.source, relaying: nil, inheritedErrorBound: nil)
            ),
        ]
        for (what, other) in cases {
            var analyzer = try DriftAnalyzer(nodes: ["a", "b"])
            for node in ["a", "b"] { try analyzer.recordClockErrorBound(.ms(0.6), lineage: relay, for: node) }
            try analyzer.recordClockErrorBound(.ms(0.6), lineage: other, for: "b")
            XCTAssertEqual(
                analyzer.report().pairs[0].clockUncertainty, PairClockUncertainty(first: .ms(0.6), second: .ms(0.6)),
                "b \(what)")
        }
    }

    /// Each of `nodes` reports an estimated bound of `milliseconds`, and a guaranteed one of
    /// `guaranteed` (the same when nil: a path with no room for asymmetry).
    private func bound(
        _ analyzer: inout DriftAnalyzer, _ milliseconds: Double, _ nodes: [String], guaranteed: Double? = nil
    ) throws {
        for node in nodes {
            try analyzer.recordClockErrorBound(.ms(milliseconds), for: node)
            try analyzer.recordGuaranteedClockErrorBound(.ms(guaranteed ?? milliseconds), for: node)
        }
    }

    func testVerdict_whenPairExceedsThreshold_failsNamingPairNodeAndExcess() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["c": { _ in 1_700_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertFalse(verdict.passed)
        XCTAssertEqual(verdict.outcome, .fail, "without bounds, over the threshold whatever the clocks")
        XCTAssertEqual(verdict.worstNode, "c")
        XCTAssertEqual(verdict.worstPairP99, .ms(1.7))
        XCTAssertEqual(
            verdict.sentence,
            "FAIL: a–c differ by 1.700 ms at p99, 0.700 ms over the 1.000 ms threshold; c is furthest from the wall "
                + "(p99 |skew| 1.700 ms). Why: c presents its frames late by its own clock (p99 1.800 ms after they "
                + "were due): its machine or its sink cannot keep up (decoding, rendering, a busy CPU), not the sync; "
                + "the pair's clocks reported no error bound.")
    }

    /// The machine's measured frame cost, where the command asked for it, says whether decoding is
    /// what holds a late node back.
    func testVerdict_whenALateNodesFrameCostIsKnown_saysWhetherDecodingHoldsItBack() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["c": { _ in 1_700_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<100, to: &analyzer)
        let period = MediaTime(value: 1, timescale: 30)
        let heavy = FrameCostReport(media: "/m/clip.mp4", perFrame: .ms(27), framePeriod: period, frames: 45)
        XCTAssertTrue(
            analyzer.report(frameCosts: ["c": heavy]).verdict.sentence.contains(
                "due; decoding a frame and bringing it to its screen's size costs it 27.0 ms of the 33.3 ms frame "
                    + "period (81 %), measured after the run): its machine cannot keep up (decoding and scaling leave "
                    + "less than a third of the frame period), not the sync"),
            analyzer.report(frameCosts: ["c": heavy]).verdict.sentence)
        let light = FrameCostReport(media: "/m/clip.mp4", perFrame: .ms(4), framePeriod: period, frames: 45)
        let report = analyzer.report(frameCosts: ["c": light, "a": heavy])
        XCTAssertTrue(
            report.verdict.sentence.contains("12 %), measured after the run): its machine has the time to decode"),
            report.verdict.sentence)
        XCTAssertEqual(report.nodes.first { $0.node == "c" }?.frameCost, light, "in the report, for --json")
        let failed = FrameCostReport(media: "/m/clip.mp4", perFrame: nil, framePeriod: nil, frames: nil, problem: "x")
        XCTAssertEqual(
            analyzer.report(frameCosts: ["c": failed]).verdict.sentence, analyzer.report().verdict.sentence,
            "a cost that could not be measured says nothing")
    }

    /// A node on time by its own clock and still apart: what stands in the way is when it thinks
    /// frames are due (its clock, or its timeline), and the verdict says so rather than blaming the machine.
    func testVerdict_whenANodeIsOnTimeByItsOwnClock_blamesTheClocksNotTheMachine() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.clockError = ["c": 2_000_000]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try bound(&analyzer, 0.05, wall.nodes)
        try wall.feed(0..<100, to: &analyzer)
        let verdict = analyzer.report().verdict
        XCTAssertEqual(verdict.outcome, .fail)
        XCTAssertTrue(
            verdict.sentence.hasSuffix(
                "Why: c presents its frames on time by its own clock (p99 0.100 ms late), so it disagrees with the "
                    + "others about when frames are due: the clocks or the timeline, not the machine; the pair's "
                    + "clocks may be up to 0.100 ms apart."), verdict.sentence)
    }

    func testVerdict_whenOnlyOnePercentOfFramesAreOff_judgesByP99() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        // 1 frame in 100 is 5 ms off: p99 (rank 990 of 1000) still sees the on-time frames.
        wall.skew = ["c": { $0 % 100 == 0 ? 5_000_000 : 200_000 }]
        var analyzer = try DriftAnalyzer(
            nodes: wall.nodes, configuration: DriftAnalyzer.Configuration(threshold: .ms(0.5)))
        try bound(&analyzer, 0.02, wall.nodes)
        try wall.feed(0..<1_000, to: &analyzer)
        let report = analyzer.report()
        XCTAssertTrue(report.verdict.passed, report.verdict.sentence)
        XCTAssertEqual(report.pairs[1].skew.maximum, .ms(5))
        assertWithinPrecision(report.pairs[1].skew.p99, 200_000)
    }

    func testVerdict_whenNothingAligned_fails() throws {
        let analyzer = try DriftAnalyzer(nodes: ["a", "b"])
        let report = analyzer.report()
        XCTAssertFalse(report.verdict.passed)
        XCTAssertEqual(
            report.verdict.sentence, "FAIL: no frame was presented by every node, so there is nothing to judge.")
        XCTAssertEqual(report.nodes[0].skew, .empty)
    }

    // MARK: Series and memory

    func testSeries_whenRunOutgrowsMaxPoints_coarsensBuckets() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.frameInterval = 20_000_000
        wall.skew = ["c": { $0 % 2 == 0 ? 500_000 : -300_000 }]
        var analyzer = try DriftAnalyzer(
            nodes: wall.nodes, configuration: DriftAnalyzer.Configuration(maxSeriesPoints: 10))
        // 60 s at 50 fps: 1 s buckets would be 60, 8 s ones are 8.
        try wall.feed(0..<3_000, to: &analyzer)
        let series = analyzer.report().series
        XCTAssertEqual(series.bucketDuration, MediaTime(value: 8, timescale: 1))
        XCTAssertEqual(analyzer.seriesBucketCount, 8)
        let c = series.nodes[2].points
        XCTAssertEqual(c.map(\.time), (0..<8).map { MediaTime(value: 8 * Int64($0), timescale: 1) })
        XCTAssertEqual(c.map(\.frames), Array(repeating: 400, count: 7) + [200])
        XCTAssertEqual(c[0].meanSkew, .ms(0.1))
        XCTAssertEqual(c[0].minimumSkew, .ms(-0.3))
        XCTAssertEqual(c[0].maximumSkew, .ms(0.5))
        XCTAssertEqual(c[0].maximumMagnitude, .ms(0.5))
        XCTAssertEqual(series.nodes[0].points[3].maximumMagnitude, .zero)
    }

    func testMemory_whenTwentyMinutesAt60fpsOnFourNodes_staysBounded() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c", "d"])
        wall.skew = ["b": { Int64($0 % 5) * 10_000 }]
        var analyzer = try DriftAnalyzer(
            nodes: wall.nodes, configuration: DriftAnalyzer.Configuration(maxSeriesPoints: 300))
        let frames = 20 * 60 * 60
        var largestPending = 0
        var aligned = 0
        for start in stride(from: 0, to: frames, by: 600) {
            // d lags one poll behind the others.
            for node in ["a", "b", "c"] {
                aligned += try analyzer.ingest(wall.records(node, start..<start + 600), from: node).count
            }
            if start > 0 {
                aligned += try analyzer.ingest(wall.records("d", start - 600..<start), from: "d").count
            }
            largestPending = max(largestPending, analyzer.pendingFrameCount)
            XCTAssertLessThanOrEqual(analyzer.seriesBucketCount, 300)
        }
        aligned += try analyzer.ingest(wall.records("d", frames - 600..<frames), from: "d").count
        let report = analyzer.report()
        XCTAssertEqual(aligned, frames)
        XCTAssertEqual(report.framesAligned, frames)
        XCTAssertEqual(largestPending, 600, "only the frames d has not delivered yet are held")
        // 1200 s in at most 300 points: 1 s buckets doubled twice.
        XCTAssertEqual(report.series.bucketDuration, MediaTime(value: 4, timescale: 1))
        XCTAssertEqual(report.series.nodes.map(\.points.count), [300, 300, 300, 300])
        XCTAssertEqual(report.nodes[1].skew.maximum, .ms(0.04))
    }

    // MARK: Errors

    func testInit_whenNodeListOrSettingsAreWrong_throwsSentences() {
        XCTAssertThrowsError(try DriftAnalyzer(nodes: ["solo"])) { error in
            XCTAssertEqual(
                "\(error)", "drift analysis needs at least two nodes to compare, but the wall lists 1")
        }
        XCTAssertThrowsError(try DriftAnalyzer(nodes: ["a", "b", "a"])) { error in
            XCTAssertEqual(error as? AnalysisError, .duplicateNode("a"))
        }
        XCTAssertThrowsError(
            try DriftAnalyzer(nodes: ["a", "b"], configuration: DriftAnalyzer.Configuration(settleWindow: .zero))
        ) { error in
            XCTAssertEqual("\(error)", "the settle window must be a positive time, but it is 0.000000000s")
        }
        XCTAssertThrowsError(
            try DriftAnalyzer(nodes: ["a", "b"], configuration: DriftAnalyzer.Configuration(maxSeriesPoints: 0))
        ) { error in
            XCTAssertEqual("\(error)", "the series' maximum points must be at least 1, but it is 0")
        }
    }

    func testIngest_whenNodeUnknown_throwsNamingTheNodes() throws {
        var analyzer = try DriftAnalyzer(nodes: ["a", "b"])
        XCTAssertThrowsError(try analyzer.ingest([FrameRecord](), from: "z")) { error in
            XCTAssertEqual("\(error)", "node \"z\" is not part of this analysis (its nodes are a, b)")
        }
        XCTAssertThrowsError(try analyzer.recordClockErrorBound(.indefinite, for: "a")) { error in
            XCTAssertEqual(
                "\(error)", "the clock error bound of node \"a\" must be a finite time, but it is indefinite")
        }
    }

    // MARK: JSON

    func testReport_roundTripsThroughJSON() throws {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["a": { Int64($0 % 3) * 123_457 }]
        wall.dropped = ["b": [7]]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<200, to: &analyzer)
        try analyzer.recordCounters(late: 1, dropped: 2, for: "c")
        analyzer.finish()
        let report = analyzer.report()
        let data = try report.jsonData()
        XCTAssertEqual(try JSONDecoder().decode(DriftReport.self, from: data), report)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.contains(#""framesAligned" : 199"#), text)
    }

    func testDriftReports_nestTheReportUnderDrift_andLeaveOutAnUnmeasuredGroundTruth() throws {
        let wall = SyntheticWall(nodes: ["a", "b"])
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        _ = try wall.feed(0..<20, to: &analyzer)
        analyzer.finish()
        let report = analyzer.report()
        let data = try DriftReports(drift: report, groundTruth: nil).jsonData()
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["drift"])
        let nested = try JSONSerialization.data(withJSONObject: try XCTUnwrap(object["drift"]))
        XCTAssertEqual(try JSONDecoder().decode(DriftReport.self, from: nested), report)
    }
}
