import GroundTruth
import LockstepTime

/// Checks the nodes' own account of their sync against ground truth, frame by frame.
///
/// The nodes say when they presented each frame on the master clock (`AlignedFrame`, from the
/// drift analyzer); the ground-truth receiver saw each node's frame arrive on CLOCK_MONOTONIC,
/// which none of the nodes' clock machinery touches. For every frame found in both on every node
/// and every pair (a, b): reported = presentedAt_a − presentedAt_b, truth = arrivedAt_a −
/// arrivedAt_b, and their disagreement |reported − truth|. (The two clocks' rates differ by a few
/// hundred ppm at most: nanoseconds over the milliseconds compared.)
///
/// Frame codes repeat every 4096 frames and clips loop, so arrivals are matched by code and by
/// time: per node, arrivals queue in order and a frame takes the oldest one with its code. Once a
/// node has a match, the offset between its two clocks is known, and only an arrival within
/// `matchWindow` of where the frame is expected qualifies; older ones are discarded. Feed arrivals
/// and frames in any order: a frame waits (at most `maxPendingFrames` of them) until its arrivals
/// come or a later frame's arrival shows that they never will. Memory stays bounded.
public struct GroundTruthComparison: Sendable {
    /// Settings of a comparison; the defaults suit Lockstep's 30 fps frame-code clips.
    public struct Configuration: Sendable, Hashable {
        /// The clip's frame duration, which turns a PTS into a frame code; nil infers it from the
        /// smallest step between the PTS of the first frames.
        public var frameDuration: MediaTime?
        /// How far from its expected time an arrival may be and still match: well above the
        /// nodes' skew, well below the time a code takes to come round again (loops are longer).
        public var matchWindow: MediaTime
        /// CLOCK_MONOTONIC minus master time, if the caller knows it: matches by time from the first
        /// frame instead of learning the offset from the first match.
        public var clockOffset: MediaTime?
        /// The most unmatched arrivals kept per node: under the 4096 frames after which codes repeat.
        public var maxQueuedArrivals: Int
        /// The most frames kept waiting for arrivals.
        public var maxPendingFrames: Int
        /// The first check: ground truth's worst-pair p99 skew must be at most this.
        public var skewThreshold: MediaTime
        /// The second check: the p99 disagreement between report and truth must be at most this.
        public var agreementThreshold: MediaTime

        public init(
            frameDuration: MediaTime? = MediaTime(value: 1, timescale: 30),
            matchWindow: MediaTime = MediaTime(value: 1, timescale: 2),
            clockOffset: MediaTime? = nil,
            maxQueuedArrivals: Int = 2_048,
            maxPendingFrames: Int = 512,
            skewThreshold: MediaTime = MediaTime(value: 2, timescale: 1_000),
            agreementThreshold: MediaTime = MediaTime(value: 1, timescale: 2_000)
        ) {
            self.frameDuration = frameDuration
            self.matchWindow = matchWindow
            self.clockOffset = clockOffset
            self.maxQueuedArrivals = maxQueuedArrivals
            self.maxPendingFrames = maxPendingFrames
            self.skewThreshold = skewThreshold
            self.agreementThreshold = agreementThreshold
        }
    }

    /// How many PTS steps the frame duration is inferred from: enough that one of them is a
    /// single frame even when the wall drops some.
    static let stepsToInferFrom = 8

    /// The wall's nodes, in the drift analyzer's order.
    public var nodes: [String] { wall.ids }
    public let configuration: Configuration

    private let wall: WallNodes
    private let matchWindow: Int64
    private let clockOffset: Int64?
    private var frameDuration: MediaTime?
    private var inference = FrameDurationInference()
    private var queues: [ArrivalQueue]
    private var pending: [PendingFrame] = []
    private var truthSkew: [Distribution]
    private var pairDisagreement: [Distribution]
    private var disagreement = Distribution()
    private var spread = Distribution()
    private var framesMatched = 0
    private var framesUnmatched = 0

