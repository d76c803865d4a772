import LockstepTime
import WallProtocol

/// Aligns the frames the wall's nodes report presenting and measures how far apart they were:
/// the statistics behind `wallctl drift`.
///
/// Feed it each node's `FrameRecord`s as they are polled, in any interleaving and with lag between
/// nodes (up to `maxPendingFrames` frames). The same frame has the same wall time on every node (the
/// master time it is due to leave the screen), so records are joined by it, to within half a
/// millisecond (frames are at least 8 ms apart); records from nodes that do not report a wall time
/// are joined by running time, which is the same on nodes that share a base time. Below, "running
/// time" is whichever of the two the records carry. A frame is aligned once every node has presented it. A frame
/// that some node never presents is given up on once it falls `settleWindow` of running time
/// behind the newest aligned frame, and counts as missing for that node if it lies between the
/// node's first and last record (before or after them, it was simply not polled).
///
/// For each aligned frame the wall's reference is the **median** of the nodes' `presentedAt`,
/// not the mean: a single late node then shows the whole lateness as its own skew while the others
/// stay at zero, so the report points at the node to fix instead of smearing its error over all of
/// them. (With two nodes the median is their midpoint.) A node's skew is its `presentedAt` minus
/// the reference; a pair's skew is `|a - b|`; the wall's spread is the latest minus the earliest.
///
/// Memory stays flat however long the run: statistics live in histograms and bounded per-bucket
/// aggregates, and only frames still waiting for a node are held (at most `maxPendingFrames`).
/// One analyzer covers one playback: a node's running time and record sequence must only grow,
/// and anything that goes backwards is ignored as a duplicate; a node that restarts says so
/// (`restart(_:)`), its sequence starting over.
public struct DriftAnalyzer: Sendable {
    /// Settings of an analysis; the defaults suit `wallctl drift`.
    public struct Configuration: Sendable, Hashable {
        /// The verdict passes when the worst pair's p99 skew is at most this.
        public var threshold: MediaTime
        /// How far behind the newest aligned frame a frame that some node has not presented is
        /// given up on: longer than any hiccup after which a node still delivers a frame in order.
        public var settleWindow: MediaTime
        /// The running time each point of the time series covers, before coarsening.
        public var bucketDuration: MediaTime
        /// The most points the time series keeps per node; past it, buckets double in duration.
        public var maxSeriesPoints: Int
        /// The most frames held waiting for nodes (a node that stops delivering would otherwise
        /// make them pile up); past it, the oldest is given up on.
        public var maxPendingFrames: Int

        public init(
            threshold: MediaTime = MediaTime(value: 1, timescale: 1_000),
            settleWindow: MediaTime = MediaTime(value: 2, timescale: 1),
            bucketDuration: MediaTime = MediaTime(value: 1, timescale: 1),
            maxSeriesPoints: Int = 4_000,
            maxPendingFrames: Int = 8_192
        ) {
            self.threshold = threshold
            self.settleWindow = settleWindow
            self.bucketDuration = bucketDuration
            self.maxSeriesPoints = maxSeriesPoints
            self.maxPendingFrames = maxPendingFrames
        }
    }

    /// Records whose running times differ by at most this are the same frame: well under half of
    /// the 8 ms between frames at 120 fps, well over the nanoseconds by which nodes' running times
    /// of one frame differ.
    static let matchTolerance: Int64 = 500_000

    /// The wall's nodes; per-node results come in this order.
    public var nodes: [String] { wall.ids }
    public let configuration: Configuration

    private let wall: WallNodes
    private let settleWindow: Int64
    private var nodeStates: [NodeState]
    private var pairStates: [PairState]
    private var spread = Distribution()
    private var series: SkewSeriesAccumulator
    /// Frames some nodes have presented, by running time in whole milliseconds.
    private var pending: [Int64: PendingFrame] = [:]
    /// The keys of `pending`, ascending, from `pendingHead` on; kept apart so the oldest frame is
    /// found without sorting.
    private var pendingKeys: [Int64] = []
    private var pendingHead = 0
    /// The running time of the newest frame given up on without every node: later records for it
    /// or anything older are stale.
    private var settledThrough: Int64?
    private var newestAligned: Int64?
    private var firstAligned: Int64?
    private var framesAligned = 0
    private var framesIncomplete = 0

