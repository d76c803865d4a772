import LockstepTime

extension GroundTruthReport {
    /// One line for the end of `wallctl drift`'s output: what ground truth says, and whether it
    /// confirms the nodes' report.
    public var summaryLine: String {
        guard let skew = verdict.worstPairP99, let agreement = verdict.disagreementP99 else {
            return "ground truth: no frame matched on every node → NOT CONFIRMED"
        }
        return "ground truth: p99 skew \(skew.millisecondsText) ms, nodes' report agrees within "
            + "\(agreement.millisecondsText) ms at p99 → \(verdict.confirmed ? "CONFIRMED" : "NOT CONFIRMED")"
    }

    /// Per pair, ground truth's skew and its disagreement with the report, then the summary line
    /// and the verdict's sentence.
    public func table() -> String {
        var table = TextTable(
            "pair", "truth p50", "truth p99", "truth max", "disagree p50", "disagree p99", "disagree max")
        let columns = { (truth: TimeStatistics, disagreement: TimeStatistics) in
            [truth.p50, truth.p99, truth.maximum, disagreement.p50, disagreement.p99, disagreement.maximum].map {
                truth.isEmpty ? "-" : $0.millisecondsText
            }
        }
        for pair in pairs {
            table.add([pair.pair.description] + columns(pair.truthSkew, pair.disagreement))
        }
        table.add(["wall spread"] + columns(spread, spread).prefix(3) + ["", "", ""])
        table.add(["all pairs"] + ["", "", ""] + columns(disagreement, disagreement).suffix(3))
        let unmatched = nodes.filter { $0.unmatchedFrames > 0 }.map { "\($0.node) \($0.unmatchedFrames)" }
        return [
            "ground truth: \(framesMatched) frames matched on every node, \(framesUnmatched) not"
                + (unmatched.isEmpty ? "" : " (unmatched per node: \(unmatched.joined(separator: ", ")))")
                + "; times in ms",
            table.rendered,
            summaryLine,
            verdict.sentence,
        ]
        .joined(separator: "\n")
    }
}
