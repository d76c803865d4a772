internal import CGStreamer
internal import CLockstepShims
import Dispatch
import Foundation
import LockstepTime

extension Player {
    /// Seeks the current item to `date`, where its media gives dates (AVPlayer's `seek(to:)` with a
    /// date); the handler gets false when it has none.
    public func seek(to date: Date, completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        guard let item = currentItem, item.seek(to: date, completionHandler: completionHandler) else {
            completionHandler?(false)
            return
        }
    }

    /// `seek(to:completionHandler:)` with a date, awaiting whether it finished.
    public func seek(to date: Date) async -> Bool {
        await withCheckedContinuation { continuation in seek(to: date) { continuation.resume(returning: $0) } }
    }

    /// Seeks to `time`, fast: the nearest keyframe at or before it (`seek(to:)`).
    public func seek(to time: MediaTime, completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        seek(
            to: time, toleranceBefore: .positiveInfinity, toleranceAfter: .positiveInfinity,
            completionHandler: completionHandler)
    }

    /// Seeks to a time within `[time - toleranceBefore, time + toleranceAfter]`. Zero tolerances
    /// land on the exact frame; wider tolerances allow a faster keyframe seek. The handler gets
    /// true when the seek finished, false when a later seek, a load or an error superseded it.
    public func seek(
        to time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime,
        completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        guard time.isNumeric, toleranceBefore >= .zero, toleranceAfter >= .zero else {
            logger.warning("seek with an unusable time ignored", metadata: ["seek.time_ns": .nanoseconds(time)])
            if let completionHandler { deliver(on: nil) { completionHandler(false) } }
            return
        }
        queue.async {
            self.requestSeek(
                self.makeSeek(
                    to: time, before: toleranceBefore, after: toleranceAfter, queue: nil,
                    completion: completionHandler))
        }
    }

