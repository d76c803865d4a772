import LockstepTime

extension DriftReport {
    /// The report as `wallctl drift` prints it: skew per node and per pair, each node's health,
    /// and the verdict, in milliseconds with three decimals.
    public func table() -> String {
        var skew = TextTable("node", "mean", "p50", "p95", "p99", "max", "signed mean")
        for node in nodes {
            skew.add([node.node] + node.skew.millisecondColumns + [signed(node.meanSignedSkew, node.skew)])
        }
        var pairTable = TextTable("pair", "mean", "p50", "p95", "p99", "max", "signed mean")
        for pair in pairs {
            pairTable.add(
                [pair.pair.description] + pair.skew.millisecondColumns + [signed(pair.meanSignedSkew, pair.skew)])
        }
        pairTable.add(["wall spread"] + spread.millisecondColumns + [""])
        var health = TextTable(
            "node", "frames", "late p50", "late p99", "late max", "bound max", "bound last", "guaranteed max",
            "late", "dropped", "missing", "undelivered", "ignored")
        for node in nodes {
            let lateness =
                node.lateness.isEmpty
                ? ["-", "-", "-"]
                : [node.lateness.p50, node.lateness.p99, node.lateness.maximum].map(\.millisecondsText)
            let bound =
                (node.clockErrorBound.map { [$0.maximum.millisecondsText, $0.last.millisecondsText] } ?? ["-", "-"])
                + [node.guaranteedClockErrorBound?.maximum.millisecondsText ?? "-"]
            health.add(
                [node.node, String(node.framesPresented)] + lateness + bound + [
                    node.lateFrames.map(String.init) ?? "-", node.droppedFrames.map(String.init) ?? "-",
                    String(node.missingFrames), String(node.undeliveredRecords),
                    String(node.ignoredRecords + node.unusableRecords),
                ])
        }
        let covered = "\(framesAligned) frames aligned over \(duration.secondsText) s of running time"
        let incomplete = framesIncomplete > 0 ? ", \(framesIncomplete) incomplete" : ""
        return [
            "drift: \(covered)\(incomplete); skew is to the wall's median, in ms",
            "",
            skew.rendered,
            "",
            pairTable.rendered,
            "",
            "node health (lateness and clock error bounds in ms: the estimated bound assumes the path to the master "
                + "symmetric, the guaranteed one does not; late and dropped from the nodes' counters)",
            health.rendered,
            "",
            verdict.sentence,
        ]
        .joined(separator: "\n")
    }

    private func signed(_ mean: MediaTime, _ statistics: TimeStatistics) -> String {
        guard !statistics.isEmpty else { return "-" }
        let text = mean.millisecondsText
        return text.hasPrefix("-") ? text : "+" + text
    }
}