    /// Sets up a comparison for the nodes of a `DriftAnalyzer` (same ids, same order).
    public init(nodes: [String], configuration: Configuration = Configuration()) throws(AnalysisError) {
        wall = try WallNodes(nodes)
        if let duration = configuration.frameDuration {
            _ = try Setting.positive(duration, "the frame duration")
        }
        matchWindow = try Setting.positive(configuration.matchWindow, "the match window")
        clockOffset = try configuration.clockOffset.map { offset throws(AnalysisError) in
            try Nanoseconds.of(offset, "the clock offset")
        }
        _ = try Setting.positive(configuration.skewThreshold, "the ground-truth skew threshold")
        _ = try Setting.positive(configuration.agreementThreshold, "the agreement threshold")
        try Setting.positive(configuration.maxQueuedArrivals, "the maximum queued arrivals")
        try Setting.positive(configuration.maxPendingFrames, "the maximum pending frames")
        self.configuration = configuration
        frameDuration = configuration.frameDuration
        queues = Array(repeating: ArrivalQueue(), count: nodes.count)
        truthSkew = Array(repeating: Distribution(), count: wall.pairs.count)
        pairDisagreement = truthSkew
    }

    // MARK: Feeding

    /// Adds frames the ground-truth receiver saw, in the order they arrived.
    public mutating func ingest(_ arrivals: some Sequence<GroundTruthArrival>) throws(AnalysisError) {
        for arrival in arrivals {
            let node = try wall.index(of: arrival.node)
            guard (0..<FrameCode.modulus).contains(arrival.code) else {
                throw .frameCodeOutOfRange(node: arrival.node, code: arrival.code)
            }
            let arrivedAt = try Nanoseconds.of(
                arrival.arrivedAt, "the arrival time of a frame from \"\(arrival.node)\"")
            queues[node].insert(Arrival(code: arrival.code, arrivedAt: arrivedAt))
            if queues[node].count > configuration.maxQueuedArrivals {
                queues[node].dropOldest()
            }
        }
        resolve()
    }

    /// Adds one frame the ground-truth receiver saw.
    public mutating func ingest(_ arrival: GroundTruthArrival) throws(AnalysisError) {
        try ingest(CollectionOfOne(arrival))
    }

    /// Adds frames every node presented, as `DriftAnalyzer.ingest` returns them, oldest first.
    public mutating func ingest(_ frames: some Sequence<AlignedFrame>) throws(AnalysisError) {
        for frame in frames {
            guard frame.nodes == nodes else { throw .nodeListMismatch(expected: nodes, got: frame.nodes) }
            guard frame.presentedAt.count == nodes.count else {
                throw .malformedFrame(times: frame.presentedAt.count, nodes: nodes.count)
            }
            var presentedAt: [Int64] = []
            for (node, time) in zip(nodes, frame.presentedAt) {
                presentedAt.append(try Nanoseconds.of(time, "the presentation time of a frame on \"\(node)\""))
            }
            let timestamp = frame.presentationTimestamp
            guard timestamp.isNumeric else {
                // Without a timestamp there is no code to look for.
                framesUnmatched += 1
                queues.indices.forEach { queues[$0].unmatchedFrames += 1 }
                continue
            }
            if frameDuration == nil {
                frameDuration = inference.add(timestamp)
            }
            pending.append(
                PendingFrame(presentedAt: presentedAt, presentationTimestamp: timestamp, nodeCount: nodes.count))
            // Frame by frame, so a long batch does not overflow before its arrivals are looked up.
            resolve()
            if pending.count > configuration.maxPendingFrames {
                giveUp(onFrameAt: 0)
            }
        }
    }

    /// Adds one frame every node presented.
    public mutating func ingest(_ frame: AlignedFrame) throws(AnalysisError) {
        try ingest(CollectionOfOne(frame))
    }

    /// Ends the comparison: frames still waiting are unmatched, and so are arrivals still queued.
    public mutating func finish() {
        if frameDuration == nil {
            frameDuration = inference.best
        }
        resolve()
        while !pending.isEmpty {
            giveUp(onFrameAt: 0)
        }
        for node in queues.indices {
            queues[node].discardAll()
        }
    }

    /// Frames waiting for arrivals.
    public var pendingFrameCount: Int { pending.count }

    /// Arrivals waiting for frames, over all nodes.
    public var queuedArrivalCount: Int { queues.reduce(0) { $0 + $1.count } }

    // MARK: Report

