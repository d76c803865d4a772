import LockstepTime
import WallProtocol

/// What `wallctl drift` reports: how far apart the wall's screens presented the same frames, per
/// node, per pair and for the whole wall, with a verdict and a time series to plot.
///
/// Skew is measured against the wall's reference for each frame, the median of the nodes'
/// `presentedAt` (see `DriftAnalyzer`). Every time is a `MediaTime`; the table and the plot show
/// milliseconds.
public struct DriftReport: Sendable, Hashable, Codable {
    /// The running time of the first and last frame every node presented; nil before any.
    @OptionalNanosecondsCoded public var firstRunningTime: MediaTime?
    @OptionalNanosecondsCoded public var lastRunningTime: MediaTime?
    /// The running time between the first and the last aligned frame.
    @NanosecondsCoded public var duration: MediaTime
    /// Frames every node presented.
    public var framesAligned: Int
    /// Frames that some node did not present (or did not deliver) within the settle window.
    public var framesIncomplete: Int
    /// Per node, in the wall's order.
    public var nodes: [NodeDrift]
    /// Per pair of nodes, in the wall's order.
    public var pairs: [PairDrift]
    /// The wall's spread per frame: the latest node's `presentedAt` minus the earliest's.
    public var spread: TimeStatistics
    public var verdict: DriftVerdict
    public var series: SkewSeries

    enum CodingKeys: String, CodingKey {
        case framesAligned, framesIncomplete, nodes, pairs, spread, verdict, series
        case firstRunningTime = "firstRunningTimeNs", lastRunningTime = "lastRunningTimeNs", duration = "durationNs"
    }

    public init(
        firstRunningTime: MediaTime?, lastRunningTime: MediaTime?, duration: MediaTime, framesAligned: Int,
        framesIncomplete: Int, nodes: [NodeDrift], pairs: [PairDrift], spread: TimeStatistics,
        verdict: DriftVerdict, series: SkewSeries
    ) {
        self.firstRunningTime = firstRunningTime
        self.lastRunningTime = lastRunningTime
        self.duration = duration
        self.framesAligned = framesAligned
        self.framesIncomplete = framesIncomplete
        self.nodes = nodes
        self.pairs = pairs
        self.spread = spread
        self.verdict = verdict
        self.series = series
    }
}

/// One node's part of a `DriftReport`.
public struct NodeDrift: Sendable, Hashable, Codable {
    public var node: String
    /// Records accepted from the node (duplicates, out-of-order and unusable ones left out).
    public var framesPresented: Int
    /// |skew| over the aligned frames: how far the node is from the wall, either way.
    public var skew: TimeStatistics
    /// The mean signed skew: positive when the node presents after the wall, on average.
    @NanosecondsCoded public var meanSignedSkew: MediaTime
    /// `presentedAt - dueAt` over every frame it presented (signed: negative is early).
    public var lateness: TimeStatistics
    /// The node's clock error bound, when it reported one: it assumes the path to the master
    /// symmetric at its fastest exchanges.
    public var clockErrorBound: ClockErrorBoundSummary?
    /// The node's guaranteed clock error bound, when it reported one: it holds whatever the path's
    /// asymmetry (half the round trip, and what the clock may have drifted since).
    public var guaranteedClockErrorBound: ClockErrorBoundSummary?
    /// How much the node's own late-frame counter rose during the analysis; nil without counters.
    public var lateFrames: UInt64?
    /// How much the node's own dropped-frame counter rose during the analysis; nil without counters.
    public var droppedFrames: UInt64?
    /// Frames other nodes presented that this one did not, between its first and last record.
    public var missingFrames: Int
    /// Records the node said it could no longer deliver (the reader fell behind its buffer).
    public var undeliveredRecords: UInt64
    /// Records ignored as duplicates, out of order, or for frames already settled.
    public var ignoredRecords: Int
    /// Records without a numeric running time or presentation time.
    public var unusableRecords: Int
    /// What a frame costs the node's machine (measured after the run, for a FAIL); nil when not
    /// asked.
    public var frameCost: FrameCostReport?

    enum CodingKeys: String, CodingKey {
        case node, framesPresented, skew, lateness, clockErrorBound, guaranteedClockErrorBound, lateFrames,
            droppedFrames, missingFrames, undeliveredRecords, ignoredRecords, unusableRecords, frameCost
        case meanSignedSkew = "meanSignedSkewNs"
    }

