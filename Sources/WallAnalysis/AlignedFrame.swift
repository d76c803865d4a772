import LockstepTime

/// One frame that every node presented, as the drift analyzer aligned it: what the ground-truth
/// comparison consumes, so it can follow the wall online without the analyzer keeping frames.
public struct AlignedFrame: Sendable, Hashable {
    /// The wall's nodes, in the analyzer's order: `presentedAt[i]` belongs to `nodes[i]`.
    public var nodes: [String]
    /// The frame's running time, from the first of its records to arrive (the nodes' agree to
    /// within half a millisecond).
    public var runningTime: MediaTime
    /// The frame's timestamp in its item, which the ground-truth frame code is derived from.
    public var presentationTimestamp: MediaTime
    /// When each node presented it, on the master clock.
    public var presentedAt: [MediaTime]

    public init(nodes: [String], runningTime: MediaTime, presentationTimestamp: MediaTime, presentedAt: [MediaTime]) {
        self.nodes = nodes
        self.runningTime = runningTime
        self.presentationTimestamp = presentationTimestamp
        self.presentedAt = presentedAt
    }
}
