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

    enum CodingKeys: String, CodingKey {
        case shared
        case total = "totalNs", first = "firstNs", second = "secondNs"
    }

    public init(first: MediaTime, second: MediaTime, shared: String? = nil) {
        self.total = first + second
        self.first = first
        self.second = second
        self.shared = shared
    }

    /// The two parts as the verdict's sentences give them.
    var sentence: String {
        let parts = "error bounds \(first.millisecondsText) + \(second.millisecondsText) ms"
        guard let shared else { return parts }
        return parts + " beyond the clock they share, \(shared)"
    }
}

/// What one node's clock reports said about where its error came from, over a run.
struct ClockLineageRecord: Sendable {
    /// The largest bound less what the source passed on, when every report said what that was.
    private var ownMaximum: Int64?
    private var boundMaximum: Int64?
    /// Every source followed when a bound was reported.
    private var sources: Set<String> = []
    /// Whether some bound came without a source followed (holdover) or without its lineage.
    private var unattributed = false
    private(set) var relaying: String?

    mutating func note(bound: Int64, lineage: ClockLineage?) {
        boundMaximum = max(boundMaximum ?? .min, bound)
        if let relaying = lineage?.relaying { self.relaying = relaying }
        guard let lineage, let source = lineage.source,
            let inherited = lineage.inheritedErrorBound?.nanoseconds, inherited >= 0
        else {
            unattributed = true
            return
        }
        sources.insert(source)
        ownMaximum = max(ownMaximum ?? .min, max(0, bound - inherited))
    }

    /// The one source followed through the whole run, if there was one.
    private var onlySource: String? {
        guard !unattributed, sources.count == 1 else { return nil }
        return sources.first
    }

    /// The pair's uncertainty; nil when either node reported no bound.
    static func uncertainty(_ first: ClockLineageRecord, _ second: ClockLineageRecord) -> PairClockUncertainty? {
        guard let firstBound = first.boundMaximum, let secondBound = second.boundMaximum else { return nil }
        let full = PairClockUncertainty(
            first: MediaTime(nanoseconds: firstBound), second: MediaTime(nanoseconds: secondBound))
        var candidates = [full]
        if let source = first.onlySource, let own = first.ownMaximum {
            if source == second.onlySource, let otherOwn = second.ownMaximum {
                candidates.append(
                    PairClockUncertainty(
                        first: MediaTime(nanoseconds: own), second: MediaTime(nanoseconds: otherOwn), shared: source))
            }
            if source == second.relaying {
                candidates.append(
                    PairClockUncertainty(first: MediaTime(nanoseconds: own), second: .zero, shared: source))
            }
        }
        if let source = second.onlySource, let own = second.ownMaximum, source == first.relaying {
            candidates.append(PairClockUncertainty(first: .zero, second: MediaTime(nanoseconds: own), shared: source))
        }
        return candidates.min { $0.total < $1.total }
    }
}