    /// Sets up an analysis of a wall of `nodes` (at least two, ids unique).
    public init(nodes: [String], configuration: Configuration = Configuration()) throws(AnalysisError) {
        wall = try WallNodes(nodes)
        _ = try Setting.positive(configuration.threshold, "the drift threshold")
        settleWindow = try Setting.positive(configuration.settleWindow, "the settle window")
        let bucket = try Setting.positive(configuration.bucketDuration, "the series bucket duration")
        try Setting.positive(configuration.maxSeriesPoints, "the series' maximum points")
        try Setting.positive(configuration.maxPendingFrames, "the maximum pending frames")
        self.configuration = configuration
        nodeStates = Array(repeating: NodeState(), count: nodes.count)
        pairStates = Array(repeating: PairState(), count: wall.pairs.count)
        series = SkewSeriesAccumulator(
            nodeCount: nodes.count, bucketWidth: bucket, maxBuckets: configuration.maxSeriesPoints)
    }

    // MARK: Feeding

    /// Adds records polled from `node`, oldest first.
    ///
    /// - Parameters:
    ///   - records: the node's records, in its sequence order; repeats of records already seen are
    ///     ignored, so overlapping polls are harmless.
    ///   - missed: how many records the node said it could no longer deliver (`FramesReply.missed`).
    /// - Returns: the frames this call completed (every node has now presented them), oldest first,
    ///   for `GroundTruthComparison` or any other online consumer; the analyzer keeps none of them.
    @discardableResult
    public mutating func ingest(_ records: some Sequence<FrameRecord>, from node: String, missed: UInt64 = 0)
        throws(AnalysisError) -> [AlignedFrame]
    {
        let index = try wall.index(of: node)
        nodeStates[index].undeliveredRecords += missed
        var aligned: [AlignedFrame] = []
        for record in records {
            ingest(record, node: index, aligned: &aligned)
        }
        settle()
        return aligned
    }

    /// Node `node` started over (a restart): its record sequence counts from 1 again while its
    /// running time goes on, on the wall's timeline, so the analysis goes on with it. The frames it
    /// did not present meanwhile count as missing; the verdict it earned stays its own.
    public mutating func restart(_ node: String) throws(AnalysisError) {
        nodeStates[try wall.index(of: node)].lastSequence = nil
    }

    /// Adds a node's `GET /frames` reply: its records, how many it could not deliver, and its clock
    /// error bound.
    @discardableResult
    public mutating func ingest(_ reply: FramesReply) throws(AnalysisError) -> [AlignedFrame] {
        if let bound = reply.clockErrorBound {
            try recordClockErrorBound(bound, lineage: reply.clockLineage, for: reply.node)
        }
        if let guaranteed = reply.guaranteedClockErrorBound {
            try recordGuaranteedClockErrorBound(guaranteed, for: reply.node)
        }
        for peer in reply.peerClocks ?? [] {
            try recordPeerClock(peer, measuredBy: reply.node)
        }
        return try ingest(reply.records, from: reply.node, missed: reply.missed)
    }

    /// Notes a node's clock error bound, so the report can set skew against what the clock promised.
    ///
    /// With the bound's `lineage` (what the node followed when it reported it), the report can take
    /// out of a pair's uncertainty the error its two nodes share: a pair that followed one source
    /// all along shares what that source passed on, and a node that followed the other all along
    /// shares all of the other's error. Without it, the pair's clocks may be the sum of their bounds
    /// apart.
    public mutating func recordClockErrorBound(
        _ bound: MediaTime, lineage: ClockLineage? = nil, for node: String
    ) throws(AnalysisError) {
        let index = try wall.index(of: node)
        let nanoseconds = try Nanoseconds.of(bound, "the clock error bound of node \"\(node)\"")
        nodeStates[index].clock.note(bound: nanoseconds, lineage: lineage)
    }

