import LockstepTime

/// Skew over time for the plot: per node, one point per time bucket of running time.
///
/// The series stays under a fixed number of buckets however long the run: when a run outgrows it,
/// the buckets double in duration and merge in pairs, so an hour-long report plots as smoothly as a
/// minute-long one and its size stays flat.
public struct SkewSeries: Sendable, Hashable, Codable {
    /// How much running time each point covers.
    @NanosecondsCoded public var bucketDuration: MediaTime
    /// One series per node, in the wall's order.
    public var nodes: [NodeSkewSeries]

    enum CodingKeys: String, CodingKey {
        case nodes
        case bucketDuration = "bucketDurationNs"
    }

    public init(bucketDuration: MediaTime, nodes: [NodeSkewSeries]) {
        self.bucketDuration = bucketDuration
        self.nodes = nodes
    }
}

/// One node's skew over time.
public struct NodeSkewSeries: Sendable, Hashable, Codable {
    public var node: String
    /// The buckets in which the wall aligned frames, oldest first; empty buckets are left out.
    public var points: [SkewPoint]

    public init(node: String, points: [SkewPoint]) {
        self.node = node
        self.points = points
    }
}

/// A node's skew (its `presentedAt` minus the wall's median) over one bucket of running time.
public struct SkewPoint: Sendable, Hashable, Codable {
    /// The running time at which the bucket starts.
    @NanosecondsCoded public var time: MediaTime
    /// How many aligned frames the bucket holds.
    public var frames: Int
    /// The mean signed skew: positive when the node presents after the wall.
    @NanosecondsCoded public var meanSkew: MediaTime
    @NanosecondsCoded public var minimumSkew: MediaTime
    @NanosecondsCoded public var maximumSkew: MediaTime
    /// The largest |skew|: the worst moment that the mean smooths away.
    @NanosecondsCoded public var maximumMagnitude: MediaTime

    enum CodingKeys: String, CodingKey {
        case frames
        case time = "timeNs", meanSkew = "meanSkewNs", minimumSkew = "minimumSkewNs", maximumSkew = "maximumSkewNs", maximumMagnitude = "maximumMagnitudeNs"
    }

    public init(
        time: MediaTime, frames: Int, meanSkew: MediaTime, minimumSkew: MediaTime, maximumSkew: MediaTime,
        maximumMagnitude: MediaTime
    ) {
        self.time = time
        self.frames = frames
        self.meanSkew = meanSkew
        self.minimumSkew = minimumSkew
        self.maximumSkew = maximumSkew
        self.maximumMagnitude = maximumMagnitude
    }
}
