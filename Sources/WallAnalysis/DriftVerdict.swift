import LockstepTime
import WallProtocol

/// Whether the wall stayed in sync, judged on the worst pair's p99 skew with what the nodes' clocks
/// may be off by added: the report never claims more than it knows. A PASS rests on the bounds that
/// hold whatever a path's asymmetry (the guaranteed ones); within the threshold by the estimated
/// bounds alone, which assume symmetric paths, is UNCERTAIN and says so.
///
/// The skew the nodes report is measured against each node's own estimate of the master clock, so
/// it cannot see the error of those estimates: two nodes whose clocks are 0.4 ms apart present
/// "in step" 0.4 ms apart. Each node bounds its own clock's error; while a frame is shown, a pair's
/// clocks are at most the sum of the two nodes' bounds of then apart (the larger of each node's
/// last two reports), less any error the two share because they follow one source
/// (`PairClockUncertainty`). So each frame's true skew lies within its measured skew plus or minus
/// that, and a pair is within the threshold only when the p99 of its frames' skews with their
/// uncertainty added is, and over it only when the p99 with it taken away still is. Otherwise the
/// report cannot tell, and says so: UNCERTAIN, naming the bounds that stand in the way. Ground truth
/// (`--ground-truth`) settles it. Each frame's own uncertainty, rather than the run's largest, so
/// that a path's worst minute does not make ten good ones unconfirmable.
///
/// The p99 of the worst pair, rather than the mean or the wall's spread, because a viewer sees the
/// seam between two neighbouring screens, and an occasional frame out of step there is what shows.
public struct DriftVerdict: Sendable, Hashable, Codable {
    public enum Outcome: String, Sendable, Hashable, Codable {
        case pass = "PASS"
        case fail = "FAIL"
        case uncertain = "UNCERTAIN"
    }

    public var outcome: Outcome
    /// True only for PASS.
    public var passed: Bool
    @NanosecondsCoded public var threshold: MediaTime
    /// The pair the verdict is about: the worst with its uncertainty added (PASS, UNCERTAIN), or
    /// the one furthest over the threshold (FAIL); nil when no frame was aligned.
    public var worstPair: NodePair?
    @OptionalNanosecondsCoded public var worstPairP99: MediaTime?
    /// How far apart that pair's clocks may have been at most (`PairDrift.clockUncertainty`); nil
    /// when a node of the pair reported no error bound.
    @OptionalNanosecondsCoded public var worstPairClockUncertainty: MediaTime?
    /// Of the worst pair, the node further from the wall (larger p99 |skew|): the one to look at.
    public var worstNode: String?
    /// The verdict as a sentence, starting with PASS, FAIL or UNCERTAIN.
    public var sentence: String

    enum CodingKeys: String, CodingKey {
        case outcome, passed, worstPair, worstNode, sentence
        case threshold = "thresholdNs", worstPairP99 = "worstPairP99Ns", worstPairClockUncertainty =
            "worstPairClockUncertaintyNs"
    }

    public init(
        outcome: Outcome, threshold: MediaTime, worstPair: NodePair?, worstPairP99: MediaTime?,
        worstPairClockUncertainty: MediaTime?, worstNode: String?, sentence: String
    ) {
        self.outcome = outcome
        self.passed = outcome == .pass
        self.threshold = threshold
        self.worstPair = worstPair
        self.worstPairP99 = worstPairP99
        self.worstPairClockUncertainty = worstPairClockUncertainty
        self.worstNode = worstNode
        self.sentence = sentence
    }

    /// Why a node is far from the wall, as far as its records tell: a node that presents its frames
    /// late by its own clock is held back by its machine or sink (decoding, rendering, a busy CPU);
    /// one that presents them on time by its own clock and is still apart from the others disagrees
    /// with them about when frames are due, which is the clocks or the timeline, not the machine.
    static func cause(of node: NodeDrift, clocks: MediaTime?, threshold: MediaTime) -> String {
        let late = node.lateness.p99
        var share = ""
        if let lateFrames = node.lateFrames, node.framesPresented > 0 {
            let percent = Double(lateFrames) / Double(node.framesPresented) * 100
            share = ", \((percent * 10).rounded() / 10) % of them counted late by its sink"
        }
        let clockText =
            clocks.map { "the pair's clocks may be up to \($0.millisecondsText) ms apart" }
            ?? "the pair's clocks reported no error bound"
        // What its machine measured a frame to cost, against the frame period, where it was asked.
        let cost = node.frameCost.flatMap { cost -> String? in
            guard cost.perFrame != nil else { return nil }
            return "; decoding a frame and bringing it to its screen's size costs it \(cost.sentence), measured after "
                + "the run"
        }
        if late * 2 > threshold {
            let machine =
                node.frameCost?.share.map { $0 > FrameCostReport.warningShare }.map {
                    $0
                        ? "its machine cannot keep up (decoding and scaling leave less than a third of the frame period)"
                        : "its machine has the time to decode (the sink, rendering or a busy moment holds it back)"
                } ?? "its machine or its sink cannot keep up (decoding, rendering, a busy CPU)"
            return "Why: \(node.node) presents its frames late by its own clock (p99 \(late.millisecondsText) ms after "
                + "they were due\(share)\(cost ?? "")): \(machine), not the sync; \(clockText)."
        }
        return "Why: \(node.node) presents its frames on time by its own clock (p99 \(late.millisecondsText) ms late"
            + "\(share)\(cost ?? "")), so it disagrees with the others about when frames are due: the clocks or the timeline, "
            + "not the machine; \(clockText)."
    }

