import LockstepTime

/// Per-bucket skew aggregates of every node, in flat arrays (`bucket * nodeCount + node`), bounded
/// by `maxBuckets`.
struct SkewSeriesAccumulator: Sendable {
    let nodeCount: Int
    let maxBuckets: Int
    private(set) var bucketWidth: Int64
    /// The running time of bucket 0's start: the first frame's, rounded down to a whole bucket so
    /// buckets start at round times.
    private var origin: Int64?
    private var frames: [Int] = []
    private var sums: [Int64] = []
    private var minimums: [Int64] = []
    private var maximums: [Int64] = []

    init(nodeCount: Int, bucketWidth: Int64, maxBuckets: Int) {
        self.nodeCount = nodeCount
        self.bucketWidth = bucketWidth
        self.maxBuckets = maxBuckets
    }

    /// How many buckets are stored, empty ones between data included.
    var bucketCount: Int { frames.count }

    mutating func add(runningTime: Int64, skews: [Int64]) {
        let start = origin ?? Nanoseconds.flooredQuotient(runningTime, bucketWidth) * bucketWidth
        origin = start
        // A frame older than the first (input out of order) joins the first bucket.
        var bucket = Int(max(0, runningTime - start) / bucketWidth)
        while bucket >= maxBuckets {
            coarsen()
            bucket = Int(max(0, runningTime - start) / bucketWidth)
        }
        while frames.count <= bucket { appendEmptyBucket() }
        frames[bucket] += 1
        for (node, skew) in skews.enumerated() {
            let slot = bucket * nodeCount + node
            sums[slot] += skew
            minimums[slot] = min(minimums[slot], skew)
            maximums[slot] = max(maximums[slot], skew)
        }
    }

    private mutating func appendEmptyBucket() {
        frames.append(0)
        sums.append(contentsOf: repeatElement(0, count: nodeCount))
        minimums.append(contentsOf: repeatElement(.max, count: nodeCount))
        maximums.append(contentsOf: repeatElement(.min, count: nodeCount))
    }

    /// Doubles the bucket width, merging buckets 2k and 2k+1 into k.
    private mutating func coarsen() {
        let merged = (frames.count + 1) / 2
        for bucket in 0..<merged {
            let (left, right) = (2 * bucket, 2 * bucket + 1)
            let hasRight = right < frames.count
            frames[bucket] = frames[left] + (hasRight ? frames[right] : 0)
            for node in 0..<nodeCount {
                let (to, from, other) = (bucket * nodeCount + node, left * nodeCount + node, right * nodeCount + node)
                sums[to] = sums[from] + (hasRight ? sums[other] : 0)
                minimums[to] = min(minimums[from], hasRight ? minimums[other] : .max)
                maximums[to] = max(maximums[from], hasRight ? maximums[other] : .min)
            }
        }
        frames.removeLast(frames.count - merged)
        let slots = merged * nodeCount
        sums.removeLast(sums.count - slots)
        minimums.removeLast(minimums.count - slots)
        maximums.removeLast(maximums.count - slots)
        bucketWidth *= 2
    }

    func series(nodes: [String]) -> SkewSeries {
        let perNode = nodes.enumerated().map { node, id in
            let points = frames.indices.filter { frames[$0] > 0 }.map { bucket in
                let slot = bucket * nodeCount + node
                let (low, high) = (minimums[slot], maximums[slot])
                return SkewPoint(
                    time: MediaTime(nanoseconds: (origin ?? 0) + Int64(bucket) * bucketWidth),
                    frames: frames[bucket],
                    meanSkew: MediaTime(
                        nanoseconds: Int64(Nanoseconds.roundedQuotient(Int128(sums[slot]), Int128(frames[bucket])))),
                    minimumSkew: MediaTime(nanoseconds: low), maximumSkew: MediaTime(nanoseconds: high),
                    maximumMagnitude: MediaTime(nanoseconds: Int64(max(low.magnitude, high.magnitude))))
            }
            return NodeSkewSeries(node: id, points: points)
        }
        return SkewSeries(bucketDuration: MediaTime(nanoseconds: bucketWidth), nodes: perNode)
    }
}
