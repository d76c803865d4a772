internal import CGStreamer
internal import CLockstepShims
import Dispatch
import Foundation
import LockstepTime

/// The player's engine: everything here runs on the control queue.
struct Engine {
    var pipeline: PlaybackPipeline?
    /// The item the pipeline plays (during a gapless change it leads `currentItem` briefly).
    var loadedItem: PlayerItem?
    /// The pipeline has a frame in every sink and no seek outstanding.
    var prerolled = false
    var pipelineState = GST_STATE_NULL
    /// The rate of the pipeline's current segment.
    var segmentRate: Double = 1
    /// The item time at running time zero, while that holds: after a flushing seek or a load,
    /// until the pipeline plays.
    var runningTimeZero: MediaTime?
    /// The pipeline's base time is set explicitly (a scheduled start) rather than by GStreamer.
    var scheduledMode = false
    var pendingSeek: SeekRequest?
    /// `Player.seeksIssued` once the pending seek was issued.
    var pendingSeekIssue: Int?
    /// A seek asked for before the item was ready.
    var queuedSeek: SeekRequest?
    var prerollHandlers: [(queue: DispatchQueue?, handler: @Sendable (Bool) -> Void)] = []
    var pendingStart: ScheduledStart?
    var startAlarms: [ClockAlarm] = []
    var buffering = false
    var timebase = Timebase.stopped(at: .zero)
    var observers: [ObjectIdentifier: TimeObserver] = [:]
    var nextSeekID = 0
    var nextStartID = 0
    /// Numbers each load, so a preroll watchdog knows whether its load is still the current one.
    var loadGeneration = 0
    /// The pipeline prerolled since the last load (a first load, or a ready item loaded again).
    var loadPrerolled = true
    /// Pipelines rebuilt because the current item's first preroll stalled.
    var prerollRetries = 0
    /// All the time the process stood still so far, which the preroll watchdog does not count
    /// (the process's `StandStillMonitor`; tests stand in for it).
    var stoodStill: @Sendable () -> MediaTime = { StandStillMonitor.process.total() }
    /// The pipeline met a streaming error: the next load builds a new one rather than reuse it.
    var pipelineFailed = false
    /// Since when a network item's server has not answered, where the item was then, and whether
    /// the item has been loaded again since (only that load's preroll ends the outage).
    var outage: (began: MediaTime, position: MediaTime, reloaded: Bool)?
}

struct SeekRequest {
    var id: Int
    var target: MediaTime
    var toleranceBefore: MediaTime
    var toleranceAfter: MediaTime
    var queue: DispatchQueue?
    var completion: (@Sendable (Bool) -> Void)?
}

struct ScheduledStart {
    var id: Int
    var rate: Float
    var itemTime: MediaTime
    var hostTime: MediaTime
    /// A pause's start: its first frame presented at the host time, then paused there
    /// (`setRate(0, time:atHostTime:)` on a prerolled pipeline).
    var holdsFirstFrame = false
    /// Its base time is set and its alarms are due: a preroll now (a sink prerolling again on its
    /// way to PLAYING) changes nothing; a seek makes it to be armed again.
    var armed = false
}

// MARK: - Loading

extension Player {
    /// Makes the next item loaded play on a new GStreamer pipeline, built with the current
    /// settings, instead of the one in use.
    ///
    /// Not part of AVFoundation's model, where a new `AVPlayer` does the same: for a player that
    /// runs for months and wants a clean start after trouble (a wall node rejoining after a stall
    /// or a stop), without rewiring everything that observes it.
    public func renewPipelineAtNextLoad() {
        queue.async { self.engine.pipelineFailed = true }
    }

