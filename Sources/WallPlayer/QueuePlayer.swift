import Foundation
import LockstepLocks
import LockstepTime
import Logging

/// Plays a queue of items one after another (`AVQueuePlayer`).
///
/// When an item is fully read, the next one is handed to the same pipeline, so where the media
/// allow, the move to the next item is gapless and the running time, and with it a wall's sync,
/// carries on unbroken.
public final class QueuePlayer: Player, @unchecked Sendable {
    private struct Queue {
        var items: [PlayerItem] = []
        /// The items handed to the pipeline at about-to-finish, oldest first, each until its
        /// stream starts. More than one when items are shorter than the pipeline reads ahead:
        /// the next about-to-finish can come before the previous successor is shown.
        var handedOver: [PlayerItem] = []
        /// An edit removed an item handed over, or put one before it: the pipeline plays what it
        /// was handed, whatever the queue says now (GStreamer takes no successor back).
        var handedOverIsStale = false

        mutating func forgetHandedOver() {
            handedOver = []
            handedOverIsStale = false
        }

        /// Whether an item inserted at `index` lands before one already handed over.
        func handsOverFrom(_ index: Int) -> Bool {
            handedOver.contains { item in (items.firstIndex { $0 === item } ?? -1) > index }
        }
    }

    private let itemQueue = Mutex(Queue())
    /// Called on the control queue after the queue moved on (the looper refills here).
    let advanced = Mutex<(@Sendable (PlayerItem?) -> Void)?>(nil)

    /// A player for `items`, played in order; the first becomes current.
    public init(
        items: [PlayerItem], video: VideoOutputSettings? = VideoOutputSettings(),
        audioSinkDescription: String? = "autoaudiosink", logger: Logger = Logger(label: "wallplayer")
    ) {
        super.init(playerItem: nil, video: video, audioSinkDescription: audioSinkDescription, logger: logger)
        var accepted: [PlayerItem] = []
        for item in items where !accepted.contains(where: { $0 === item }) && admits(item) { accepted.append(item) }
        itemQueue.withLock { $0.items = accepted }
        if let first = accepted.first { makeCurrent(first) }
    }

    override class var defaultActionAtItemEnd: ActionAtItemEnd { .advance }

    /// The queued items, the current one first.
    public func items() -> [PlayerItem] { itemQueue.withLock { $0.items } }

    /// Ends the current item and makes the next one current.
    public func advanceToNextItem() {
        let next = itemQueue.withLock { queue -> PlayerItem? in
            if !queue.items.isEmpty { queue.items.removeFirst() }
            queue.forgetHandedOver()
            return queue.items.first
        }
        makeCurrent(next)
        notifyAdvanced(next)
    }

    /// Makes `item` the current item in place of the current one, which leaves the queue; the
    /// items after it stay (`AVQueuePlayer`: `items()` always starts with the current item). An
    /// item queued further on moves to the front. Nil empties the queue: with nothing current,
    /// nothing is queued either.
    public override func replaceCurrentItem(with item: PlayerItem?) {
        guard admits(item) else { return }
        itemQueue.withLock { queue in
            guard let item else {
                queue = Queue()
                return
            }
            guard queue.items.first !== item else { return }
            queue.items = [item] + queue.items.dropFirst().filter { $0 !== item }
            queue.forgetHandedOver()
        }
        makeCurrent(item)
    }

    /// Whether `item` may be inserted after `afterItem` (nil: at the end): not if it is queued
    /// already, current in another player, or `afterItem` is not queued.
    public func canInsert(_ item: PlayerItem, after afterItem: PlayerItem?) -> Bool {
        if let owner = item.player, owner !== self { return false }
        return itemQueue.withLock { queue in
            guard !queue.items.contains(where: { $0 === item }) else { return false }
            guard let afterItem else { return true }
            return queue.items.contains { $0 === afterItem }
        }
    }

    /// Inserts `item` after `afterItem`, or at the end when `afterItem` is nil. Does nothing when
    /// `canInsert(_:after:)` says no.
    public func insert(_ item: PlayerItem, after afterItem: PlayerItem?) {
        guard canInsert(item, after: afterItem) else {
            logger.warning("item not inserted: it is queued already or the anchor is not queued")
            return
        }
        let becameCurrent = itemQueue.withLock { queue -> Bool in
            let index: Int
            if let afterItem, let anchor = queue.items.firstIndex(where: { $0 === afterItem }) {
                index = anchor + 1
            } else {
                index = queue.items.count
            }
            queue.items.insert(item, at: index)
            if queue.handsOverFrom(index) { queue.handedOverIsStale = true }
            return queue.items.count == 1
        }
        if becameCurrent { makeCurrent(item) }
    }