    /// Notes a node's guaranteed clock error bound: the one that holds without assuming its path
    /// to the master symmetric (`ClockReport.guaranteedErrorBound`). A PASS rests on it.
    ///
    /// Two nodes' guaranteed bounds are added whole: what they share of a source's asymmetry is not
    /// known, so none of it is taken out.
    public mutating func recordGuaranteedClockErrorBound(_ bound: MediaTime, for node: String) throws(AnalysisError) {
        let index = try wall.index(of: node)
        let nanoseconds = try Nanoseconds.of(bound, "the guaranteed clock error bound of node \"\(node)\"")
        nodeStates[index].guaranteed.note(bound: nanoseconds, lineage: nil)
    }

    /// Notes how far another node's clock is from `node`'s, as `node` measured it directly
    /// (`PeerClockReport`): the pair's clocks are at most `pairBound` apart whatever their paths'
    /// asymmetry, so where that is smaller than their guaranteed bounds added, it is what a PASS
    /// rests on. A peer this analysis does not follow is passed over.
    public mutating func recordPeerClock(_ peer: PeerClockReport, measuredBy node: String) throws(AnalysisError) {
        let index = try wall.index(of: node)
        guard let other = try? wall.index(of: peer.node), let pair = wall.pairIndex(index, other) else { return }
        let what = "node \"\(node)\"'s measurement of node \"\(peer.node)\""
        let offset = try Nanoseconds.of(peer.offset, what)
        let bound = try Nanoseconds.of(peer.guaranteedErrorBound, what)
        guard offset.magnitude < UInt64(1) << 62, bound >= 0, bound < 1 << 62 else {
            throw .invalidMeasurement(what)
        }
        // The report gives the peer's clock less the measuring node's.
        let measuredByFirst = wall.pairs[pair].first == index
        pairStates[pair].peers.note(secondLessFirst: measuredByFirst ? offset : -offset, bound: bound)
    }

    /// Notes a node's own cumulative counters of late and dropped frames (`PlayerReport`).
    ///
    /// The report gives how much they rose from the first sample to the last (a counter that falls
    /// has restarted, and counts on from zero), so sample once when the analysis starts and then
    /// as often as convenient.
    public mutating func recordCounters(late: UInt64, dropped: UInt64, for node: String) throws(AnalysisError) {
        let index = try wall.index(of: node)
        nodeStates[index].late.sample(late)
        nodeStates[index].dropped.sample(dropped)
    }

    /// Notes a node's `GET /status`: its clock error bound and its late and dropped counters.
    public mutating func record(_ status: NodeStatus) throws(AnalysisError) {
        if let bound = status.clock.errorBound {
            try recordClockErrorBound(bound, lineage: status.clock.lineage, for: status.id)
        }
        if let guaranteed = status.clock.guaranteedErrorBound {
            try recordGuaranteedClockErrorBound(guaranteed, for: status.id)
        }
        for peer in status.clock.peers ?? [] {
            try recordPeerClock(peer, measuredBy: status.id)
        }
        try recordCounters(late: status.player.framesLate, dropped: status.player.framesDropped, for: status.id)
    }

    /// Gives up on every frame still waiting for a node, at the end of a run: those between a
    /// node's first and last record count as missing for it, the rest lie outside what was polled.
    public mutating func finish() {
        while let key = oldestPendingKey {
            finalizeIncomplete(key)
        }
    }

    /// Frames held because some node has not presented them yet.
    public var pendingFrameCount: Int { pending.count }

    /// Time-series buckets held, empty ones between data included: at most `maxSeriesPoints`.
    public var seriesBucketCount: Int { series.bucketCount }

    // MARK: Report

