internal import CGStreamer
internal import CLockstepShims
import Dispatch
import LockstepTime

extension Player {
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
            logger.warning("seek with an unusable time ignored", metadata: ["seek.time": "\(time)"])
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
        if item.status != .readyToPlay {
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
        if let old = engine.pendingSeek, let completion = old.completion {
            deliver(on: old.queue) { completion(false) }
        }
        var request = request
        let flags = seekFlags(for: &request)
        engine.pendingSeek = request
        engine.prerolled = false
        if !pipeline.playbin.seek(to: request.target, rate: engine.segmentRate, flags: flags) {
            logger.warning("seek refused by the pipeline", metadata: ["seek.time": "\(request.target)"])
            engine.pendingSeek = nil
            if let completion = request.completion { deliver(on: request.queue) { completion(false) } }
        }
    }

    /// GStreamer seek flags for the tolerances: exact for zero tolerances, a keyframe on the side
    /// the tolerance allows, and the nearest keyframe (checked afterwards) when both are finite.
    private func seekFlags(for request: inout SeekRequest) -> GstSeekFlags {
        let before = request.toleranceBefore
        let after = request.toleranceAfter
        let keyUnit = GST_SEEK_FLAG_KEY_UNIT.rawValue
        if before == .zero, after == .zero {
            return GST_SEEK_FLAG_ACCURATE
        }
        if after == .zero || (before.isPositiveInfinity && after.isPositiveInfinity) {
            request.needsCheck = !before.isPositiveInfinity
            return GstSeekFlags(rawValue: keyUnit | GST_SEEK_FLAG_SNAP_BEFORE.rawValue)
        }
        if before == .zero {
            request.needsCheck = !after.isPositiveInfinity
            return GstSeekFlags(rawValue: keyUnit | GST_SEEK_FLAG_SNAP_AFTER.rawValue)
        }
        request.needsCheck = true
        return GstSeekFlags(rawValue: keyUnit | GST_SEEK_FLAG_SNAP_NEAREST.rawValue)
    }
}