    func load(_ item: PlayerItem?) {
        cancelAllPending()
        loadsStarted.add(1, ordering: .sequentiallyConsistent)
        if engine.pipelineFailed, let failed = engine.pipeline {
            // A pipeline that met a streaming error can be left wedged (a queue's task stopped
            // with the error), or its owner asked for a new one: the next item gets a new one.
            engine.pipelineFailed = false
            engine.pipeline = nil
            pipelineRef.withLock { $0 = nil }
            retire(failed)
        }
        if item !== engine.loadedItem { engine.outage = nil }
        engine.loadedItem = item
        engine.prerolled = false
        engine.buffering = false
        readyForDisplayStream.update(false)
        guard let item else {
            haltLoadedMedia()
            updateIdleStatus()
            return
        }
        if !item.asset.isFileBased, item.asset.loadedInspection == nil {
            // Reading a network asset takes round trips, up to the read timeout: off this queue,
            // and the load goes on once it is read, if the item is still the one to load.
            let generation = loadsStarted.load(ordering: .sequentiallyConsistent)
            haltLoadedMedia()
            if rate != 0 { setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .evaluatingBufferingRate) }
            Task.detached { [weak self] in
                try? await item.asset.load()
                item.adoptLoadedTracks()
                guard let self else { return }
                self.queue.async {
                    guard self.engine.loadedItem === item,
                        self.loadsStarted.load(ordering: .sequentiallyConsistent) == generation
                    else { return }
                    self.load(item)
                }
            }
            return
        }
        item.adoptLoadedTracks()
        if case .failure(let error) = item.asset.inspectNow() {
            haltLoadedMedia()
            item.markFailed(error)
            updateIdleStatus()
            return
        }
        // filesrc opens its file with a blocking open(), on this queue: a path that became a FIFO
        // since it was inspected would hold the player for good.
        if item.asset.isFileBased {
            do {
                try MediaInspector.checkRegularFile(item.asset.url.path)
            } catch {
                haltLoadedMedia()
                item.markFailed(error)
                updateIdleStatus()
                return
            }
        }
        sourceChanging.store(true, ordering: .sequentiallyConsistent)
        if let reused = engine.pipeline { stopForReuse(reused) }
        guard let pipeline = ensurePipeline() else {
            sourceChanging.store(false, ordering: .sequentiallyConsistent)
            item.markFailed(error ?? .pipelineConstruction("no pipeline"))
            return
        }
        // The old source is down, its streaming threads stopped. What it posted on its way down (an
        // "Internal data stream error" from a demuxer cut off mid-file) is about the media replaced,
        // and so is any successor it asked for: neither may touch the item loaded now.
        loadsStarted.add(1, ordering: .sequentiallyConsistent)
        forgetHandedOverSuccessors()
        sourceChanging.store(false, ordering: .sequentiallyConsistent)
        pipeline.setURI(item.asset.url.absoluteString)
        applySelectionCriteria(to: item)
        applyTrackSelection(for: item, on: pipeline)
        pipeline.use(effectiveClock)
        pipeline.setLatency(pipelineLatency)
        pipeline.playbin.setStartTime(0)
        engine.scheduledMode = false
        engine.segmentRate = 1
        engine.runningTimeZero = .zero
        pipeline.groups.restart(
            with: GroupTiming(
                start: .zero, end: item.playbackEnd, runningStart: .zero, rate: 1, origin: item.streamTimeOrigin),
            sameGroup: false)
        // An item with bounds starts with a seek to them, done once it is ready.
        if item.playbackStartTime > .zero || item.forwardPlaybackEndTime.isNumeric {
            engine.queuedSeek = makeSeek(
                to: item.playbackStartTime, before: .zero, after: .zero, queue: nil, completion: nil)
        }
        setTimebase(.stopped(at: .zero))
        if rate != 0 { setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .evaluatingBufferingRate) }
        if pipeline.playbin.setState(GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE {
            logger.debug("pipeline refused PAUSED; its error message follows on the bus")
        }
        armPrerollWatchdog(for: item)
    }

    /// How long a local file's first preroll may take before the pipeline counts as stalled, the
    /// first time; each retry waits twice as long as the one before (1, 2, 4, 8 s), so a preroll
    /// that is merely slow (a disk spinning up) still completes. It normally takes tens of
    /// milliseconds: a stall found within a second leaves a new pipeline time to preroll before a
    /// start an edit's lead ahead (GlassChangeWallTests' black → clip came 8 s late on one screen
    /// when the stall was found at 3 s).
    static let prerollWatchdog = MediaTime(value: 1, timescale: 1)
    /// How many times a stalled first preroll is retried with a new pipeline.
    static let prerollRetryLimit = 3

    /// Rebuilds the pipeline if the item's first preroll stalls.
    ///
    /// playbin3 in GStreamer 1.22.0 sometimes never prerolls a local file, every streaming task
    /// waiting with nothing posted. The cause found (a stream collection handled after the
    /// selection leaves playsink waiting for a subtitle input) is worked round by
    /// `StreamChooser.confirmSelection`; the watchdog stays for whatever else stalls. A new
    /// pipeline rarely repeats a stall, so the player retries rather than hang, and fails the item
    /// with a clear error if it keeps happening.
    private func armPrerollWatchdog(for item: PlayerItem) {
        engine.loadGeneration += 1
        engine.loadPrerolled = false
        let generation = engine.loadGeneration
        guard item.asset.isFileBased else { return }
        let limit = (Self.prerollWatchdog.nanoseconds ?? 0) << min(engine.prerollRetries, Self.prerollRetryLimit)
        // Whether the item was ready before or not: a ready item loaded again (a seek after its
        // successor was handed over reloads it) stalls as a first load does, and a seek waiting on
        // that load never completed (LoopEdgeTests, once beside a compile).
        watchPreroll(of: item, generation: generation, for: MediaTime(nanoseconds: limit))
    }

    /// Rebuilds the pipeline if `item`'s preroll has not completed `wait` from now, not counting
    /// the time the process stood still (SIGSTOP, a paused machine): a stop during a preroll
    /// stopped the preroll too, and rebuilding the pipeline on waking (as the watchdog did, the
    /// dispatch timer due during the stop) only made the preparation later still.
    private func watchPreroll(of item: PlayerItem, generation: Int, for wait: MediaTime) {
        let stillBefore = engine.stoodStill()
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.nanoseconds ?? 0))) { [weak self] in
            guard let self, self.engine.loadGeneration == generation, self.engine.loadedItem === item,
                !self.engine.loadPrerolled, item.status != .failed
            else { return }
            let stoodStill = self.engine.stoodStill() - stillBefore
            if stoodStill > .zero {
                self.logger.debug(
                    "the process stood still while the pipeline prerolled; its watchdog waits that much longer",
                    metadata: ["player.item": "\(item)", "player.stood_still_ns": .nanoseconds(stoodStill)])
                self.watchPreroll(of: item, generation: generation, for: stoodStill)
                return
            }
            self.prerollStalled(item)
        }
    }

    private func prerollStalled(_ item: PlayerItem) {
        guard engine.prerollRetries < Self.prerollRetryLimit else {
            logger.error("the pipeline did not preroll; giving up", metadata: ["player.item": "\(item)"])
            let error = PlayerError.playbackFailed(
                element: "playbin3",
                reason: "the pipeline did not preroll, \(Self.prerollRetryLimit + 1) times (waiting "
                    + "\(Self.prerollWatchdog.seconds) s the first, twice as long each time after)", debug: nil)
            item.markFailed(error)
            engine.prerollRetries = 0
            cancelAllPending()
            return
        }
        engine.prerollRetries += 1
        logger.warning(
            "the pipeline did not preroll; rebuilding it",
            metadata: ["player.item": "\(item)", "player.retry": .value(engine.prerollRetries)])
        // Whoever waits for this preroll waits for the new pipeline's instead.
        let waiting = engine.prerollHandlers
        let queued = engine.queuedSeek
        engine.prerollHandlers = []
        engine.queuedSeek = nil
        let began = LocalClock.monotonic.now()
        rebuildPipeline(stalled: true)
        logger.debug(
            "a pipeline replaced the stalled one",
            metadata: ["player.rebuilt_in_ns": .nanoseconds(LocalClock.monotonic.now() - began)])
        engine.prerollHandlers = waiting
        engine.queuedSeek = queued
    }

    /// How long a pipeline being replaced may take to stop before the player goes on without it.
    public static let teardownLimit = MediaTime(value: 5, timescale: 1)

    /// Stops a pipeline the player no longer uses, before the next one is built (an exclusive
    /// audio device or window is free again). That takes milliseconds; but a pipeline can wedge
    /// inside GStreamer (a streaming thread blocked outside it, in a sink's write, holds its stream
    /// lock while the pads deactivate), and its teardown then never returns. Past `teardownLimit`
    /// it is left to its own thread, reported, and counted, and the player goes on with a new
    /// pipeline: the picture comes back instead of every later call waiting behind it.
    ///
    /// A pipeline whose preroll stalled (`stalled`) is stopped at once: its state change never
    /// ends, and settling it first held the new pipeline up 2 s (a node joining a black → clip
    /// change 8 s late in GlassChangeWallTests, twice in CI).
    func retire(_ pipeline: PlaybackPipeline, stalled: Bool = false) {
        let stopped = pipeline.stopOnItsOwnThread(settling: !stalled)
        guard stopped.wait(timeout: .now() + Self.teardownInterval) == .timedOut else { return }
        countAbandoned("a replaced pipeline did not stop: left on its own thread; going on with a new pipeline")
    }

    /// Takes the pipeline to READY to load another item (or none) on it: the old source down, its
    /// streaming threads stopped. A pipeline wedged inside GStreamer never gets there (`retire`):
    /// the change is made on a thread of its own, and past `teardownLimit` the pipeline is left to
    /// it and shut down there, and the player goes on with a new one at its next load. Before, the
    /// change waited on the control queue, and one wedged pipeline held its player for good: every
    /// later load on it timed out (a node stopped and resumed in the chaos bench, 9 minutes long).
    func stopForReuse(_ pipeline: PlaybackPipeline) {
        guard pipeline.readyOnItsOwnThread().wait(timeout: .now() + Self.teardownInterval) == .timedOut else { return }
        engine.pipeline = nil
        pipelineRef.withLock { $0 = nil }
        engine.prerolled = false
        _ = pipeline.stopOnItsOwnThread(settling: false)
        countAbandoned(
            "a pipeline did not stop for its next item: left on its own thread; going on with a new pipeline")
    }

    private static var teardownInterval: DispatchTimeInterval {
        .nanoseconds(Int(teardownLimit.nanoseconds ?? 0))
    }

    private func countAbandoned(_ message: String) {
        let stuck = pipelinesAbandoned.add(1, ordering: .relaxed).newValue
        logger.error(
            "\(message)",
            metadata: [
                "player.teardown_limit_s": .value(Self.teardownLimit.seconds),
                "player.pipelines_abandoned": .value(stuck),
            ])
    }

    func ensurePipeline() -> PlaybackPipeline? {
        if let pipeline = engine.pipeline { return pipeline }
        let current = settings.withLock { $0 }
        do {
            let pipeline = try PlaybackPipeline(
                video: current.video, audioSink: current.audioSinkDescription,
                realtimePriority: current.realtimeRenderPriority, callbacks: makeCallbacks())
            pipeline.playbin.set("volume", Double(current.volume))
            pipeline.playbin.set("mute", current.isMuted)
            pipeline.subtitles?.showClosedCaptions(current.closedCaptionDisplayEnabled)
            if !current.showsPrerollFrame { pipeline.showPrerollFrame(false) }
            engine.pipeline = pipeline
            pipelineRef.withLock { $0 = pipeline }
            if status == .unknown { statusStream.update(.readyToPlay) }
            return pipeline
        } catch {
            fail(error)
            return nil
        }
    }

    private func makeCallbacks() -> PlaybackPipeline.Callbacks {
        PlaybackPipeline.Callbacks(
            message: { [weak self] message in
                guard let self else { return }
                let load = self.loadsStarted.load(ordering: .sequentiallyConsistent)
                let seeks = self.seeksIssued.load(ordering: .sequentiallyConsistent)
                self.queue.async { self.handle(message, postedDuringLoad: load, afterSeeks: seeks) }
            },
            presented: { [weak self] frame in
                self?.presentedStream.send(frame)
            },
            aboutToFinish: { [weak self] in
                guard let self, !self.sourceChanging.load(ordering: .sequentiallyConsistent) else { return nil }
                return self.gaplessSuccessorURI()
            })
    }

    /// Builds the pipeline anew with the current output settings and restores the item, time and rate.
    ///
    /// - Parameter stalled: whether the pipeline is replaced because its preroll stalled.
    func rebuildPipeline(stalled: Bool = false) {
        guard let old = engine.pipeline else { return }
        // Where the item is, or is going: a rebuild or seek still under way has not moved the
        // pipeline yet (a sink changed twice in a row).
        let position =
            engine.queuedSeek?.target ?? engine.pendingSeek?.target ?? old.playbin.queryPosition()
            ?? engine.timebase.itemTime(atHost: .invalid)
        engine.pipeline = nil
        pipelineRef.withLock { $0 = nil }
        retire(old, stalled: stalled)
        let item = engine.loadedItem
        load(item)
        if item != nil, position > .zero {
            engine.queuedSeek = makeSeek(to: position, before: .zero, after: .zero, queue: nil, completion: nil)
        }
    }

    /// Plays the item's enabled tracks: the first of each kind, its subtitles drawn over the picture.
    func applyTrackSelection(for item: PlayerItem, on pipeline: PlaybackPipeline) {
        let choice = item.streamChoice
        pipeline.selectStreams(choice)
        guard let subtitles = pipeline.subtitles else { return }
        guard let number = choice.text else { return subtitles.show(nil, origin: .zero) }
        if let cues = item.asset.subtitleCues.withLock({ $0[number] }) {
            return showSubtitles(cues, of: item, number: number, on: subtitles)
        }
        // Reading them reads the whole file: off this queue; they show once read, if still chosen.
        subtitles.show(nil, origin: .zero)
        // A read of them already under way shows them when it ends.
        guard item.asset.claimSubtitleRead(number) else { return }
        Thread {
            let cues = item.asset.cues(ofSubtitle: number)
            self.queue.async {
                guard self.engine.loadedItem === item, item.streamChoice.text == number else { return }
                self.showSubtitles(cues, of: item, number: number, on: subtitles)
            }
        }.start()
    }

    private func showSubtitles(
        _ cues: Result<SubtitleCues, PlayerError>, of item: PlayerItem, number: Int, on overlay: SubtitleOverlay
    ) {
        switch cues {
        case .success(let cues):
            overlay.show(cues, origin: item.streamTimeOrigin)
        case .failure(let error):
            overlay.show(nil, origin: .zero)
            logger.warning(
                "subtitles cannot be shown", metadata: ["player.subtitle": .value(number), "error": "\(error)"])
        }
    }

    func tracksChanged(of item: PlayerItem) {
        queue.async {
            guard item === self.engine.loadedItem, let pipeline = self.engine.pipeline else { return }
            self.applyTrackSelection(for: item, on: pipeline)
        }
    }

    /// Stops what the pipeline plays: the item it played is replaced, by nothing or by an item that
    /// cannot load. The old media must not play on under the new item (AVPlayer shows nothing
    /// for a failed item), nor post its end as the new item's.
    private func haltLoadedMedia() {
        if let pipeline = engine.pipeline { stopForReuse(pipeline) }
        setTimebase(.stopped(at: .zero))
    }

    /// Status when there is nothing to play.
    func updateIdleStatus() {
        if rate != 0 {
            setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .noItemToPlay)
        } else {
            setTimeControl(.paused)
        }
    }
}

