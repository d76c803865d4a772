import LockstepTime
import WallProtocol

/// How far apart two nodes' clocks may have been during a run, and what the figure rests on.
///
/// Each node bounds its own clock's error from the master. Two nodes' clocks are at most the sum
/// of their bounds apart, unless part of their error is the same error: nodes that follow one source
/// both carry whatever that source is off by (the part of their bounds it passed on, the
/// `inheritedErrorBound`), and a node following another carries all of the other's error. That
/// shared part moves both screens together, so it is taken out; only the parts of their own remain.
/// The figures are the largest seen during the run, and the shared case applies only to a pair
/// whose every sample showed the same lineage (one source all along, never holdover).
public struct PairClockUncertainty: Sendable, Hashable, Codable {
    /// How far apart the pair's clocks may be: `first + second`.
    @NanosecondsCoded public var total: MediaTime
    /// The first node's part: its largest error bound, less what it shares with the second.
    @NanosecondsCoded public var first: MediaTime
    /// The second node's part.
    @NanosecondsCoded public var second: MediaTime
    /// The clock whose error the pair shares and which was taken out: the source both followed,
    /// or the relay one of them followed that the other served; nil when nothing was taken out.
    public var shared: String?
    /// Whether the figure is the two nodes' own measurement of each other (`PeerClockReport`),
    /// tighter than their bounds from the master; `first` and `second` are then its halves, since
    /// the measurement does not say whose clock is off.
    public var measuredBetween: Bool

    enum CodingKeys: String, CodingKey {
        case shared, measuredBetween
        case total = "totalNs", first = "firstNs", second = "secondNs"
    }

    public init(first: MediaTime, second: MediaTime, shared: String? = nil) {
        self.total = first + second
        self.first = first
        self.second = second
        self.shared = shared
        measuredBetween = false
    }

    /// The pair's clocks measured against each other: at most `total` apart.
    init(measuredBetween total: Int64) {
        self.total = MediaTime(nanoseconds: total)
        first = MediaTime(nanoseconds: total / 2)
        second = MediaTime(nanoseconds: total - total / 2)
        shared = nil
        measuredBetween = true
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        total = try container.decode(NanosecondsCoded.self, forKey: .total).wrappedValue
        first = try container.decode(NanosecondsCoded.self, forKey: .first).wrappedValue
        second = try container.decode(NanosecondsCoded.self, forKey: .second).wrappedValue
        shared = try container.decodeIfPresent(String.self, forKey: .shared)
        measuredBetween = try container.decodeIfPresent(Bool.self, forKey: .measuredBetween) ?? false
    }

    /// The two parts as the verdict's sentences give them.
    var sentence: String {
        if measuredBetween {
            return "clocks measured against each other directly, up to \(total.millisecondsText) ms apart"
        }
        let parts = "error bounds up to \(first.millisecondsText) + \(second.millisecondsText) ms"
        guard let shared else { return parts }
        return parts + " beyond the clock they share, \(shared)"
    }
}

/// How far apart two nodes' clocks were by their measurements of each other (`PeerClockReport`):
/// over the run, and lately. Either node's report counts; the pair's clocks are within each.
///
/// Kept signed, as the second node's clock error less the first's: a frame the first presented
/// `d` later than the second by their own clocks was truly presented `d` plus that much later. So
/// a measurement does not only bound the pair's uncertainty, it says which way their clocks are
/// apart, and a pair in step by their own clocks but measured apart is found out.
struct PeerBoundRecord: Sendable {
    /// The largest `|offset| + bound` noted: how far apart the clocks may have been over the run.
    private(set) var maximum: Int64?
    private var latest: ClosedRange<Int64>?
    private var previous: ClosedRange<Int64>?

    /// Notes a measurement of the pair's second node's clock less its first's, within `bound`
    /// (both checked by the caller to lie well within 64 bits).
    mutating func note(secondLessFirst offset: Int64, bound: Int64) {
        maximum = max(maximum ?? .min, abs(offset) + bound)
        previous = latest
        latest = (offset - bound)...(offset + bound)
    }

    /// The span of the last two measurements: the frames aligned now were presented since the one
    /// before last, and the clocks were within one or the other then.
    var recent: ClosedRange<Int64>? {
        guard let latest else { return nil }
        guard let previous else { return latest }
        return min(latest.lowerBound, previous.lowerBound)...max(latest.upperBound, previous.upperBound)
    }

    /// The smaller of the nodes' bounds (`fromMaster`) and this record's, over the run.
    func tightening(_ fromMaster: PairClockUncertainty?) -> PairClockUncertainty? {
        guard let maximum else { return fromMaster }
        guard let fromMaster, fromMaster.total.nanoseconds.map({ $0 <= maximum }) ?? false else {
            return PairClockUncertainty(measuredBetween: maximum)
        }
        return fromMaster
    }
}