    public init(
        node: String, framesPresented: Int, skew: TimeStatistics, meanSignedSkew: MediaTime,
        lateness: TimeStatistics, clockErrorBound: ClockErrorBoundSummary?,
        guaranteedClockErrorBound: ClockErrorBoundSummary? = nil, lateFrames: UInt64?,
        droppedFrames: UInt64?, missingFrames: Int, undeliveredRecords: UInt64, ignoredRecords: Int,
        unusableRecords: Int
    ) {
        self.guaranteedClockErrorBound = guaranteedClockErrorBound
        self.node = node
        self.framesPresented = framesPresented
        self.skew = skew
        self.meanSignedSkew = meanSignedSkew
        self.lateness = lateness
        self.clockErrorBound = clockErrorBound
        self.lateFrames = lateFrames
        self.droppedFrames = droppedFrames
        self.missingFrames = missingFrames
        self.undeliveredRecords = undeliveredRecords
        self.ignoredRecords = ignoredRecords
        self.unusableRecords = unusableRecords
    }
}

/// One pair's part of a `DriftReport`.
public struct PairDrift: Sendable, Hashable, Codable {
    public var pair: NodePair
    /// |first - second| over the aligned frames.
    public var skew: TimeStatistics
    /// The mean of `first - second`: positive when the first node presents after the second.
    @NanosecondsCoded public var meanSignedSkew: MediaTime
    /// How far apart the pair's clocks may have been at most during the run, which `skew` cannot
    /// see; nil when a node of the pair reported no clock error bound.
    public var clockUncertainty: PairClockUncertainty?
    /// Each frame's skew with what the clocks may have been apart when it was shown added and taken
    /// away: the true skew of every frame lies between the two; nil when some frame was aligned
    /// before both nodes had reported a bound.
    public var skewWithClockUncertainty: ClockAdjustedSkew?
    /// The same two with the nodes' guaranteed bounds, which hold on asymmetric paths too: a PASS
    /// rests on these.
    public var guaranteedClockUncertainty: PairClockUncertainty?
    public var skewWithGuaranteedClockUncertainty: ClockAdjustedSkew?

    enum CodingKeys: String, CodingKey {
        case pair, skew, clockUncertainty, skewWithClockUncertainty, guaranteedClockUncertainty,
            skewWithGuaranteedClockUncertainty
        case meanSignedSkew = "meanSignedSkewNs"
    }

    public init(
        pair: NodePair, skew: TimeStatistics, meanSignedSkew: MediaTime, clockUncertainty: PairClockUncertainty? = nil,
        skewWithClockUncertainty: ClockAdjustedSkew? = nil, guaranteedClockUncertainty: PairClockUncertainty? = nil,
        skewWithGuaranteedClockUncertainty: ClockAdjustedSkew? = nil
    ) {
        self.guaranteedClockUncertainty = guaranteedClockUncertainty
        self.skewWithGuaranteedClockUncertainty = skewWithGuaranteedClockUncertainty
        self.pair = pair
        self.skew = skew
        self.meanSignedSkew = meanSignedSkew
        self.clockUncertainty = clockUncertainty
        self.skewWithClockUncertainty = skewWithClockUncertainty
    }
}

/// A pair's skew per frame with the clocks' uncertainty at that frame added (`upper`) and taken
/// away (`lower`, at least zero). Since each frame's true skew lies between the two, the true p99 is
/// at most `upper`'s p99 and at least `lower`'s.
public struct ClockAdjustedSkew: Sendable, Hashable, Codable {
    public var upper: TimeStatistics
    public var lower: TimeStatistics

    public init(upper: TimeStatistics, lower: TimeStatistics) {
        self.upper = upper
        self.lower = lower
    }
}

/// How far a node's clock may be from the master's, as the node itself estimated it.
public struct ClockErrorBoundSummary: Sendable, Hashable, Codable {
    /// The worst bound seen during the analysis.
    @NanosecondsCoded public var maximum: MediaTime
    /// The latest bound seen.
    @NanosecondsCoded public var last: MediaTime

    enum CodingKeys: String, CodingKey {
        case maximum = "maximumNs", last = "lastNs"
    }

    public init(maximum: MediaTime, last: MediaTime) {
        self.maximum = maximum
        self.last = last
    }
}