// MARK: - Bus messages

extension Player {
    func handle(_ message: Message, postedDuringLoad load: Int, afterSeeks seeks: Int) {
        guard let pipeline = engine.pipeline else { return }
        let pointer = message.pointer
        let source = pointer.pointee.src
        let fromPipeline = source.map { UnsafeMutableRawPointer($0) } == pipeline.playbin.raw
        let type = pointer.pointee.type
        // Posted while an item since replaced was loaded, the message is about that one: its end,
        // preroll, streams or buffering must not be taken as the item loaded now's.
        if load != loadsStarted.load(ordering: .sequentiallyConsistent), Self.messagesAboutTheLoadedMedia.contains(type)
        {
            if type == GST_MESSAGE_ERROR {
                engine.pipelineFailed = true
                let error = GStreamer.errorText(of: pointer).reason
                logger.warning("error from a replaced item ignored", metadata: ["gst.error": "\(error)"])
            } else {
                let name = String(cString: gst_message_type_get_name(type))
                logger.debug("message from a replaced item ignored", metadata: ["gst.message": "\(name)"])
            }
            return
        }
        switch type {
        case GST_MESSAGE_ERROR:
            handleError(pointer, from: source, pipeline: pipeline)
        case GST_MESSAGE_ELEMENT where gst_is_missing_plugin_message(pointer) != 0:
            // decodebin3 posts this and carries on without the stream (a video it cannot decode
            // then "plays" with no picture): the item fails, naming what is missing.
            let raw = gst_missing_plugin_message_get_description(pointer)
            let description = raw.map { String(cString: $0) } ?? "plugin"
            g_free(raw)
            let error = PlayerError.missingPlugin(
                description: description, package: MissingPlugins.debianPackage(for: description))
            logger.error("missing GStreamer plugin", metadata: ["gst.missing": "\(description)"])
            failLoadedItem(with: error, pipeline: pipeline)
        case GST_MESSAGE_WARNING:
            var warning: UnsafeMutablePointer<GError>?
            gst_message_parse_warning(pointer, &warning, nil)
            logger.warning("pipeline warning", metadata: ["gst.warning": "\(GStreamer.consume(warning))"])
        case GST_MESSAGE_EOS:
            itemReachedEnd(pipeline)
        case GST_MESSAGE_ASYNC_DONE where fromPipeline:
            // A preroll posted before the outstanding seek was issued (a pause's, which over the
            // network completes late) would complete the seek on the frame before it.
            if let issued = engine.pendingSeekIssue, engine.pendingSeek != nil, seeks < issued {
                logger.debug("a preroll from before the outstanding seek ignored")
                return
            }
            pipelinePrerolled(pipeline)
        case GST_MESSAGE_STATE_CHANGED where fromPipeline:
            var old = GST_STATE_NULL
            var new = GST_STATE_NULL
            gst_message_parse_state_changed(pointer, &old, &new, nil)
            pipelineStateChanged(from: old, to: new)
        case GST_MESSAGE_STREAM_START:
            streamStarted()
        case GST_MESSAGE_STREAM_COLLECTION:
            pipeline.streamCollectionArrived(pointer)
        case GST_MESSAGE_STREAMS_SELECTED:
            pipeline.streamsSelected(pointer)
        case GST_MESSAGE_BUFFERING:
            var percent: gint = 100
            gst_message_parse_buffering(pointer, &percent)
            bufferingChanged(percent: Int(percent), pipeline: pipeline)
        case GST_MESSAGE_QOS:
            var processed: guint64 = 0
            var dropped: guint64 = 0
            gst_message_parse_qos_stats(pointer, nil, &processed, &dropped)
            if source.map({ pipeline.isVideoElement($0) }) == true {
                settings.withLock {
                    $0.framesRendered = UInt64(processed)
                    $0.framesDropped = UInt64(dropped)
                }
            }
        case GST_MESSAGE_DURATION_CHANGED:
            break
        case GST_MESSAGE_CLOCK_LOST:
            pipeline.playbin.setState(GST_STATE_PAUSED)
            pipeline.playbin.setState(GST_STATE_PLAYING)
        case GST_MESSAGE_LATENCY:
            gst_bin_recalculate_latency(pipeline.playbin.cast(to: GstBin.self))
        default:
            break
        }
    }

