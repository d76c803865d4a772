import LockstepTime
import WallAnalysis
import WallProtocol

/// A wall that presents frames exactly as told: each node's records and the ground truth's arrivals
/// are pure functions of the frame index, so tests know every statistic in advance.
struct SyntheticWall {
    var nodes: [String]
    /// Nanoseconds between frames (60 fps unless set).
    var frameInterval: Int64 = 16_666_667
    /// The master time of frame 0's due time: epoch-scale, as real master clocks are.
    var base: Int64 = 1_763_000_000_000_000_000
    /// How late each node presents every frame, past its due time.
    var lateness: Int64 = 100_000
    /// Per node, an extra delay for frame k.
    var skew: [String: (Int) -> Int64] = [:]
    /// Per node, how far its clock is off: it presents each frame on time by its own clock, this
    /// much away from the others on the master's.
    var clockError: [String: Int64] = [:]
    /// Per node, an error in its running time (nodes' running times of one frame differ slightly).
    var runningTimeError: [String: Int64] = [:]
    /// Per node, frames it never presents.
    var dropped: [String: Set<Int>] = [:]
    /// The clip's length in frames, after which the PTS starts again from zero.
    var loopFrames: Int?

    init(nodes: [String]) {
        self.nodes = nodes
    }

    func runningTime(_ frame: Int) -> Int64 { Int64(frame) * frameInterval }

    func timestamp(_ frame: Int) -> MediaTime {
        MediaTime(nanoseconds: Int64(loopFrames.map { frame % $0 } ?? frame) * frameInterval)
    }

    /// When `node` really presented `frame`, on the master clock.
    func presentedAt(_ node: String, _ frame: Int) -> Int64 {
        base + runningTime(frame) + lateness + (skew[node]?(frame) ?? 0) + (clockError[node] ?? 0)
    }

    /// The node's records of `frames`, numbered as the node numbers them (from 1, skipping none of
    /// the frames it presented).
    func records(_ node: String, _ frames: Range<Int>) -> [FrameRecord] {
        let drops = dropped[node] ?? []
        var sequence = UInt64(frames.lowerBound - drops.filter { $0 < frames.lowerBound }.count)
        return frames.compactMap { frame in
            guard !drops.contains(frame) else { return nil }
            sequence += 1
            return FrameRecord(
                sequence: sequence, presentationTimestamp: timestamp(frame),
                runningTime: MediaTime(nanoseconds: runningTime(frame) + (runningTimeError[node] ?? 0)),
                presentedAt: MediaTime(nanoseconds: presentedAt(node, frame)),
                dueAt: MediaTime(nanoseconds: base + runningTime(frame) + (clockError[node] ?? 0)))
        }
    }

    /// Feeds every node's records of `frames` in turn, returning the frames aligned.
    @discardableResult
    func feed(_ frames: Range<Int>, to analyzer: inout DriftAnalyzer) throws -> [AlignedFrame] {
        var aligned: [AlignedFrame] = []
        for node in nodes {
            aligned += try analyzer.ingest(records(node, frames), from: node)
        }
        return aligned
    }
}

extension MediaTime {
    static func ms(_ milliseconds: Double) -> MediaTime {
        MediaTime(nanoseconds: Int64((milliseconds * 1_000_000).rounded()))
    }
}