    /// Removes `item` from the queue; removing the current item advances.
    public func remove(_ item: PlayerItem) {
        if currentItem === item { return advanceToNextItem() }
        itemQueue.withLock { queue in
            if queue.handedOver.contains(where: { $0 === item }) { queue.handedOverIsStale = true }
            queue.items.removeAll { $0 === item }
        }
    }

    /// Empties the queue; nothing is current afterwards.
    public func removeAllItems() {
        itemQueue.withLock { $0 = Queue() }
        makeCurrent(nil)
    }

    // MARK: Hooks

    override func gaplessSuccessorURI() -> String? {
        guard actionAtItemEnd == .advance else { return nil }
        return itemQueue.withLock { queue -> String? in
            // The item after the last one handed over, or after the current one.
            let last = queue.handedOver.last.flatMap { last in queue.items.firstIndex { $0 === last } } ?? 0
            guard last + 1 < queue.items.count else { return nil }
            let next = queue.items[last + 1]
            guard case .success? = next.asset.loadedInspection,
                let groups = pipelineRef.withLock({ $0 })?.groups,
                groups.append(start: next.playbackStartTime, end: next.playbackEnd, origin: next.streamTimeOrigin)
                    != nil
            else { return nil }
            queue.handedOver.append(next)
            return next.asset.url.absoluteString
        }
    }

    override func hasHandedOverSuccessor() -> Bool {
        itemQueue.withLock { !$0.handedOver.isEmpty }
    }

    override func forgetHandedOverSuccessors() {
        itemQueue.withLock { $0.forgetHandedOver() }
    }

    override func streamStarted() {
        // A successor handed over before the queue was edited has started: the current item has
        // ended, and the queue's own next item is loaded in its place (not gapless: a frame or
        // two of the stale one may show first).
        if itemQueue.withLock({ $0.handedOverIsStale && !$0.handedOver.isEmpty }) {
            logger.debug("the successor handed over was edited out of the queue: loading the queue's next item")
            itemQueue.withLock { $0.items.first }?.post(.didPlayToEndTime)
            _ = advanceAfterEnd()
            return
        }
        let arriving = itemQueue.withLock { queue -> (ended: [PlayerItem], next: PlayerItem)? in
            guard !queue.handedOver.isEmpty else { return nil }
            let next = queue.handedOver.removeFirst()
            guard let index = queue.items.firstIndex(where: { $0 === next }) else { return nil }
            let ended = Array(queue.items[0..<index])
            queue.items.removeSubrange(0..<index)
            return (ended, next)
        }
        guard let arriving else { return }
        logger.debug("gapless advance", metadata: ["player.item": "\(arriving.next.asset.url.lastPathComponent)"])
        for item in arriving.ended { item.post(.didPlayToEndTime) }
        // The item is ready before anyone sees it current: observers never meet a half-made state.
        var facts = PlayerItem.Facts()
        if case .success(let inspection)? = arriving.next.asset.loadedInspection {
            facts.duration = inspection.duration
            facts.isSeekable = arriving.next.asset.isFileBased
            facts.seekableTimeRanges = [MediaTimeRange(start: .zero, duration: inspection.duration)]
            facts.loadedTimeRanges = facts.seekableTimeRanges
        }
        arriving.next.markReady(facts)
        engine.loadedItem = arriving.next
        applySelectionCriteria(to: arriving.next)
        if let pipeline = engine.pipeline { applyTrackSelection(for: arriving.next, on: pipeline) }
        setCurrentItem(arriving.next)
        refreshTimebase()
        // Once per pass that ended: a looper refills one replica for each.
        for _ in 0..<max(1, arriving.ended.count) { notifyAdvanced(arriving.next) }
    }

    override func advanceAfterEnd() -> Bool {
        let next = itemQueue.withLock { queue -> PlayerItem? in
            if !queue.items.isEmpty { queue.items.removeFirst() }
            queue.forgetHandedOver()
            return queue.items.first
        }
        setCurrentItem(next)
        load(next)
        notifyAdvanced(next)
        return true
    }

    private func notifyAdvanced(_ item: PlayerItem?) {
        advanced.withLock { $0 }?(item)
    }
}