    /// What a message from an earlier load would be taken for about the item loaded now: an error
    /// (the pipeline is renewed at the next load instead), a missing plugin, its end, its preroll
    /// (a pause's just before a reload would complete the new load early), its streams, its
    /// buffering.
    private static let messagesAboutTheLoadedMedia: [GstMessageType] = [
        GST_MESSAGE_ERROR, GST_MESSAGE_ELEMENT, GST_MESSAGE_EOS, GST_MESSAGE_ASYNC_DONE, GST_MESSAGE_STREAM_START,
        GST_MESSAGE_STREAM_COLLECTION, GST_MESSAGE_STREAMS_SELECTED, GST_MESSAGE_BUFFERING,
    ]

    private func handleError(
        _ message: UnsafeMutablePointer<GstMessage>, from source: UnsafeMutablePointer<GstObject>?,
        pipeline: PlaybackPipeline
    ) {
        var gerror: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(message, &gerror, &debug)
        let detail = debug.map { String(cString: $0) }
        g_free(debug)
        let isMissingCodec =
            gerror.map {
                $0.pointee.domain == gst_stream_error_quark()
                    && ($0.pointee.code == gint(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue)
                        || $0.pointee.code == gint(GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue))
            } ?? false
        let isResourceError = gerror.map { $0.pointee.domain == gst_resource_error_quark() } ?? false
        let reason = GStreamer.consume(gerror)
        let elementName = source.map { String(cString: $0.pointee.name) } ?? "pipeline"
        var error: PlayerError =
            isMissingCodec
            ? .unsupportedCodec("\(reason) (\(elementName))")
            : .playbackFailed(element: elementName, reason: reason, debug: detail)
        // Over the network, a source or an HLS demuxer that gives up means the server went away
        // or refused: the error names the URL, as a failed load does.
        // While its server is away, whatever a reload meets (no data to find a type in) is that.
        if let item = engine.loadedItem, !item.asset.isFileBased,
            isResourceError || ["httpsrc", "hlsdemux"].contains(where: { elementName.contains($0) })
                || engine.outage != nil
        {
            error = .networkFailed(url: item.asset.url.absoluteString, reason: "\(reason) (\(elementName))")
        }
        logger.error("pipeline error", metadata: ["gst.element": "\(elementName)", "gst.error": "\(reason)"])
        if let source, pipeline.isOutputElement(source) {
            fail(error)
        } else if case .networkFailed = error, let item = engine.loadedItem, item.status == .readyToPlay {
            return networkOutage(of: item, error: error, pipeline: pipeline)
        } else if let item = engine.loadedItem, item.status == .readyToPlay,
            pipeline.switchedStreams(within: Self.streamSwitchRaceWindow)
        {
            return reloadAfterRacedSwitch(of: item, error: error, pipeline: pipeline)
        }
        failLoadedItem(with: error, pipeline: pipeline)
    }

