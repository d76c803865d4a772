import Synchronization

/// Loops one item on a queue player, gaplessly (`AVPlayerLooper`).
///
/// The looper keeps a replica of the template item queued behind the current one, so the
/// pipeline always has the next pass ready when the current one is fully read. On a wall every
/// node loops on its own without a controller, and the running time, and sync, carry on.
public final class PlayerLooper: Sendable {
    public let player: QueuePlayer
    public let templateItem: PlayerItem
    private let state = Mutex((loops: 0, enabled: true))

    /// Empties the player's queue and fills it with replicas of `templateItem`.
    public init(player: QueuePlayer, templateItem: PlayerItem) {
        self.player = player
        self.templateItem = templateItem
        player.removeAllItems()
        player.actionAtItemEnd = .advance
        player.advanced.withLock { [weak self] hook in
            hook = { [weak self] _ in self?.passCompleted() }
        }
        player.insert(PlayerItem(asset: templateItem.asset), after: nil)
        player.insert(PlayerItem(asset: templateItem.asset), after: nil)
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
        let replica = PlayerItem(asset: templateItem.asset)
        player.insert(replica, after: nil)
    }
}
