import LockstepLocks
import LockstepTime

/// Loops one item on a queue player, gaplessly (`AVPlayerLooper`).
///
/// The looper keeps replicas of the template item queued behind the current one, so the pipeline
/// always has the next pass ready when the current one is fully read. As `AVPlayerLooper`
/// does, it queues more of them the shorter a pass is: the pipeline reads ahead of what it shows,
/// by up to a couple of seconds, and every pass it reads needs its successor queued. On a wall
/// every node loops on its own without a controller, and the running time, and sync, carry on.
public final class PlayerLooper: Sendable {
    public let player: QueuePlayer
    public let templateItem: PlayerItem
    /// The stretch of the item each pass plays (`AVPlayerLooper.loopRange`); the whole item when
    /// created without one.
    public let loopRange: MediaTimeRange?
    private let state = Mutex((loops: 0, enabled: true))

    /// Empties the player's queue and fills it with replicas of `templateItem`, each playing
    /// `timeRange` of it (nil: all of it). Each pass lasts exactly the range's duration, whatever
    /// the file holds past its end.
    public init(player: QueuePlayer, templateItem: PlayerItem, timeRange: MediaTimeRange? = nil) {
        self.player = player
        self.templateItem = templateItem
        loopRange = timeRange
        player.removeAllItems()
        player.actionAtItemEnd = .advance
        player.advanced.withLock { [weak self] hook in
            hook = { [weak self] _ in self?.passCompleted() }
        }
        for _ in 0..<Self.replicaCount(passing: timeRange?.duration ?? templateItem.duration) {
            player.insert(replica(), after: nil)
        }
    }

    /// How far ahead of what it shows the pipeline may read, in seconds of passes queued.
    static let queuedAhead = 3.0

    /// How many passes to keep queued: enough to cover `queuedAhead`, two at least.
    static func replicaCount(passing duration: MediaTime) -> Int {
        let seconds = duration.seconds
        guard seconds.isFinite, seconds > 0 else { return 3 }
        return min(100, max(2, Int((queuedAhead / seconds).rounded(.up)) + 1))
    }

    private func replica() -> PlayerItem {
        let item = PlayerItem(asset: templateItem.asset)
        if let loopRange {
            item.playbackStartTime = loopRange.start
            item.forwardPlaybackEndTime = loopRange.end
        }
        return item
    }

    /// How many passes have completed.
    public var loopCount: Int { state.withLock { $0.loops } }

    /// Lets the current pass play to its end and stops looping there.
    public func disableLooping() {
        state.withLock { $0.enabled = false }
        player.advanced.withLock { $0 = nil }
        for item in player.items().dropFirst() { player.remove(item) }
    }

    private func passCompleted() {
        let enabled = state.withLock { state -> Bool in
            state.loops += 1
            return state.enabled
        }
        guard enabled else { return }
        player.insert(replica(), after: nil)
    }
}