    /// How soon after a stream switch an error counts as the switch's race (`StreamChooser.switched`).
    static let streamSwitchRaceWindow = MediaTime(value: 1, timescale: 1)

    /// A streaming error met a stream switch halfway (`StreamChooser.switched`): the item is
    /// loaded again on a new pipeline, with the chosen streams from its start, and brought back to
    /// where it was, or to where a seek under way was going; that seek completes there, and a
    /// preroll asked for waits for the new pipeline's.
    private func reloadAfterRacedSwitch(of item: PlayerItem, error: PlayerError, pipeline: PlaybackPipeline) {
        logger.warning(
            "a streaming error right after a stream switch; loading the item again",
            metadata: ["player.item": "\(item)", "gst.error": "\(error)"])
        let position = pipeline.playbin.queryPosition() ?? engine.timebase.itemTime(atHost: .invalid)
        if engine.queuedSeek != nil, let superseded = engine.pendingSeek, let completion = superseded.completion {
            deliver(on: superseded.queue) { completion(false) }
        }
        let seek = engine.queuedSeek ?? engine.pendingSeek
        let waiting = engine.prerollHandlers
        engine.pendingSeek = nil
        engine.queuedSeek = nil
        engine.prerollHandlers = []
        engine.pipelineFailed = true
        load(item)
        engine.prerollHandlers = waiting
        engine.queuedSeek = seek ?? makeSeek(to: position, before: .zero, after: .zero, queue: nil, completion: nil)
    }