    /// The statistics of the frames finalized so far; call `finish()` first for a run's final report.
    ///
    /// - Parameter frameCosts: what a frame costs each node's machine, by node id, where measured:
    ///   a FAIL's reason names it.
    public func report(frameCosts: [String: FrameCostReport] = [:]) -> DriftReport {
        let nodeDrift = nodes.indices.map { index in
            let state = nodeStates[index]
            var drift = NodeDrift(
                node: nodes[index], framesPresented: state.framesPresented, skew: state.skew.statistics,
                meanSignedSkew: Self.mean(state.signedSkewSum, count: state.skew.count),
                lateness: state.lateness.statistics,
                clockErrorBound: state.clock.summary,
                guaranteedClockErrorBound: state.guaranteed.summary,
                lateFrames: state.late.increase, droppedFrames: state.dropped.increase,
                missingFrames: state.missingFrames, undeliveredRecords: state.undeliveredRecords,
                ignoredRecords: state.ignoredRecords, unusableRecords: state.unusableRecords)
            drift.frameCost = frameCosts[nodes[index]]
            return drift
        }
        let pairDrift = wall.pairs.indices.map { index in
            PairDrift(
                pair: wall.pairs[index].pair, skew: pairStates[index].skew.statistics,
                meanSignedSkew: Self.mean(pairStates[index].signedSum, count: pairStates[index].skew.count),
                clockUncertainty: pairStates[index].peers.tightening(
                    ClockLineageRecord.uncertainty(
                        nodeStates[wall.pairs[index].first].clock, nodeStates[wall.pairs[index].second].clock)),
                skewWithClockUncertainty: pairStates[index].withEstimated.adjusted,
                guaranteedClockUncertainty: pairStates[index].peers.tightening(
                    ClockLineageRecord.uncertainty(
                        nodeStates[wall.pairs[index].first].guaranteed, nodeStates[wall.pairs[index].second].guaranteed)
                ),
                skewWithGuaranteedClockUncertainty: pairStates[index].withGuaranteed.adjusted)
        }
        return DriftReport(
            firstRunningTime: firstAligned.map(MediaTime.init(nanoseconds:)),
            lastRunningTime: newestAligned.map(MediaTime.init(nanoseconds:)),
            duration: MediaTime(nanoseconds: (newestAligned ?? 0) - (firstAligned ?? 0)),
            framesAligned: framesAligned, framesIncomplete: framesIncomplete, nodes: nodeDrift, pairs: pairDrift,
            spread: spread.statistics,
            verdict: DriftVerdict.judge(nodes: nodeDrift, pairs: pairDrift, threshold: configuration.threshold),
            series: series.series(nodes: nodes))
    }

    // MARK: Alignment

    private mutating func ingest(_ record: FrameRecord, node: Int, aligned: inout [AlignedFrame]) {
        guard let runningTime = Nanoseconds.value(of: record.wallTime ?? record.runningTime),
            let presentedAt = Nanoseconds.value(of: record.presentedAt)
        else {
            nodeStates[node].unusableRecords += 1
            return
        }
        guard nodeStates[node].accept(sequence: record.sequence, runningTime: runningTime),
            runningTime > (settledThrough ?? .min) + Self.matchTolerance
        else {
            nodeStates[node].ignoredRecords += 1
            return
        }
        let key: Int64
        if let existing = pendingKey(near: runningTime) {
            guard pending[existing]!.presentedAt[node] == nil else {
                nodeStates[node].ignoredRecords += 1
                return
            }
            key = existing
        } else {
            key = Self.key(of: runningTime)
            // Another frame within a millisecond is not a frame of a wall (they are 8 ms apart or more).
            guard pending[key] == nil else {
                nodeStates[node].ignoredRecords += 1
                return
            }
            pending[key] = PendingFrame(
                runningTime: runningTime, presentationTimestamp: record.presentationTimestamp,
                presentedAt: Array(repeating: nil, count: nodes.count), presentCount: 0)
            insertPendingKey(key)
        }
        nodeStates[node].framesPresented += 1
        if let dueAt = Nanoseconds.value(of: record.dueAt) {
            nodeStates[node].lateness.record(presentedAt - dueAt)
        }
        pending[key]!.presentedAt[node] = presentedAt
        pending[key]!.presentCount += 1
        if pending[key]!.presentCount == nodes.count {
            aligned.append(complete(key))
        } else if pending.count > configuration.maxPendingFrames, let oldest = oldestPendingKey {
            finalizeIncomplete(oldest)
        }
    }

    /// The key of the pending frame within `matchTolerance` of `runningTime`: with keys in whole
    /// milliseconds and the tolerance half of one, it is this key or a neighbour.
    private func pendingKey(near runningTime: Int64) -> Int64? {
        let key = Self.key(of: runningTime)
        func matches(_ candidate: Int64) -> Bool {
            guard let frame = pending[candidate] else { return false }
            return abs(frame.runningTime - runningTime) <= Self.matchTolerance
        }
        if matches(key) { return key }
        if matches(key - 1) { return key - 1 }
        if matches(key + 1) { return key + 1 }
        return nil
    }