/// What one node's clock reports said about where its error came from: over the run, and lately.
struct ClockLineageRecord: Sendable {
    /// One report: the bound, the part of it the node's own (less what the source passed on), and
    /// the source it followed (nil in holdover or when the node did not say).
    private struct Sample: Sendable {
        var bound: Int64
        var own: Int64?
        var source: String?
    }

    /// The largest bound less what the source passed on, when every report said what that was.
    private var ownMaximum: Int64?
    private(set) var boundMaximum: Int64?
    /// Every source followed when a bound was reported.
    private var sources: Set<String> = []
    /// Whether some bound came without a source followed (holdover) or without its lineage.
    private var unattributed = false
    private(set) var relaying: String?
    /// The last two reports: the frames aligned now were presented since the one before last.
    private var latest: Sample?
    private var previous: Sample?

    /// The bound of the latest report.
    var lastBound: Int64? { latest?.bound }

    /// The largest and the last bound noted, for a report; nil before any.
    var summary: ClockErrorBoundSummary? {
        guard let boundMaximum, let lastBound else { return nil }
        return ClockErrorBoundSummary(maximum: MediaTime(nanoseconds: boundMaximum), last: MediaTime(nanoseconds: lastBound))
    }

    mutating func note(bound: Int64, lineage: ClockLineage?) {
        boundMaximum = max(boundMaximum ?? .min, bound)
        if let relaying = lineage?.relaying { self.relaying = relaying }
        var sample = Sample(bound: bound)
        if let lineage, let source = lineage.source, let inherited = lineage.inheritedErrorBound?.nanoseconds,
            inherited >= 0
        {
            sources.insert(source)
            let own = max(0, bound - inherited)
            ownMaximum = max(ownMaximum ?? .min, own)
            sample.own = own
            sample.source = source
        } else {
            unattributed = true
        }
        previous = latest
        latest = sample
    }

    /// The one source followed through the whole run, if there was one.
    private var onlySource: String? {
        guard !unattributed, sources.count == 1 else { return nil }
        return sources.first
    }

    /// The last two reports as one: the larger bound and own part, and their source if both had the same.
    private var recent: Sample? {
        guard let latest else { return nil }
        guard let previous else { return latest }
        let sameSource = latest.source != nil && latest.source == previous.source
        return Sample(
            bound: max(latest.bound, previous.bound),
            own: sameSource ? latest.own.flatMap { own in previous.own.map { max(own, $0) } } : nil,
            source: sameSource ? latest.source : nil)
    }

    /// The pair's uncertainty over the whole run: the largest bounds, less what the pair shared
    /// in every report; nil when either node reported no bound.
    static func uncertainty(_ first: ClockLineageRecord, _ second: ClockLineageRecord) -> PairClockUncertainty? {
        guard let firstBound = first.boundMaximum, let secondBound = second.boundMaximum else { return nil }
        return smallest(
            first: Sample(bound: firstBound, own: first.ownMaximum, source: first.onlySource),
            relayingFirst: first.relaying,
            second: Sample(bound: secondBound, own: second.ownMaximum, source: second.onlySource),
            relayingSecond: second.relaying)
    }

    /// The pair's uncertainty for the frames aligned now, from the last two reports of each node;
    /// nil when either node has reported no bound yet.
    static func currentUncertainty(_ first: ClockLineageRecord, _ second: ClockLineageRecord) -> Int64? {
        guard let a = first.recent, let b = second.recent else { return nil }
        return smallest(first: a, relayingFirst: first.relaying, second: b, relayingSecond: second.relaying)
            .total.nanoseconds
    }

    /// The sum of the bounds, or less where the lineage shows error the two share.
    private static func smallest(
        first: Sample, relayingFirst: String?, second: Sample, relayingSecond: String?
    ) -> PairClockUncertainty {
        var candidates = [
            PairClockUncertainty(
                first: MediaTime(nanoseconds: first.bound), second: MediaTime(nanoseconds: second.bound))
        ]
        if let source = first.source, let own = first.own {
            if source == second.source, let otherOwn = second.own {
                candidates.append(
                    PairClockUncertainty(
                        first: MediaTime(nanoseconds: own), second: MediaTime(nanoseconds: otherOwn), shared: source))
            }
            if source == relayingSecond {
                candidates.append(
                    PairClockUncertainty(first: MediaTime(nanoseconds: own), second: .zero, shared: source))
            }
        }
        if let source = second.source, let own = second.own, source == relayingFirst {
            candidates.append(PairClockUncertainty(first: .zero, second: MediaTime(nanoseconds: own), shared: source))
        }
        return candidates.min { $0.total < $1.total }!
    }
}