    /// The comparison so far; call `finish()` first for a run's final report.
    public func report() -> GroundTruthReport {
        let pairs = wall.pairs.indices.map { index in
            GroundTruthPair(
                pair: wall.pairs[index].pair, truthSkew: truthSkew[index].statistics,
                disagreement: pairDisagreement[index].statistics)
        }
        let perNode = nodes.indices.map { index in
            GroundTruthNode(
                node: nodes[index], arrivals: queues[index].received, unmatchedFrames: queues[index].unmatchedFrames,
                unmatchedArrivals: queues[index].unmatchedArrivals)
        }
        let overall = disagreement.statistics
        return GroundTruthReport(
            framesMatched: framesMatched, framesUnmatched: framesUnmatched, nodes: perNode, pairs: pairs,
            spread: spread.statistics, disagreement: overall,
            verdict: GroundTruthVerdict.judge(
                pairs: pairs, disagreement: overall, skewThreshold: configuration.skewThreshold,
                agreementThreshold: configuration.agreementThreshold))
    }

    // MARK: Matching

    /// Matches what can be matched, oldest frame first, and settles the frames that are done.
    private mutating func resolve() {
        guard let frameDuration else { return }
        for index in pending.indices {
            if pending[index].code == nil {
                pending[index].code = Self.code(of: pending[index].presentationTimestamp, frameDuration: frameDuration)
            }
            for node in nodes.indices where !pending[index].resolved[node] {
                match(frameAt: index, node: node)
            }
        }
        guard pending.contains(where: { $0.resolved.allSatisfy { $0 } }) else { return }
        var waiting: [PendingFrame] = []
        for frame in pending {
            if frame.resolved.allSatisfy({ $0 }) {
                settle(frame)
            } else {
                waiting.append(frame)
            }
        }
        pending = waiting
    }

    private mutating func match(frameAt index: Int, node: Int) {
        let frame = pending[index]
        let presentedAt = frame.presentedAt[node]
        let expected = (queues[node].offset ?? clockOffset).map { presentedAt + $0 }
        if let expected {
            // Later frames are expected later still, so these can match nothing any more.
            queues[node].discard(before: expected - matchWindow)
        }
        if let arrivedAt = queues[node].take(code: frame.code!, near: expected, within: matchWindow) {
            pending[index].arrivedAt[node] = arrivedAt
            pending[index].resolved[node] = true
            queues[node].offset = arrivedAt - presentedAt
            // Arrivals come in order: an earlier frame still unmatched here never reached the receiver.
            for earlier in 0..<index where !pending[earlier].resolved[node] {
                pending[earlier].resolved[node] = true
            }
        } else if let expected, let newest = queues[node].newest, newest > expected + matchWindow {
            pending[index].resolved[node] = true
        }
    }

    private mutating func giveUp(onFrameAt index: Int) {
        var frame = pending.remove(at: index)
        frame.resolved = frame.resolved.map { _ in true }
        settle(frame)
    }

    /// Counts a frame that needs nothing more: matched on every node, or not.
    private mutating func settle(_ frame: PendingFrame) {
        guard frame.arrivedAt.allSatisfy({ $0 != nil }) else {
            framesUnmatched += 1
            for node in nodes.indices where frame.arrivedAt[node] == nil {
                queues[node].unmatchedFrames += 1
            }
            return
        }
        let arrivedAt = frame.arrivedAt.map { $0! }
        for (index, pair) in wall.pairs.enumerated() {
            let truth = arrivedAt[pair.first] - arrivedAt[pair.second]
            let reported = frame.presentedAt[pair.first] - frame.presentedAt[pair.second]
            let difference = Int64((reported - truth).magnitude)
            truthSkew[index].record(Int64(truth.magnitude))
            pairDisagreement[index].record(difference)
            disagreement.record(difference)
        }
        spread.record(arrivedAt.max()! - arrivedAt.min()!)
        framesMatched += 1
    }

    /// `round(timestamp / frameDuration) mod 4096`, exactly, both times being rationals.
    static func code(of timestamp: MediaTime, frameDuration: MediaTime) -> Int {
        let numerator = Int128(timestamp.value) * Int128(frameDuration.timescale)
        let denominator = Int128(timestamp.timescale) * Int128(frameDuration.value)
        let frame = Nanoseconds.roundedQuotient(numerator, denominator)
        let modulus = Int128(FrameCode.modulus)
        return Int(((frame % modulus) + modulus) % modulus)
    }
}