    /// `seek(to:toleranceBefore:toleranceAfter:)`, awaiting whether it finished.
    public func seek(
        to time: MediaTime, toleranceBefore: MediaTime = .positiveInfinity,
        toleranceAfter: MediaTime = .positiveInfinity
    ) async -> Bool {
        await withCheckedContinuation { continuation in
            seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter) {
                continuation.resume(returning: $0)
            }
        }
    }

    func cancelPendingSeeks(of item: PlayerItem) {
        queue.async {
            guard item === self.engine.loadedItem else { return }
            for seek in [self.engine.pendingSeek, self.engine.queuedSeek].compactMap({ $0 }) {
                if let completion = seek.completion { self.deliver(on: seek.queue) { completion(false) } }
            }
            self.engine.pendingSeek?.completion = nil
            self.engine.queuedSeek = nil
        }
    }

    func makeSeek(
        to time: MediaTime, before: MediaTime, after: MediaTime, queue: DispatchQueue?,
        completion: (@Sendable (Bool) -> Void)?
    ) -> SeekRequest {
        engine.nextSeekID += 1
        return SeekRequest(
            id: engine.nextSeekID, target: time, toleranceBefore: before, toleranceAfter: after, queue: queue,
            completion: completion)
    }

    private func requestSeek(_ request: SeekRequest) {
        completePrerolls(false)
        guard engine.pipeline != nil, let item = engine.loadedItem, item.status != .failed else {
            if let completion = request.completion { deliver(on: request.queue) { completion(false) } }
            return
        }
        // Before the item is ready, or while a seek waits for a load (the item's bounds, a reload,
        // a rebuilt pipeline), the seek waits for the preroll too, in place of the one waiting.
        if item.status != .readyToPlay || engine.queuedSeek != nil {
            if let old = engine.queuedSeek, let completion = old.completion {
                deliver(on: old.queue) { completion(false) }
            }
            engine.queuedSeek = request
            return
        }
        performSeek(request)
    }

    /// Issues a flushing seek; a seek still outstanding is superseded and completes with false.
    func performSeek(_ request: SeekRequest) {
        guard let pipeline = engine.pipeline else { return }
        // A start waiting for its host time is armed again once the seek has prerolled.
        engine.pendingStart?.armed = false
        if hasHandedOverSuccessor(), let item = engine.loadedItem {
            // Once the current item is fully read and the next one handed over, playbin3 (GStreamer
            // 1.22.0) no longer completes a flushing seek: paused in a short looping item's last
            // seconds, an exact seek never prerolled (LoopEdgeTests). The item is loaded afresh and
            // the seek done on it; the successor is handed over again when it is read to its end.
            logger.debug(
                "seek after the next item was handed over: reloading the item",
                metadata: ["seek.time_ns": .nanoseconds(request.target)])
            if let old = engine.pendingSeek, let completion = old.completion {
                deliver(on: old.queue) { completion(false) }
                engine.pendingSeek = nil
            }
            forgetHandedOverSuccessors()
            load(item)
            engine.queuedSeek = request
            return
        }
        if engine.pendingSeek == nil, engine.loadedItem?.asset.isFileBased == false, pipeline.playbin.isChangingState {
            // Over the network a pause prerolls late (its sink waits for data); a seek issued
            // meanwhile would be completed by that preroll, on the frame before it. It waits for it.
            if let old = engine.queuedSeek, let completion = old.completion {
                deliver(on: old.queue) { completion(false) }
            }
            engine.queuedSeek = request
            return
        }
        if let old = engine.pendingSeek, let completion = old.completion {
            deliver(on: old.queue) { completion(false) }
        }
        let destination = engine.loadedItem.map { seekDestination(for: request, in: $0) } ?? request.target
        engine.pendingSeek = request
        engine.prerolled = false
        // Forward, the item's end time is the seek's stop: the item ends exactly there.
        let end = engine.loadedItem?.playbackEnd ?? .indefinite
        let forwardEnd = engine.loadedItem?.forwardPlaybackEndTime ?? .invalid
        let stop = engine.segmentRate > 0 && forwardEnd.isNumeric && forwardEnd > destination ? forwardEnd : .invalid
        pipeline.groups.restart(
            with: GroupTiming(
                start: destination, end: end, runningStart: .zero, rate: engine.segmentRate,
                origin: engine.loadedItem?.streamTimeOrigin ?? .zero),
            sameGroup: true)
        engine.pendingSeekIssue = seeksIssued.add(1, ordering: .sequentiallyConsistent).newValue
        if !pipeline.playbin.seek(
            to: destination, rate: engine.segmentRate, flags: GST_SEEK_FLAG_ACCURATE, stop: stop)
        {
            engine.pendingSeek = nil
            // Right after a stream switch decodebin3 may refuse a seek while it reconfigures (a
            // picture chosen, then a seek at once: CI saw it once in a few hundred runs). The seek
            // is tried again shortly while the switch is that recent, unless a newer one came.
            if pipeline.switchedStreams(within: Self.streamSwitchRaceWindow) {
                logger.debug(
                    "seek refused during a stream switch; trying again",
                    metadata: ["seek.time_ns": .nanoseconds(request.target)])
                let item = engine.loadedItem
                queue.asyncAfter(deadline: .now() + .milliseconds(20)) { [weak self] in
                    guard let self else { return }
                    guard self.engine.pipeline === pipeline, self.engine.loadedItem === item,
                        self.engine.nextSeekID == request.id, self.engine.pendingSeek == nil,
                        self.engine.queuedSeek == nil
                    else {
                        if let completion = request.completion { self.deliver(on: request.queue) { completion(false) } }
                        return
                    }
                    self.performSeek(request)
                }
                return
            }
            logger.warning("seek refused by the pipeline", metadata: ["seek.time_ns": .nanoseconds(request.target)])
            if let completion = request.completion { deliver(on: request.queue) { completion(false) } }
        }
    }

    private func seekDestination(for request: SeekRequest, in item: PlayerItem) -> MediaTime {
        guard item.asset.isFileBased, let inspection = item.inspection else { return request.target }
        return MediaInspector.seekDestination(
            for: request.target, toleranceBefore: request.toleranceBefore, toleranceAfter: request.toleranceAfter,
            in: inspection, path: item.asset.url.path)
    }
}
