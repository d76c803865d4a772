import LockstepTime

/// How the wall's sync looks from outside, and whether the nodes' own report can be believed:
/// what `GroundTruthComparison` reports.
public struct GroundTruthReport: Sendable, Hashable, Codable {
    /// Frames found in the nodes' report and in ground truth on every node.
    public var framesMatched: Int
    /// Frames of the nodes' report that ground truth lacks on some node.
    public var framesUnmatched: Int
    /// Per node, in the wall's order.
    public var nodes: [GroundTruthNode]
    /// Per pair of nodes, in the wall's order.
    public var pairs: [GroundTruthPair]
    /// The wall's spread by ground truth: the last arrival of a frame minus the first.
    public var spread: TimeStatistics
    /// |reported − truth| over every pair of every matched frame.
    public var disagreement: TimeStatistics
    public var verdict: GroundTruthVerdict

    public init(
        framesMatched: Int, framesUnmatched: Int, nodes: [GroundTruthNode], pairs: [GroundTruthPair],
        spread: TimeStatistics, disagreement: TimeStatistics, verdict: GroundTruthVerdict
    ) {
        self.framesMatched = framesMatched
        self.framesUnmatched = framesUnmatched
        self.nodes = nodes
        self.pairs = pairs
        self.spread = spread
        self.disagreement = disagreement
        self.verdict = verdict
    }
}

/// One node's part of a `GroundTruthReport`: how well its two streams could be matched.
public struct GroundTruthNode: Sendable, Hashable, Codable {
    public var node: String
    /// Frames the receiver got from the node.
    public var arrivals: Int
    /// Frames of the nodes' report for which no arrival from this node was found.
    public var unmatchedFrames: Int
    /// Arrivals no reported frame claimed (before the report started, or lost from it).
    public var unmatchedArrivals: Int

    public init(node: String, arrivals: Int, unmatchedFrames: Int, unmatchedArrivals: Int) {
        self.node = node
        self.arrivals = arrivals
        self.unmatchedFrames = unmatchedFrames
        self.unmatchedArrivals = unmatchedArrivals
    }
}

/// One pair's part of a `GroundTruthReport`.
public struct GroundTruthPair: Sendable, Hashable, Codable {
    public var pair: NodePair
    /// |arrivedAt_first − arrivedAt_second|: the skew a camera would have seen.
    public var truthSkew: TimeStatistics
    /// |(presentedAt_first − presentedAt_second) − (arrivedAt_first − arrivedAt_second)|.
    public var disagreement: TimeStatistics

    public init(pair: NodePair, truthSkew: TimeStatistics, disagreement: TimeStatistics) {
        self.pair = pair
        self.truthSkew = truthSkew
        self.disagreement = disagreement
    }
}

/// Two checks: the wall is in sync by ground truth, and the nodes' report agrees with ground truth
/// (so `wallctl drift` can be trusted where there is no ground truth).
public struct GroundTruthVerdict: Sendable, Hashable, Codable {
    /// Both checks pass.
    public var confirmed: Bool
    /// Ground truth's worst-pair p99 skew is within `skewThreshold`.
    public var skewWithinThreshold: Bool
    /// The p99 disagreement is within `agreementThreshold`.
    public var agreementWithinThreshold: Bool
    @NanosecondsCoded public var skewThreshold: MediaTime
    @NanosecondsCoded public var agreementThreshold: MediaTime
    /// The pair with the largest ground-truth p99 skew; nil when no frame was matched.
    public var worstPair: NodePair?
    @OptionalNanosecondsCoded public var worstPairP99: MediaTime?
    @OptionalNanosecondsCoded public var disagreementP99: MediaTime?
    /// The verdict as a sentence, starting with CONFIRMED or NOT CONFIRMED.
    public var sentence: String

    enum CodingKeys: String, CodingKey {
        case confirmed, skewWithinThreshold, agreementWithinThreshold, worstPair, sentence
        case skewThreshold = "skewThresholdNs", agreementThreshold = "agreementThresholdNs", worstPairP99 = "worstPairP99Ns", disagreementP99 = "disagreementP99Ns"
    }

    public init(
        confirmed: Bool, skewWithinThreshold: Bool, agreementWithinThreshold: Bool, skewThreshold: MediaTime,
        agreementThreshold: MediaTime, worstPair: NodePair?, worstPairP99: MediaTime?, disagreementP99: MediaTime?,
        sentence: String
    ) {
        self.confirmed = confirmed
        self.skewWithinThreshold = skewWithinThreshold
        self.agreementWithinThreshold = agreementWithinThreshold
        self.skewThreshold = skewThreshold
        self.agreementThreshold = agreementThreshold
        self.worstPair = worstPair
        self.worstPairP99 = worstPairP99
        self.disagreementP99 = disagreementP99
        self.sentence = sentence
    }

    static func judge(
        pairs: [GroundTruthPair], disagreement: TimeStatistics, skewThreshold: MediaTime,
        agreementThreshold: MediaTime
    ) -> GroundTruthVerdict {
        guard let worst = pairs.filter({ !$0.truthSkew.isEmpty }).max(by: { $0.truthSkew.p99 < $1.truthSkew.p99 })
        else {
            return GroundTruthVerdict(
                confirmed: false, skewWithinThreshold: false, agreementWithinThreshold: false,
                skewThreshold: skewThreshold, agreementThreshold: agreementThreshold, worstPair: nil,
                worstPairP99: nil, disagreementP99: nil,
                sentence:
                    "NOT CONFIRMED: no frame was found in ground truth on every node, so there is nothing to check.")
        }
        let skew = worst.truthSkew.p99
        let agreement = disagreement.p99
        let skewPasses = skew <= skewThreshold
        let agreementPasses = agreement <= agreementThreshold
        let skewClause =
            skewPasses
            ? "by ground truth the worst pair, \(worst.pair), is \(skew.millisecondsText) ms apart at p99 "
                + "(limit \(skewThreshold.millisecondsText) ms)"
            : "by ground truth \(worst.pair) are \(skew.millisecondsText) ms apart at p99, over the "
                + "\(skewThreshold.millisecondsText) ms limit"
        let agreementClause =
            agreementPasses
            ? "the nodes' own report agrees within \(agreement.millisecondsText) ms at p99 "
                + "(limit \(agreementThreshold.millisecondsText) ms)"
            : "the nodes' own report is off by \(agreement.millisecondsText) ms at p99, over the "
                + "\(agreementThreshold.millisecondsText) ms limit"
        let confirmed = skewPasses && agreementPasses
        return GroundTruthVerdict(
            confirmed: confirmed, skewWithinThreshold: skewPasses, agreementWithinThreshold: agreementPasses,
            skewThreshold: skewThreshold, agreementThreshold: agreementThreshold, worstPair: worst.pair,
            worstPairP99: skew, disagreementP99: agreement,
            sentence: "\(confirmed ? "CONFIRMED" : "NOT CONFIRMED"): \(skewClause), and \(agreementClause).")
    }
}