// MARK: - State

extension GroundTruthComparison {
    private struct Arrival: Sendable {
        let code: Int
        let arrivedAt: Int64
    }

    /// A node's arrivals not yet matched, oldest first, with what has been learnt about the node.
    private struct ArrivalQueue: Sendable {
        private var arrivals: [Arrival] = []
        private var head = 0
        /// CLOCK_MONOTONIC minus master time at the node's latest match.
        var offset: Int64?
        private(set) var newest: Int64?
        private(set) var received = 0
        var unmatchedFrames = 0
        private(set) var unmatchedArrivals = 0

        var count: Int { arrivals.count - head }

        mutating func insert(_ arrival: Arrival) {
            received += 1
            newest = max(newest ?? .min, arrival.arrivedAt)
            var position = arrivals.count
            while position > head, arrivals[position - 1].arrivedAt > arrival.arrivedAt { position -= 1 }
            arrivals.insert(arrival, at: position)
        }

        mutating func dropOldest() {
            head += 1
            unmatchedArrivals += 1
            compact()
        }

        mutating func discard(before time: Int64) {
            while head < arrivals.count, arrivals[head].arrivedAt < time {
                dropOldest()
            }
        }

        mutating func discardAll() {
            unmatchedArrivals += count
            arrivals.removeAll()
            head = 0
        }

        /// Takes the oldest arrival with `code` (within `window` of `expected`, when known),
        /// discarding the arrivals before it: frames come in order, so theirs will not come.
        mutating func take(code: Int, near expected: Int64?, within window: Int64) -> Int64? {
            var index = head
            while index < arrivals.count {
                let arrival = arrivals[index]
                if let expected, arrival.arrivedAt > expected + window { return nil }
                if arrival.code == code, expected.map({ abs(arrival.arrivedAt - $0) <= window }) ?? true {
                    unmatchedArrivals += index - head
                    head = index + 1
                    compact()
                    return arrival.arrivedAt
                }
                index += 1
            }
            return nil
        }

        private mutating func compact() {
            if head >= 1_024, head * 2 >= arrivals.count {
                arrivals.removeFirst(head)
                head = 0
            }
        }
    }

    private struct PendingFrame: Sendable {
        let presentedAt: [Int64]
        let presentationTimestamp: MediaTime
        var code: Int?
        var arrivedAt: [Int64?]
        /// Per node: matched, or given up on.
        var resolved: [Bool]

        init(presentedAt: [Int64], presentationTimestamp: MediaTime, nodeCount: Int) {
            self.presentedAt = presentedAt
            self.presentationTimestamp = presentationTimestamp
            arrivedAt = Array(repeating: nil, count: nodeCount)
            resolved = Array(repeating: false, count: nodeCount)
        }
    }

    /// Infers a clip's frame duration from the smallest positive step between consecutive
    /// timestamps, snapped to a whole or NTSC (×1000/1001) frame rate when it is one.
    struct FrameDurationInference: Sendable {
        private var previous: MediaTime?
        private var smallestStep: Int64?
        private var steps = 0

        /// Takes the next frame's timestamp; returns the duration once enough steps are seen.
        mutating func add(_ timestamp: MediaTime) -> MediaTime? {
            defer { previous = timestamp }
            if let previous, let step = (timestamp - previous).nanoseconds, step > 0 {
                smallestStep = min(smallestStep ?? .max, step)
                steps += 1
            }
            return steps >= GroundTruthComparison.stepsToInferFrom ? best : nil
        }

        /// The duration from the steps seen so far, if any.
        var best: MediaTime? {
            guard let step = smallestStep else { return nil }
            let rate = Double(Nanoseconds.perSecond) / Double(step)
            let whole = rate.rounded()
            if whole >= 1, abs(rate - whole) <= 0.01 {
                return MediaTime(value: 1, timescale: Int32(whole))
            }
            let ntsc = (rate * 1.001).rounded()
            if ntsc >= 1, abs(rate - ntsc / 1.001) <= 0.01 {
                return MediaTime(value: 1_001, timescale: Int32(ntsc) * 1_000)
            }
            return MediaTime(nanoseconds: step)
        }
    }
}
