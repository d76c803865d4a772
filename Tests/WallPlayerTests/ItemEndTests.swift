import CGStreamer
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

final class ItemEndTests: XCTestCase {
    func testEnd_whenActionIsPause_postsDidPlayToEndAndPauses() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 1), audio: Headless.audio)
        let item = try XCTUnwrap(player.currentItem)
        let events = item.events
        player.play()
        let rates = player.rateUpdates
        _ = try await first(in: events, within: 10, "end of item") { $0 == .didPlayToEndTime }
        // Both in place before either is told.
        _ = try await first(in: rates, within: 5, "rate 0 at the end, paused already") {
            $0 == 0 && player.timeControlStatus == .paused
        }
        XCTAssertEqual(player.timeControlStatus, .paused)
        XCTAssertEqual(player.currentTime().seconds, 1, accuracy: 0.1)
    }

    func testEnd_whenActionIsNone_keepsTheRate() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 1))
        player.actionAtItemEnd = .none
        let events = player.currentItem!.events
        player.play()
        _ = try await first(in: events, within: 10, "end of item") { $0 == .didPlayToEndTime }
        XCTAssertEqual(player.rate, 1)
    }

    func testQueuePlayer_keepsOrderAndEdits() async throws {
        let url = try TestMedia.frameCode(seconds: 1)
        let (a, b, c, d) = (PlayerItem(url: url), PlayerItem(url: url), PlayerItem(url: url), PlayerItem(url: url))
        let player = QueuePlayer(items: [a, b, a], video: Headless.video, audioSinkDescription: nil)
        XCTAssertTrue(player.items() == [a, b], "a duplicate is not queued twice")
        XCTAssertTrue(player.currentItem === a)
        XCTAssertFalse(player.canInsert(b, after: nil), "b is queued already")
        XCTAssertFalse(player.canInsert(c, after: d), "d is not queued")
        XCTAssertTrue(player.canInsert(c, after: a))
        player.insert(c, after: a)
        player.insert(d, after: nil)
        XCTAssertTrue(player.items() == [a, c, b, d])
        player.remove(b)
        XCTAssertTrue(player.items() == [a, c, d])
        player.advanceToNextItem()
        XCTAssertTrue(player.currentItem === c)
        XCTAssertTrue(player.items() == [c, d])
        player.remove(c)
        XCTAssertTrue(player.currentItem === d, "removing the current item advances")
        player.removeAllItems()
        XCTAssertTrue(player.items().isEmpty)
        XCTAssertNil(player.currentItem)
    }

    func testQueueEdit_afterTheNextItemWasHandedOver_removingIt_playsTheOneAfter() async throws {
        let url = try TestMedia.frameCode(seconds: 2)
        let (a, b, c) = (PlayerItem(url: url), PlayerItem(url: url), PlayerItem(url: url))
        let player = QueuePlayer(items: [a, b, c], video: Headless.video, audioSinkDescription: nil)
        try await a.waitUntilReady()
        let currents = recordCurrentItems(of: player)
        let presented = player.presentedFrames
        let counted = Task {
            var frames = 0
            for await _ in presented { frames += 1 }
            return frames
        }
        player.play()
        try await waitUntilHandedOver(player)
        player.remove(b)
        XCTAssertTrue(player.items() == [a, c])
        _ = try await first(in: c.events, within: 15, "c played to its end") { $0 == .didPlayToEndTime }
        let seen = await currents.stop()
        counted.cancel()
        let frames = await counted.value
        XCTAssertFalse(seen.contains { $0 === b }, "the removed item never became current")
        XCTAssertTrue(seen.contains { $0 === c }, "the item after it did")
        // Two items of 60 frames were played, not three (the reload may show a frame again).
        XCTAssertLessThan(frames, 130, "the removed item's frames were played too")
    }

    func testQueueEdit_afterTheNextItemWasHandedOver_insertingBeforeIt_playsTheInsertedNext() async throws {
        let url = try TestMedia.frameCode(seconds: 2)
        let (a, b, c) = (PlayerItem(url: url), PlayerItem(url: url), PlayerItem(url: url))
        let player = QueuePlayer(items: [a, c], video: Headless.video, audioSinkDescription: nil)
        try await a.waitUntilReady()
        let currents = recordCurrentItems(of: player)
        let bEvents = b.events
        player.play()
        try await waitUntilHandedOver(player)
        player.insert(b, after: a)
        XCTAssertTrue(player.items() == [a, b, c])
        _ = try await first(in: c.events, within: 20, "c played to its end") { $0 == .didPlayToEndTime }
        let seen = await currents.stop()
        let order = seen.compactMap { item in [a, b, c].firstIndex { $0 === item } }
        XCTAssertEqual(order, [0, 1, 2], "a, then the inserted b, then c")
        _ = try await first(in: bEvents, within: 1, "b ended after playing") { $0 == .didPlayToEndTime }
    }

    /// Returns once the queue player has handed its next item to the pipeline (about-to-finish).
    private func waitUntilHandedOver(_ player: QueuePlayer) async throws {
        try await withTimeout(10, "the next item handed over") {
            while !player.hasHandedOverSuccessor() { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    /// Records each item that becomes current, in order, until `stop()`.
    private func recordCurrentItems(of player: Player) -> CurrentItems {
        let updates = player.currentItemUpdates
        return CurrentItems(
            Task {
                var seen: [PlayerItem] = []
                for await item in updates {
                    if let item, seen.last !== item { seen.append(item) }
                }
                return seen
            })
    }

    func testQueuePlayer_replaceCurrentItem_replacesTheHeadOfTheQueue() throws {
        let url = try TestMedia.frameCode(seconds: 1)
        let (a, b, c, d) = (PlayerItem(url: url), PlayerItem(url: url), PlayerItem(url: url), PlayerItem(url: url))
        let player = QueuePlayer(items: [a, b, c], video: Headless.video, audioSinkDescription: nil)
        player.replaceCurrentItem(with: d)
        XCTAssertTrue(player.items() == [d, b, c], "the current item leaves, the rest stay")
        XCTAssertTrue(player.currentItem === d)
        XCTAssertNil(a.player, "the replaced item is in no player")
        player.replaceCurrentItem(with: c)
        XCTAssertTrue(player.items() == [c, b], "an item queued further on moves to the front")
        player.replaceCurrentItem(with: nil)
        XCTAssertTrue(player.items().isEmpty, "nothing current: nothing queued")
        XCTAssertNil(player.currentItem)
    }

    /// Replacing a playing item with one that cannot load stops the old media: it neither plays on
    /// under the failed item nor posts its end as the failed item's.
    func testReplacingWithAnItemThatCannotLoad_stopsTheOldMedia() async throws {
        let playing = PlayerItem(url: try TestMedia.frameCode(seconds: 2))
        let player = Player(playerItem: playing, video: Headless.video, audioSinkDescription: nil)
        try await playing.waitUntilReady()
        player.play()
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 2))
        let broken = PlayerItem(url: URL(fileURLWithPath: "/nonexistent/missing.mp4"))
        let brokenEvents = broken.events
        let presented = player.presentedFrames
        player.replaceCurrentItem(with: broken)
        _ = try await first(in: broken.statusUpdates, within: 5, "the broken item fails") { $0 == .failed }
        // Past the old media's end (1.5 s away), with a margin: no frame, no end notice.
        let seen = Task {
            var frames = 0
            for await _ in presented { frames += 1 }
            return frames
        }
        let ended = Task {
            for await event in brokenEvents where event == .didPlayToEndTime { return true }
            return false
        }
        try await Task.sleep(for: .milliseconds(2500))
        seen.cancel()
        ended.cancel()
        // A frame already on its way when the item was replaced may still arrive; a second of them would not.
        let frames = await seen.value
        XCTAssertLessThanOrEqual(frames, 2, "the old media played on under the failed item")
        let endPosted = await ended.value
        XCTAssertFalse(endPosted, "the old media's end was posted as the failed item's")
        XCTAssertTrue(player.currentItem === broken)
    }

    /// An end posted by the media replaced, handled after the new item's load, is not the new
    /// item's end: the bus message carries the load it was posted under.
    func testEndOfTheReplacedMedia_handledAfterTheNewLoad_isNotTheNewItemsEnd() async throws {
        let url = try TestMedia.frameCode(seconds: 3)
        let replaced = PlayerItem(url: url)
        let player = Player(playerItem: replaced, video: Headless.video, audioSinkDescription: nil)
        try await replaced.waitUntilReady()
        player.play()
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 2))
        let pipeline = try XCTUnwrap(player.pipelineRef.withLock { $0 })
        let next = PlayerItem(url: url)
        let nextEvents = next.events
        // The player's queue is held while the new item's load is queued and the old media posts
        // its end: the load runs first, then the end is handled.
        let hold = DispatchSemaphore(value: 0)
        player.queue.async { hold.wait() }
        player.replaceCurrentItem(with: next)
        let bus = try XCTUnwrap(gst_element_get_bus(pipeline.playbin.cast(to: GstElement.self)))
        XCTAssertEqual(gst_bus_post(bus, gst_message_new_eos(pipeline.playbin.gstObject)), 1)
        gst_object_unref(bus)
        hold.signal()
        try await next.waitUntilReady()
        let ended = Task {
            for await event in nextEvents where event == .didPlayToEndTime { return true }
            return false
        }
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 1))
        ended.cancel()
        let endPosted = await ended.value
        XCTAssertFalse(endPosted, "the replaced media's end was posted as the new item's")
        XCTAssertEqual(player.rate, 1, "the new item was stopped by the replaced media's end")
    }

    func testItem_currentInOnePlayer_isRefusedByAnother() throws {
        let item = PlayerItem(url: try TestMedia.frameCode(seconds: 1))
        let first = Player(playerItem: item, video: Headless.video, audioSinkDescription: nil)
        let second = Player(playerItem: nil, video: Headless.video, audioSinkDescription: nil)
        second.replaceCurrentItem(with: item)
        XCTAssertNil(second.currentItem)
        XCTAssertTrue(first.currentItem === item)
        XCTAssertTrue(item.player === first)
        let queue = QueuePlayer(items: [item], video: Headless.video, audioSinkDescription: nil)
        XCTAssertTrue(queue.items().isEmpty)
        XCTAssertFalse(queue.canInsert(item, after: nil))
        first.replaceCurrentItem(with: nil)
        second.replaceCurrentItem(with: item)
        XCTAssertTrue(second.currentItem === item, "free again once its player let go of it")
    }

    func testQueuePlayer_advancesGaplesslyAtTheEnd() async throws {
        let url = try TestMedia.frameCode(seconds: 1)
        let first = PlayerItem(url: url)
        let second = PlayerItem(url: url)
        let player = QueuePlayer(items: [first, second], video: Headless.video, audioSinkDescription: Headless.audio)
        try await first.waitUntilReady()
        let presented = player.presentedFrames
        let ended = first.events
        player.play()
        _ = try await TestSupport.first(in: ended, within: 10, "first item ends") { $0 == .didPlayToEndTime }
        _ = try await TestSupport.first(in: player.currentItemUpdates, within: 5, "second is current") { $0 === second }
        XCTAssertEqual(second.status, .readyToPlay)
        XCTAssertEqual(player.items().count, 1)
        // Every frame of both passes, each presented one frame after the one before: no gap.
        let frames = try await collect(50, from: presented, "both passes presented")
        let gaps = zip(frames, frames.dropFirst()).map { ($1.runningTime - $0.runningTime).seconds }
        XCTAssertTrue(gaps.allSatisfy { abs($0 - 1.0 / 30) < 0.002 }, "running time steps: \(gaps)")
        XCTAssertTrue(
            zip(frames, frames.dropFirst()).contains { $1.presentationTimestamp < $0.presentationTimestamp },
            "the presentation timestamps restart with the second item")
    }

    func testPlayerLooper_loopsWithoutGaps() async throws {
        let player = QueuePlayer(items: [], video: Headless.video, audioSinkDescription: Headless.audio)
        let looper = PlayerLooper(player: player, templateItem: PlayerItem(url: try TestMedia.frameCode(seconds: 1)))
        try await player.currentItem!.waitUntilReady()
        let presented = player.presentedFrames
        player.play()
        let frames = try await collect(75, from: presented, within: 15, "two and a half passes")
        XCTAssertGreaterThanOrEqual(looper.loopCount, 2)
        let gaps = zip(frames, frames.dropFirst()).map { ($1.runningTime - $0.runningTime).seconds }
        XCTAssertTrue(gaps.allSatisfy { abs($0 - 1.0 / 30) < 0.002 }, "running time steps: \(gaps)")
        // The queue stays as deep as the looper made it: one replica refilled per pass.
        let depth = PlayerLooper.replicaCount(passing: player.currentItem!.duration)
        XCTAssertEqual(depth, 4, "three seconds of one-second passes, and the one after")
        XCTAssertLessThanOrEqual(player.items().count, depth)
    }
}