    /// How long a network item that was playing may go without its server before it fails.
    public static let networkOutageLimit = MediaTime(value: 10, timescale: 1)
    /// How often the server is tried again meanwhile.
    static let networkRetryInterval = DispatchTimeInterval.seconds(1)

    /// The server of a network item stopped answering: the item stalls (`playbackStalled`, waiting
    /// to minimize stalls, or paused at rate 0 with waiting off), is loaded again each
    /// `networkRetryInterval` where it was, and fails once `networkOutageLimit` has passed.
    private func networkOutage(of item: PlayerItem, error: PlayerError, pipeline: PlaybackPipeline) {
        let now = LocalClock.monotonic.now()
        // A retry is already due: this is one more error of the same loss (a reload posts several).
        if let outage = engine.outage, !outage.reloaded { return }
        if engine.outage == nil {
            let position = pipeline.playbin.queryPosition() ?? engine.timebase.itemTime(atHost: .invalid)
            engine.outage = (now, position, false)
            logger.warning(
                "the server stopped answering; trying again",
                metadata: ["player.item": "\(item)", "player.limit_ns": .nanoseconds(Self.networkOutageLimit)])
            // The status first: whoever hears of the stall finds the player waiting (or paused).
            if rate != 0 { stall() }
            item.post(.playbackStalled)
        }
        guard let outage = engine.outage, now - outage.began < Self.networkOutageLimit else {
            engine.outage = nil
            var failure = error
            if case .networkFailed(let url, let reason) = error {
                failure = .networkFailed(
                    url: url, reason: "no answer for \(Self.networkOutageLimit.seconds) s (last: \(reason))")
            }
            return failLoadedItem(with: failure, pipeline: pipeline)
        }
        // The failed pipeline stays as it is, its last frame shown, until the item is loaded again
        // on a new one.
        engine.pipelineFailed = true
        engine.outage?.reloaded = false
        queue.asyncAfter(deadline: .now() + Self.networkRetryInterval) { [weak self] in
            guard let self, self.engine.loadedItem === item, item.status == .readyToPlay,
                let position = self.engine.outage?.position
            else { return }
            self.load(item)
            self.engine.outage?.reloaded = true
            if position > .zero {
                self.engine.queuedSeek = self.makeSeek(
                    to: position, before: .zero, after: .zero, queue: nil, completion: nil)
            }
        }
    }

    /// The loaded item fails with `error`; the pipeline stops and is replaced at the next load.
    private func failLoadedItem(with error: PlayerError, pipeline: PlaybackPipeline) {
        engine.pipelineFailed = true
        if let item = engine.loadedItem, item.status != .failed {
            if item.status == .readyToPlay { item.post(.failedToPlayToEndTime(error)) }
            item.markFailed(error)
        }
        cancelAllPending()
        stopForReuse(pipeline)
        engine.prerolled = false
        stopPlayback()
        setTimebase(.stopped(at: engine.timebase.itemTime(atHost: .invalid)))
    }

    private func pipelineStateChanged(from old: GstState, to new: GstState) {
        engine.pipelineState = new
        if new == GST_STATE_PLAYING {
            engine.runningTimeZero = nil
            if engine.pendingStart == nil, rate != 0 {
                setTimeControl(.playing)
                refreshTimebase()
            }
        } else if old == GST_STATE_PLAYING, new == GST_STATE_PAUSED, engine.pendingSeek == nil {
            refreshTimebase()
        }
    }

    /// ASYNC_DONE: every sink holds a frame. Completes loads, seeks and prerolls.
    private func pipelinePrerolled(_ pipeline: PlaybackPipeline) {
        pipeline.prerolled()
        guard let item = engine.loadedItem, item.status != .failed else { return }
        if !engine.loadPrerolled {
            engine.loadPrerolled = true
            engine.prerollRetries = 0
        }
        if item.status != .readyToPlay, item.needsLearnedOrigin { learnOrigin(of: item, on: pipeline) }
        if engine.queuedSeek == nil {
            // The sink holds the frame the item is at: after its first load, and after every load
            // of it since (a rebuilt pipeline, a reload), which cleared this; ready for display
            // before the item reads ready, as AVPlayer's layer is.
            readyForDisplayStream.update(item.hasPlayableVideo && settings.withLock { $0.video } != nil)
            if engine.outage?.reloaded == true {
                engine.outage = nil
                logger.notice("the server answers again", metadata: ["player.item": "\(item)"])
            }
        }
        if item.status != .readyToPlay {
            item.markReady(facts(from: pipeline, item: item))
            watchNetworkFacts(of: item)
        }
        // A seek waiting for the load: an item's bounds, a reload or a rebuilt pipeline.
        if let queued = engine.queuedSeek {
            engine.queuedSeek = nil
            performSeek(queued)
            return
        }
        if let seek = engine.pendingSeek {
            let position = pipeline.playbin.queryPosition() ?? seek.target
            engine.pendingSeek = nil
            if engine.pipelineState != GST_STATE_PLAYING { engine.runningTimeZero = position }
            if let completion = seek.completion { deliver(on: seek.queue) { completion(true) } }
            item.post(.timeJumped)
        }
        engine.prerolled = true
        completePrerolls(true)
        if engine.pendingStart != nil {
            continueScheduledStart()
        } else if rate != 0, engine.pipelineState != GST_STATE_PLAYING, !scheduledStartComing {
            applyRate(rate, immediately: false)
        } else {
            refreshTimebase()
        }
    }