    /// Judges the per-pair and per-node statistics of a run against `threshold`.
    static func judge(nodes: [NodeDrift], pairs: [PairDrift], threshold: MediaTime) -> DriftVerdict {
        let limit = threshold.millisecondsText
        let judged = pairs.filter { !$0.skew.isEmpty }
        guard !judged.isEmpty else {
            return DriftVerdict(
                outcome: .fail, threshold: threshold, worstPair: nil, worstPairP99: nil,
                worstPairClockUncertainty: nil, worstNode: nil,
                sentence: "FAIL: no frame was presented by every node, so there is nothing to judge.")
        }
        let bound = { (id: String) in nodes.first { $0.node == id }?.clockErrorBound?.maximum }
        let skewOf = { (id: String) in nodes.first { $0.node == id }?.skew.p99 ?? .zero }
        let furthest = { (pair: NodePair) in skewOf(pair.second) > skewOf(pair.first) ? pair.second : pair.first }
        /// A verdict on `pair`, naming what its clocks may have been apart by the bounds it rests on.
        func verdict(_ outcome: Outcome, _ pair: PairDrift, _ sentence: String, guaranteed: Bool = false)
            -> DriftVerdict
        {
            DriftVerdict(
                outcome: outcome, threshold: threshold, worstPair: pair.pair, worstPairP99: pair.skew.p99,
                worstPairClockUncertainty: (guaranteed ? pair.guaranteedClockUncertainty : pair.clockUncertainty)?.total,
                worstNode: furthest(pair.pair), sentence: sentence)
        }

        // Over the threshold whatever the clocks: FAIL. Each frame's true skew is at least its
        // measured skew less what the clocks may have been apart then, by the guaranteed bounds
        // where the nodes give them (an asymmetric path could put the clocks that far apart).
        let lowest = { (pair: PairDrift) in
            pair.skewWithGuaranteedClockUncertainty?.lower.p99 ?? pair.skewWithClockUncertainty?.lower.p99
                ?? pair.skew.p99
        }
        if let over = judged.max(by: { lowest($0) < lowest($1) }), lowest(over) > threshold {
            let p99 = over.skew.p99
            let node = furthest(over.pair)
            let least = lowest(over)
            if p99 <= threshold || least > p99 {
                // Their measurement of each other puts them further apart than their own clocks do:
                // it says which way and by how much, and it is the clocks' part. Only where their own
                // clocks put them over as well is the machine named too.
                var sentence =
                    "FAIL: \(over.pair) differ by \(p99.millisecondsText) ms at p99 by their own clocks, but their "
                    + "clocks, measured against each other directly, are apart: on the glass they differ by at least "
                    + "\(least.millisecondsText) ms at p99, \((least - threshold).millisecondsText) ms over the \(limit) ms "
                    + "threshold. Why: their paths to the master differ in asymmetry (one slower towards it than back, "
                    + "or the other way), which no node can see of its own path; give them paths alike, or a "
                    + "clock on their side of the network (a relay, or PTP)."
                if p99 > threshold, let drift = nodes.first(where: { $0.node == node }) {
                    sentence +=
                        " By their own clocks alone they are \((p99 - threshold).millisecondsText) ms over too, and "
                        + "\(node) is furthest from the wall. "
                        + Self.cause(of: drift, clocks: over.clockUncertainty?.total, threshold: threshold)
                }
                return verdict(.fail, over, sentence, guaranteed: over.skewWithGuaranteedClockUncertainty != nil)
            }
            var sentence =
                "FAIL: \(over.pair) differ by \(p99.millisecondsText) ms at p99, "
                + "\((p99 - threshold).millisecondsText) ms over the \(limit) ms threshold"
            if let clocks = (over.guaranteedClockUncertainty ?? over.clockUncertainty)?.total, clocks > .zero {
                sentence += " (more than their clocks' uncertainty, up to \(clocks.millisecondsText) ms, explains)"
            }
            sentence += "; \(node) is furthest from the wall (p99 |skew| \(skewOf(node).millisecondsText) ms)."
            if let drift = nodes.first(where: { $0.node == node }) {
                sentence += " " + Self.cause(of: drift, clocks: over.clockUncertainty?.total, threshold: threshold)
            }
            return verdict(.fail, over, sentence, guaranteed: over.skewWithGuaranteedClockUncertainty != nil)
        }
        // A pair whose clocks' error is unknown for some of its frames cannot be vouched for.
        if let unknown = judged.first(where: { $0.skewWithClockUncertainty == nil }) {
            let silent = [unknown.pair.first, unknown.pair.second].filter { bound($0) == nil }
            let who =
                silent.isEmpty
                ? "the first of their frames came before both reported a clock error bound"
                : "\(silent.joined(separator: " and ")) reported no clock error bound"
            return verdict(
                .uncertain, unknown,
                "UNCERTAIN: \(unknown.pair) differ by \(unknown.skew.p99.millisecondsText) ms at p99 by their own "
                    + "clocks, but \(who), so how far apart their clocks are is unknown; measure with --ground-truth.")
        }
        let highest = { (pair: PairDrift) in pair.skewWithClockUncertainty?.upper.p99 ?? .positiveInfinity }
        let worst = judged.max { highest($0) < highest($1) }!
        let reach = highest(worst)
        guard reach <= threshold else {
            return verdict(
                .uncertain, worst,
                "UNCERTAIN: \(worst.pair) differ by \(worst.skew.p99.millisecondsText) ms at p99 by their own "
                    + "clocks, but with what their clocks may be apart added to each frame they reach "
                    + "\(reach.millisecondsText) ms\(worst.clockUncertainty.map { " (\($0.sentence))" } ?? ""), so the "
                    + "\(limit) ms threshold cannot be confirmed; "
                    + "measure with --ground-truth, or give the clocks a quieter path to the master.")
        }
        // Within it on symmetric paths. A PASS also needs the bounds that hold on any path: two-way
        // time transfer cannot see a path's asymmetry, so the estimated bounds alone are a
        // statistic, not a bound.
        let guaranteedReach = { (pair: PairDrift) in
            pair.skewWithGuaranteedClockUncertainty?.upper.p99 ?? .positiveInfinity
        }
        let worstGuaranteed = judged.max { guaranteedReach($0) < guaranteedReach($1) }!
        let reachGuaranteed = guaranteedReach(worstGuaranteed)
        guard reachGuaranteed <= threshold else {
            let how =
                reachGuaranteed.isNumeric
                ? "with the bounds that hold whatever the paths' asymmetry (half each round trip) they reach "
                    + "\(reachGuaranteed.millisecondsText) ms"
                    + "\(worstGuaranteed.guaranteedClockUncertainty.map { " (\($0.sentence))" } ?? "")"
                : "a node reported no bound that holds whatever its path's asymmetry"
            return verdict(
                .uncertain, worstGuaranteed,
                "UNCERTAIN: every pair stays within the \(limit) ms threshold at p99 if the paths to the master are "
                    + "symmetric (the worst, \(worst.pair), reaches \(reach.millisecondsText) ms with its clocks' "
                    + "estimated bounds added), but an asymmetric path is what two-way time transfer cannot see: "
                    + "\(how), so the threshold cannot be confirmed; measure with --ground-truth, give the clocks "
                    + "a path with shorter round trips\(worstGuaranteed.guaranteedClockUncertainty?.measuredBetween == true ? "" : ", or let the screens measure each other's clocks (a serve-clock address on each node)").",
                guaranteed: true)
        }
        return verdict(
            .pass, worstGuaranteed,
            "PASS: every pair stays within the \(limit) ms threshold at p99 with its clocks' uncertainty added to "
                + "each frame, by bounds that hold whatever the paths' asymmetry; the worst, \(worstGuaranteed.pair), "
                + "reaches \(reachGuaranteed.millisecondsText) ms (\(worstGuaranteed.skew.p99.millisecondsText) ms by "
                + "their own clocks\(worstGuaranteed.guaranteedClockUncertainty.map { "; \($0.sentence)" } ?? "")).",
            guaranteed: true)
    }
}