    /// A running time rounded to the nearest whole millisecond.
    private static func key(of runningTime: Int64) -> Int64 {
        Nanoseconds.flooredQuotient(runningTime + Nanoseconds.perMillisecond / 2, Nanoseconds.perMillisecond)
    }

    private var oldestPendingKey: Int64? {
        pendingHead < pendingKeys.count ? pendingKeys[pendingHead] : nil
    }

    private mutating func insertPendingKey(_ key: Int64) {
        // Frames mostly arrive in order, so the new key mostly goes last.
        var position = pendingKeys.count
        while position > pendingHead, pendingKeys[position - 1] > key { position -= 1 }
        pendingKeys.insert(key, at: position)
    }

    private mutating func removePendingKey(_ key: Int64) {
        pending[key] = nil
        if pendingKeys[pendingHead] == key {
            pendingHead += 1
        } else if let position = pendingKeys[pendingHead...].firstIndex(of: key) {
            pendingKeys.remove(at: position)
        }
        if pendingHead >= 1_024, pendingHead * 2 >= pendingKeys.count {
            pendingKeys.removeFirst(pendingHead)
            pendingHead = 0
        }
    }

    /// Gives up on frames `settleWindow` behind the newest aligned one.
    private mutating func settle() {
        guard let newest = newestAligned else { return }
        while let key = oldestPendingKey, pending[key]!.runningTime <= newest - settleWindow {
            finalizeIncomplete(key)
        }
    }

    private mutating func finalizeIncomplete(_ key: Int64) {
        let frame = pending[key]!
        removePendingKey(key)
        framesIncomplete += 1
        settledThrough = max(settledThrough ?? .min, frame.runningTime)
        for node in nodes.indices where frame.presentedAt[node] == nil && nodeStates[node].covers(frame.runningTime) {
            nodeStates[node].missingFrames += 1
        }
    }

    // MARK: Statistics

    private mutating func complete(_ key: Int64) -> AlignedFrame {
        let frame = pending[key]!
        removePendingKey(key)
        let presentedAt = frame.presentedAt.map { $0! }
        let sorted = presentedAt.sorted()
        let middle = sorted.count / 2
        // The lower middle plus half the gap, so the sum of two epoch-scale times never overflows.
        let median =
            sorted.count % 2 == 1
            ? sorted[middle] : sorted[middle - 1] + (sorted[middle] - sorted[middle - 1]) / 2
        let skews = presentedAt.map { $0 - median }
        for (node, skew) in skews.enumerated() {
            nodeStates[node].skew.record(Int64(skew.magnitude))
            nodeStates[node].signedSkewSum += Int128(skew)
        }
        for (index, pair) in wall.pairs.enumerated() {
            let difference = presentedAt[pair.first] - presentedAt[pair.second]
            let skew = Int64(difference.magnitude)
            pairStates[index].skew.record(skew)
            pairStates[index].signedSum += Int128(difference)
            // What the pair's clocks may be apart while this frame was shown, from the nodes' latest
            // bounds: the estimated ones and the guaranteed ones.
            // The pair's own measurement of each other, a bound whatever the asymmetry, serves both.
            let between = pairStates[index].peers.recent
            pairStates[index].withEstimated.record(
                difference,
                clocks: ClockLineageRecord.currentUncertainty(
                    nodeStates[pair.first].clock, nodeStates[pair.second].clock),
                between: between)
            pairStates[index].withGuaranteed.record(
                difference,
                clocks: ClockLineageRecord.currentUncertainty(
                    nodeStates[pair.first].guaranteed, nodeStates[pair.second].guaranteed),
                between: between)
        }
        spread.record(sorted[sorted.count - 1] - sorted[0])
        series.add(runningTime: frame.runningTime, skews: skews)
        framesAligned += 1
        firstAligned = min(firstAligned ?? .max, frame.runningTime)
        newestAligned = max(newestAligned ?? .min, frame.runningTime)
        return AlignedFrame(
            nodes: nodes, runningTime: MediaTime(nanoseconds: frame.runningTime),
            presentationTimestamp: frame.presentationTimestamp,
            presentedAt: presentedAt.map(MediaTime.init(nanoseconds:)))
    }