private func == (lhs: [PlayerItem], rhs: [PlayerItem]) -> Bool {
    lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0 === $1 }
}

/// The items a player made current, collected by a task until stopped.
private struct CurrentItems {
    let task: Task<[PlayerItem], Never>
    init(_ task: Task<[PlayerItem], Never>) { self.task = task }
    func stop() async -> [PlayerItem] {
        task.cancel()
        return await task.value
    }
}

/// A start a few milliseconds before an item's end, as a node anchors after a seek there: the
/// next item follows at exactly the host time the remaining media takes.
final class StartNearItemEndTests: XCTestCase {
    func testStartJustBeforeTheEnd_theNextItemIsDueWhenTheFirstRunsOut() async throws {
        let a = try TestMedia.frameCode(seconds: 4)
        let b = try TestMedia.frameCode(seconds: 3)
        for remainingMs in [23, 40, 1, 33, 50] {
            let start = MediaTime(value: Int64(4000 - remainingMs), timescale: 1000)
            let first = PlayerItem(url: a)
            first.playbackStartTime = start
            first.forwardPlaybackEndTime = MediaTime(value: 4, timescale: 1)
            let second = PlayerItem(url: b)
            second.playbackStartTime = .zero
            second.forwardPlaybackEndTime = MediaTime(value: 3, timescale: 1)
            let player = QueuePlayer(items: [first, second], video: Headless.video, audioSinkDescription: nil)
            player.automaticallyWaitsToMinimizeStalling = false
            try await first.waitUntilReady()
            let prerolled = Mutex<Bool?>(nil)
            player.preroll(atRate: 1) { done in prerolled.withLock { $0 = done } }
            try await withTimeout(10, "preroll") {
                while prerolled.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            XCTAssertEqual(prerolled.withLock { $0 }, true, "the preroll at \(start.seconds) s finished")
            let presented = player.presentedFrames
            let at = MasterClock.host.now() + MediaTime(value: 1, timescale: 2)
            try player.setRate(1, time: start, atHostTime: at)
            let frames: [PresentedFrame]
            do {
                frames = try await collect(8, from: presented, within: 10, "frames from \(start.seconds) s")
            } catch {
                // Seen once in a full CI run (not in 35 runs alone, quiet or loaded): say where it stood.
                throw TestSupportError(
                    "\(error); player \(player.timeControlStatus) rate \(player.rate), item "
                        + "\(player.currentItem.map { "\($0.status) \($0.error.map { "\($0)" } ?? "")" } ?? "none"), "
                        + "\(player.items().count) queued")
            }
            let lines = frames.map {
                "pts \($0.presentationTimestamp.seconds) due +\(($0.dueAt - at).seconds) shown +\(($0.presentedAt - at).seconds)"
            }
            print("remaining \(remainingMs) ms:\n  " + lines.joined(separator: "\n  "))
            let next = try XCTUnwrap(frames.first { $0.presentationTimestamp < MediaTime(value: 1, timescale: 1) })
            XCTAssertEqual(
                (next.dueAt - at).seconds, Double(remainingMs) / 1000, accuracy: 0.002,
                "remaining \(remainingMs) ms: the next item's first frame")
            player.pause()
            player.removeAllItems()
        }
    }
}
