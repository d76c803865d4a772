import LockstepLocks
import LockstepTime
import WallPlayer
import WallProtocol

/// The frames this node's sink presented, numbered and kept in a ring for `wallctl drift` to
/// collect: a bounded window, so memory stays flat however long the node runs.
public final class FrameLog: Sendable {
    /// Frames presented later than this after they were due count as late.
    public static let lateThreshold = MediaTime(value: 1, timescale: 1000)

    private struct State {
        var ring: [FrameRecord?]
        var next: UInt64 = 1
        var late: UInt64 = 0
    }

    let capacity: Int
    /// This screen's display latency: a frame's wall time is when it is due plus this.
    let displayLatency: MediaTime
    /// Told every frame's lateness (the node's metrics histogram).
    private let observeLateness: @Sendable (MediaTime) -> Void
    private let state: Mutex<State>

    /// - Parameter capacity: frames kept: 8192 is 4.5 minutes at 30 fps.
    public init(
        capacity: Int = 8192, displayLatency: MediaTime = .zero,
        observeLateness: @escaping @Sendable (MediaTime) -> Void = { _ in }
    ) {
        self.capacity = capacity
        self.displayLatency = displayLatency
        self.observeLateness = observeLateness
        state = Mutex(State(ring: Array(repeating: nil, count: capacity)))
    }

    /// Records every frame the player presents, until the task is cancelled.
    public func record(from player: Player) async {
        for await frame in player.presentedFrames {
            append(frame)
        }
    }

    /// Records what every one of `players` presents (a screen's player and its standby), until
    /// the task is cancelled.
    public func record(from players: [Player]) async {
        await withDiscardingTaskGroup { group in
            for player in players { group.addTask { await self.record(from: player) } }
        }
    }

    public func append(_ frame: PresentedFrame) {
        state.withLock { state in
            let record = FrameRecord(
                sequence: state.next, presentationTimestamp: frame.presentationTimestamp,
                runningTime: frame.runningTime, presentedAt: frame.presentedAt, dueAt: frame.dueAt,
                wallTime: frame.dueAt + displayLatency)
            state.ring[Int((state.next - 1) % UInt64(capacity))] = record
            state.next += 1
            if frame.lateness > Self.lateThreshold { state.late += 1 }
        }
        observeLateness(frame.lateness)
    }

    /// The records after `sequence`, oldest first, at most `limit` (at least one); and how many
    /// after `sequence` are gone from the ring already. Any `sequence` is answered: one past the
    /// newest record gets nothing.
    public func records(after sequence: UInt64, limit: Int) -> (records: [FrameRecord], missed: UInt64) {
        state.withLock { state in
            let newest = state.next - 1
            guard sequence < newest else { return ([], 0) }
            let oldestKept = newest >= UInt64(capacity) ? newest - UInt64(capacity) + 1 : 1
            let first = max(sequence + 1, oldestKept)
            let missed = first - (sequence + 1)
            let count = min(newest - first + 1, UInt64(max(1, limit)))
            let records = (first..<first + count).compactMap { state.ring[Int(($0 - 1) % UInt64(capacity))] }
            return (records, missed)
        }
    }

    /// The newest frame presented, if any.
    public var latest: FrameRecord? {
        state.withLock { state in
            state.next > 1 ? state.ring[Int((state.next - 2) % UInt64(capacity))] : nil
        }
    }

    /// Frames presented and frames presented late, since the node started.
    public var counts: (presented: UInt64, late: UInt64) {
        state.withLock { ($0.next - 1, $0.late) }
    }
}
