import Foundation
import LockstepTime
import WallAnalysis
import WallProtocol

/// The console's drift view: the frames the nodes report presenting, aligned by the same analyzer
/// as `wallctl drift`, kept as each pair's worst skew per second over the last minutes, with the
/// analyzer's verdict and the clock uncertainty it rests on. The analysis starts over every
/// `window` (a node's restart does not start it over), so the verdict is about the last minutes,
/// not the whole day.
public struct DriftWatch: Sendable {
    /// What the page draws.
    public struct View: Sendable, Hashable, Codable {
        /// Pair names ("a–b"), in the order of `points`' values.
        public var pairs: [String]
        /// Seconds since 1970 of each point, and each pair's worst skew in that second, in µs.
        public var points: [Point]
        public var verdict: String?
        public var outcome: String?
        public var worstPairP99Us: Double?
        public var worstPairUncertaintyUs: Double?
        public var thresholdUs: Double
        public var framesAligned: Int
        /// Frames the running analysis has aligned, when it has too few for a verdict of its own.
        public var framesSoFar: Int
        /// How many an analysis needs before its verdict is given (`DriftWatch.framesForAVerdict`).
        public var framesNeeded: Int
        /// Seconds the verdict's analysis covers.
        public var windowS: Double
    }

    /// Frames an analysis aligns before its verdict is shown: three seconds at 30 frames a second.
    /// A verdict on one frame said PASS for a wall it had not watched.
    public static let framesForAVerdict = 90

    public struct Point: Sendable, Hashable, Codable {
        public var atUnixS: Int64
        public var skewUs: [Double?]
    }

    public let nodes: [String]
    public let threshold: MediaTime
    /// How long an analysis runs before it starts over, and how far back the plot reaches.
    public let window: MediaTime
    public let history: Int64
    private var analyzer: DriftAnalyzer?
    private var analysisStarted: Int64 = 0
    private var lastReport: DriftReport?
    /// By second since 1970, each pair's worst skew (ns).
    private var buckets: [Int64: [Int64?]] = [:]
    private let pairIndex: [(Int, Int)]
    /// By node, the newest record sequence seen.
    public private(set) var after: [String: UInt64] = [:]

    public init(
        nodes: [String], threshold: MediaTime = MediaTime(value: 1, timescale: 1000),
        window: MediaTime = MediaTime(value: 180, timescale: 1), historySeconds: Int64 = 300
    ) {
        self.nodes = nodes
        self.threshold = threshold
        self.window = window
        history = historySeconds
        var pairs: [(Int, Int)] = []
        for first in nodes.indices {
            for second in nodes.indices where second > first { pairs.append((first, second)) }
        }
        pairIndex = pairs
    }

    /// Starts from what `node` presents after `sequence`: where its records stand now.
    public mutating func start(_ node: String, after sequence: UInt64) {
        if let known = after[node], sequence < known {
            // The node started its records over (a restart): the analysis goes on with it. Starting
            // over put a FAIL out of sight behind a PASS on the frames since.
            try? analyzer?.restart(node)
        }
        if after[node] == nil || sequence < after[node]! { after[node] = sequence }
    }

    /// Adds a node's reply; `now` is seconds since 1970.
    public mutating func ingest(_ reply: FramesReply, now: Int64) {
        if let last = reply.records.last { after[reply.node] = last.sequence }
        guard nodes.count >= 2 else { return }
        if analyzer == nil || now - analysisStarted >= Int64(window.seconds) {
            keepReport()
            analyzer = try? DriftAnalyzer(
                nodes: nodes, configuration: DriftAnalyzer.Configuration(threshold: threshold))
            analysisStarted = now
        }
        guard let aligned = try? analyzer?.ingest(reply) else { return }
        // By the second the frames were polled in: the master's time need not be the calendar's.
        for frame in aligned {
            var row = buckets[now] ?? Array(repeating: nil, count: pairIndex.count)
            for (index, pair) in pairIndex.enumerated() {
                guard let a = frame.presentedAt[pair.0].nanoseconds, let b = frame.presentedAt[pair.1].nanoseconds
                else { continue }
                row[index] = max(row[index] ?? 0, abs(a - b))
            }
            buckets[now] = row
        }
        buckets = buckets.filter { $0.key > now - history }
    }

    /// Keeps the running analysis's report, if it has a verdict (`framesForAVerdict`), for the
    /// view until the next analysis has one.
    private mutating func keepReport() {
        guard let report = analyzer?.report(), report.framesAligned >= Self.framesForAVerdict else { return }
        lastReport = report
    }

    /// Notes a node's status: its clock's error bound, which the verdict's uncertainty rests on.
    public mutating func record(_ status: NodeStatus) {
        try? analyzer?.record(status)
    }

    public func view() -> View {
        let current = analyzer?.report()
        let report = current.flatMap { $0.framesAligned >= Self.framesForAVerdict ? $0 : nil } ?? lastReport
        let verdict = report?.verdict
        return View(
            pairs: pairIndex.map { "\(nodes[$0.0])–\(nodes[$0.1])" },
            points: buckets.keys.sorted().map { second in
                Point(atUnixS: second, skewUs: buckets[second]!.map { $0.map { Double($0) / 1000 } })
            },
            verdict: verdict?.sentence, outcome: verdict?.outcome.rawValue,
            worstPairP99Us: verdict?.worstPairP99.map { $0.seconds * 1e6 },
            worstPairUncertaintyUs: verdict?.worstPairClockUncertainty.map { $0.seconds * 1e6 },
            thresholdUs: threshold.seconds * 1e6, framesAligned: report?.framesAligned ?? 0,
            framesSoFar: current?.framesAligned ?? 0, framesNeeded: Self.framesForAVerdict, windowS: window.seconds)
    }
}
