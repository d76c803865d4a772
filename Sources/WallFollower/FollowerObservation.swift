import LockstepTime

/// What the driver reads before each step of the machine: the clock, and what the player did.
public struct FollowerObservation: Hashable, Sendable {
    public var clock: ClockReading
    /// The newest frame the sink presented, if any since the node started.
    public var latestFrame: FrameSample?
    /// Passes the player holds: the current one and those queued behind it.
    public var queuedPasses: Int
    /// Whether the player's rate is 0.
    public var playerPaused: Bool

    public init(clock: ClockReading, latestFrame: FrameSample?, queuedPasses: Int, playerPaused: Bool) {
        self.clock = clock
        self.latestFrame = latestFrame
        self.queuedPasses = queuedPasses
        self.playerPaused = playerPaused
    }
}

/// The master clock as a node follows it now.
public enum ClockReading: Hashable, Sendable {
    /// Usable to play a wall on (`ClockState.isUsable`): the master's time now, and the master's
    /// epoch when it names one.
    case usable(now: MediaTime, epoch: UInt64?)
    /// Not usable: its state, for the report.
    case unusable(state: String)
}

/// One frame the sink presented, on the master clock.
public struct FrameSample: Hashable, Sendable {
    /// Counts up by one per frame presented.
    public var sequence: UInt64
    public var presentationTimestamp: MediaTime
    /// When the sink handed it on, and when it was due.
    public var presentedAt: MediaTime
    public var dueAt: MediaTime

    public init(sequence: UInt64, presentationTimestamp: MediaTime, presentedAt: MediaTime, dueAt: MediaTime) {
        self.sequence = sequence
        self.presentationTimestamp = presentationTimestamp
        self.presentedAt = presentedAt
        self.dueAt = dueAt
    }
}