    /// Measures GStreamer's stream time at item time zero on the item's first frame, prerolled at
    /// its load: the frame's stream time less its item time as libavformat gives it (the video
    /// track's start). Item time then counts as the asset's facts do, and a seek to the item's start
    /// puts the pipeline's timing on it.
    private func learnOrigin(of item: PlayerItem, on pipeline: PlaybackPipeline) {
        guard let first = pipeline.lastVideoSample()?.streamTime, first.isNumeric,
            let video = item.inspection?.tracks.first(where: { $0.mediaType == .video }),
            video.timeRange.start.isNumeric
        else { return }
        let origin = first - video.timeRange.start
        item.learnedOrigin.withLock { $0 = origin }
        logger.debug("item time zero measured", metadata: ["player.stream_time_origin_ns": .nanoseconds(origin)])
        if engine.queuedSeek == nil {
            engine.queuedSeek = makeSeek(
                to: item.playbackStartTime, before: .zero, after: .zero, queue: nil, completion: nil)
        }
    }

    private func facts(from pipeline: PlaybackPipeline, item: PlayerItem) -> PlayerItem.Facts {
        var facts = PlayerItem.Facts()
        let inspected = (try? item.asset.inspectNow().get())?.duration ?? .indefinite
        // An MPEG demuxer measures from its first clock reference, not the item's start: there
        // libavformat's duration and the whole item are what item time spans.
        let origin = item.streamTimeOrigin
        let countsFromItsOwnOrigin = origin != .zero && inspected.isNumeric
        facts.duration = countsFromItsOwnOrigin ? inspected : pipeline.playbin.queryDuration() ?? inspected
        if let seeking = pipeline.playbin.querySeeking(), seeking.seekable {
            facts.isSeekable = true
            // Otherwise in item time: a live HLS window, measured from the item's first frame.
            let end = seeking.end.isNumeric && !countsFromItsOwnOrigin ? seeking.end - origin : facts.duration
            let start = countsFromItsOwnOrigin ? .zero : max(.zero, seeking.start - origin)
            facts.seekableTimeRanges = [MediaTimeRange(start: start, end: end)]
        }
        if item.asset.isFileBased, facts.duration.isNumeric {
            facts.loadedTimeRanges = [MediaTimeRange(start: .zero, duration: facts.duration)]
        } else if let loaded = pipeline.loaded?.range(origin: origin) {
            facts.loadedTimeRanges = [loaded]
        }
        return facts
    }

    private func itemReachedEnd(_ pipeline: PlaybackPipeline) {
        guard let item = engine.loadedItem else { return }
        logger.debug("end of item", metadata: ["player.item": "\(item.asset.url.lastPathComponent)"])
        item.post(.didPlayToEndTime)
        switch actionAtItemEnd {
        case .advance where advanceAfterEnd():
            break
        case .advance, .pause:
            stopPlayback()
            pipeline.playbin.setState(GST_STATE_PAUSED)
            refreshTimebase()
        case .none:
            break
        }
    }

    /// Buffering as AVPlayer's stalls: playing runs dry, the item posts `playbackStalled`, and the
    /// player waits for data (`waitingToPlayAtSpecifiedRate`, `toMinimizeStalls`) and plays on once
    /// it has enough; with `automaticallyWaitsToMinimizeStalling` off it stops instead, at rate 0.
    private func bufferingChanged(percent: Int, pipeline: PlaybackPipeline) {
        let wasBuffering = engine.buffering
        engine.buffering = percent < 100
        guard wasBuffering != engine.buffering, rate != 0, engine.pendingStart == nil, !scheduledStartComing else {
            return
        }
        if engine.buffering {
            engine.loadedItem?.post(.playbackStalled)
            pipeline.playbin.setState(GST_STATE_PAUSED)
            stall()
        } else {
            pipeline.playbin.setState(GST_STATE_PLAYING)
        }
    }

    /// Playback stalls: it waits for data to minimize stalls, or, with that off, stops at rate 0
    /// (`stopPlayback`: whoever sees the rate fall finds the player paused).
    private func stall() {
        if automaticallyWaitsToMinimizeStalling {
            setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .toMinimizeStalls)
        } else {
            stopPlayback()
            refreshTimebase()
        }
    }

    /// Turning `automaticallyWaitsToMinimizeStalling` off while waiting for data plays at once.
    func stopWaitingForData(rate: Float) {
        guard timeControlStatus == .waitingToPlayAtSpecifiedRate, reasonForWaitingToPlay == .toMinimizeStalls,
            rate != 0, self.rate == rate, engine.pendingStart == nil, !scheduledStartComing,
            let pipeline = engine.pipeline
        else { return }
        pipeline.playbin.setState(GST_STATE_PLAYING)
    }

    /// How often a network item's seekable ranges (and a live one's duration) are read again while
    /// it is loaded.
    static let networkFactsInterval = DispatchTimeInterval.seconds(1)

    /// Over the network, what has arrived grows, what can be sought moves with a live window, and a
    /// live stream's duration appears only when it ends: read again as at the item's preroll
    /// (`facts(from:item:)`).
    func refreshNetworkFacts(_ pipeline: PlaybackPipeline) {
        guard let item = engine.loadedItem, !item.asset.isFileBased, item.status == .readyToPlay else { return }
        let fresh = facts(from: pipeline, item: item)
        item.updateFacts { facts in
            if !fresh.seekableTimeRanges.isEmpty { facts.seekableTimeRanges = fresh.seekableTimeRanges }
            if !fresh.loadedTimeRanges.isEmpty { facts.loadedTimeRanges = fresh.loadedTimeRanges }
            if !facts.duration.isNumeric { facts.duration = fresh.duration }
        }
    }

    /// Reads a network item's facts each `networkFactsInterval` while it stays loaded.
    func watchNetworkFacts(of item: PlayerItem) {
        guard !item.asset.isFileBased else { return }
        queue.asyncAfter(deadline: .now() + Self.networkFactsInterval) { [weak self] in
            guard let self, self.engine.loadedItem === item, item.status == .readyToPlay,
                let pipeline = self.engine.pipeline
            else { return }
            self.refreshNetworkFacts(pipeline)
            self.watchNetworkFacts(of: item)
        }
    }
}