    private static func mean(_ sum: Int128, count: Int) -> MediaTime {
        guard count > 0 else { return .zero }
        return MediaTime(nanoseconds: Int64(Nanoseconds.roundedQuotient(sum, Int128(count))))
    }
}

// MARK: - State

extension DriftAnalyzer {
    /// A frame some nodes have presented, waiting for the rest.
    private struct PendingFrame: Sendable {
        let runningTime: Int64
        let presentationTimestamp: MediaTime
        var presentedAt: [Int64?]
        var presentCount: Int
    }

    private struct NodeState: Sendable {
        var lastSequence: UInt64?
        var firstRunningTime: Int64?
        var lastRunningTime: Int64?
        var framesPresented = 0
        var skew = Distribution()
        var signedSkewSum: Int128 = 0
        var lateness = Distribution()
        var clock = ClockLineageRecord()
        /// The guaranteed bounds, which hold whatever the path's asymmetry.
        var guaranteed = ClockLineageRecord()
        var late = CounterIncrease()
        var dropped = CounterIncrease()
        var missingFrames = 0
        var undeliveredRecords: UInt64 = 0
        var ignoredRecords = 0
        var unusableRecords = 0

        /// Takes a record unless it repeats or precedes one already taken: a node delivers in order.
        mutating func accept(sequence: UInt64, runningTime: Int64) -> Bool {
            if let last = lastSequence, sequence <= last { return false }
            lastSequence = sequence
            if let last = lastRunningTime, runningTime - last <= DriftAnalyzer.matchTolerance { return false }
            lastRunningTime = runningTime
            firstRunningTime = firstRunningTime ?? runningTime
            return true
        }

        /// Whether a frame lies between the node's first and last record, where its absence means
        /// the node did not present it rather than that it was not polled.
        func covers(_ runningTime: Int64) -> Bool {
            guard let first = firstRunningTime, let last = lastRunningTime else { return false }
            return first <= runningTime && runningTime <= last
        }
    }

    private struct PairState: Sendable {
        var skew = Distribution()
        var signedSum: Int128 = 0
        /// Each frame's skew with the estimated bounds, and with the guaranteed ones.
        var withEstimated = SkewWithClocks()
        var withGuaranteed = SkewWithClocks()
        /// The pair's own measurements of each other's clocks.
        var peers = PeerBoundRecord()
    }

    /// Each frame's skew plus, and less, how far apart the pair's clocks may have been then, by one
    /// kind of bound.
    private struct SkewWithClocks: Sendable {
        var upper = Distribution()
        var lower = Distribution()
        var framesWithoutBound = 0

        /// - Parameters:
        ///   - difference: when the first node presented the frame less when the second did, by their
        ///     own clocks.
        ///   - clocks: how far apart their clocks may be, from their bounds from the master.
        ///   - between: the second's clock error less the first's, as the two measured each other.
        mutating func record(_ difference: Int64, clocks: Int64?, between: ClosedRange<Int64>?) {
            let skew = Int64(difference.magnitude)
            var high = clocks.map { skew + $0 }
            var low = clocks.map { max(0, skew - $0) }
            if let between {
                // The true difference is the measured one plus the second's error less the first's.
                let (from, to) = (difference + between.lowerBound, difference + between.upperBound)
                high = min(high ?? .max, max(abs(from), abs(to)))
                low = max(low ?? 0, from <= 0 && to >= 0 ? 0 : min(abs(from), abs(to)))
            }
            guard let high, let low else {
                framesWithoutBound += 1
                return
            }
            upper.record(high)
            lower.record(min(low, high))
        }

        /// Nil when some frame was aligned before both nodes had reported such a bound.
        var adjusted: ClockAdjustedSkew? {
            framesWithoutBound > 0 ? nil : ClockAdjustedSkew(upper: upper.statistics, lower: lower.statistics)
        }
    }

    /// How much a cumulative counter rose between samples, across restarts of the counter.
    struct CounterIncrease: Sendable {
        private var last: UInt64?
        private(set) var increase: UInt64?

        mutating func sample(_ value: UInt64) {
            if let last {
                increase = (increase ?? 0) + (value >= last ? value - last : value)
            } else {
                increase = 0
            }
            last = value
        }
    }
}
