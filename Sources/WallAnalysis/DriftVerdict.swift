import LockstepTime

/// Whether the wall stayed in sync: pass when the worst pair's p99 skew is within the threshold.
///
/// The p99 of the worst pair, rather than the mean or the wall's spread, because a viewer sees the
/// seam between two neighbouring screens, and an occasional frame out of step there is what shows.
public struct DriftVerdict: Sendable, Hashable, Codable {
    public var passed: Bool
    public var threshold: MediaTime
    /// The pair with the largest p99 skew; nil when no frame was aligned.
    public var worstPair: NodePair?
    public var worstPairP99: MediaTime?
    /// Of the worst pair, the node further from the wall (larger p99 |skew|): the one to look at.
    public var worstNode: String?
    /// The verdict as a sentence, starting with PASS or FAIL.
    public var sentence: String

    public init(
        passed: Bool, threshold: MediaTime, worstPair: NodePair?, worstPairP99: MediaTime?, worstNode: String?,
        sentence: String
    ) {
        self.passed = passed
        self.threshold = threshold
        self.worstPair = worstPair
        self.worstPairP99 = worstPairP99
        self.worstNode = worstNode
        self.sentence = sentence
    }

    /// Judges the per-pair and per-node statistics of a run against `threshold`.
    static func judge(nodes: [NodeDrift], pairs: [PairDrift], threshold: MediaTime) -> DriftVerdict {
        let limit = threshold.millisecondsText
        guard let worst = pairs.filter({ !$0.skew.isEmpty }).max(by: { $0.skew.p99 < $1.skew.p99 }) else {
            return DriftVerdict(
                passed: false, threshold: threshold, worstPair: nil, worstPairP99: nil, worstNode: nil,
                sentence: "FAIL: no frame was presented by every node, so there is nothing to judge.")
        }
        let skewOf = { (id: String) in nodes.first { $0.node == id }?.skew.p99 ?? .zero }
        let node = skewOf(worst.pair.second) > skewOf(worst.pair.first) ? worst.pair.second : worst.pair.first
        let p99 = worst.skew.p99
        let passed = p99 <= threshold
        let sentence =
            passed
            ? "PASS: every pair stays within the \(limit) ms threshold at p99; the worst, \(worst.pair), "
                + "reaches \(p99.millisecondsText) ms."
            : "FAIL: \(worst.pair) differ by \(p99.millisecondsText) ms at p99, "
                + "\((p99 - threshold).millisecondsText) ms over the \(limit) ms threshold; \(node) is furthest "
                + "from the wall (p99 |skew| \(skewOf(node).millisecondsText) ms)."
        return DriftVerdict(
            passed: passed, threshold: threshold, worstPair: worst.pair, worstPairP99: p99, worstNode: node,
            sentence: sentence)
    }
}