// MARK: - Rate

extension Player {
    /// What every rate change does first: drop a scheduled start and pending prerolls. Returns
    /// the pipeline and item to change, or nil (with the status updated) when there is nothing
    /// to play.
    func beginRateChange() -> (pipeline: PlaybackPipeline, item: PlayerItem)? {
        cancelScheduledStart()
        completePrerolls(false)
        guard let pipeline = engine.pipeline, let item = engine.loadedItem, item.status != .failed else {
            updateIdleStatus()
            return nil
        }
        return (pipeline, item)
    }

    func applyRate(_ newRate: Float, immediately: Bool) {
        guard let (pipeline, item) = beginRateChange() else { return }
        if newRate == 0 {
            if engine.scheduledMode { leaveScheduledMode(pipeline) }
            pipeline.playbin.setState(GST_STATE_PAUSED)
            setTimeControl(.paused)
            refreshTimebase()
            return
        }
        pipeline.holdFrames(from: nil)
        guard item.status == .readyToPlay else {
            setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .evaluatingBufferingRate)
            return
        }
        guard item.canPlay(atRate: newRate) else {
            logger.warning("rate not supported by the item", metadata: ["player.rate": .value(newRate)])
            stopPlayback()
            return
        }
        if engine.scheduledMode { leaveScheduledMode(pipeline) }
        if Double(newRate) != engine.segmentRate {
            let position = pipeline.playbin.queryPosition() ?? engine.timebase.itemTime(atHost: .invalid)
            engine.segmentRate = Double(newRate)
            performSeek(makeSeek(to: position, before: .zero, after: .zero, queue: nil, completion: nil))
        }
        if engine.buffering, automaticallyWaitsToMinimizeStalling, !immediately {
            setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .toMinimizeStalls)
            return
        }
        pipeline.use(effectiveClock)
        pipeline.playbin.setState(GST_STATE_PLAYING)
        if engine.pipelineState == GST_STATE_PLAYING, engine.pendingSeek == nil {
            setTimeControl(.playing)
        } else {
            setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .evaluatingBufferingRate)
        }
    }

    /// Hands the base time back to GStreamer: playback resumes from where the running time is now.
    func leaveScheduledMode(_ pipeline: PlaybackPipeline) {
        engine.scheduledMode = false
        let clock = effectiveClock.now()
        let base = MediaTime(clockTime: pipeline.playbin.baseTime)
        let running = MediaTime.maximum(.zero, clock - base - pipelineLatency)
        pipeline.playbin.setStartTime(running.clockTime ?? 0)
    }

    /// Whether a `setRate(_:time:atHostTime:)` is on its way to the control queue: its rate is the
    /// player's already, but its start is not armed yet.
    var scheduledStartComing: Bool { scheduledStartsInFlight.load(ordering: .sequentiallyConsistent) > 0 }

    /// Re-anchors the timebase to what the pipeline does now and tells the time observers.
    func refreshTimebase() {
        guard let pipeline = engine.pipeline else { return }
        let position = pipeline.playbin.queryPosition() ?? engine.timebase.itemTime(atHost: .invalid)
        if engine.pipelineState == GST_STATE_PLAYING, rate != 0, engine.pendingStart == nil {
            setTimebase(Timebase(hostTime: effectiveClock.now(), itemTime: position, rate: engine.segmentRate))
        } else {
            setTimebase(.stopped(at: position))
        }
    }

    /// Takes a new timebase; time observers hear of it only when it changes the timeline. A stop
    /// re-anchors several times as the pipeline settles (the rate, then each state change), and
    /// each used to fire the periodic observers again at the same time.
    func setTimebase(_ timebase: Timebase) {
        let unchanged = timebase.rate == 0 && engine.timebase.rate == 0 && timebase.itemTime == engine.timebase.itemTime
        engine.timebase = timebase
        if unchanged {
            publishedTimebase.withLock { $0 = timebase }
        } else {
            timebaseChanged()
        }
    }
}

// MARK: - Pending work

extension Player {
    func cancelAllPending() {
        if let seek = engine.pendingSeek, let completion = seek.completion {
            deliver(on: seek.queue) { completion(false) }
        }
        if let seek = engine.queuedSeek, let completion = seek.completion {
            deliver(on: seek.queue) { completion(false) }
        }
        engine.pendingSeek = nil
        engine.queuedSeek = nil
        completePrerolls(false)
        cancelScheduledStart()
    }

    func completePrerolls(_ finished: Bool) {
        let handlers = engine.prerollHandlers
        engine.prerollHandlers = []
        for (queue, handler) in handlers { deliver(on: queue) { handler(finished) } }
    }

    func cancelScheduledStart() {
        // A held frame's start muted the audio until its pause.
        if engine.pendingStart?.holdsFirstFrame == true {
            engine.pipeline?.playbin.set("mute", settings.withLock { $0.isMuted })
        }
        engine.pendingStart = nil
        engine.startAlarms.forEach { $0.cancel() }
        engine.startAlarms = []
    }
}
