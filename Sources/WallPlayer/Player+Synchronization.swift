internal import CGStreamer
internal import CLockstepShims
import Dispatch
import LockstepTime

extension Player {
    /// Prepares playback from the current time at `rate` so that a start at that rate is
    /// immediate: the pipeline is prerolled in that direction and at that rate (a flushing seek to
    /// the current time when it was prerolled for another), the first frame sits in the video
    /// sink. Playing at `rate` then needs no seek. The handler gets true when that is done, false
    /// when the player is playing, has no ready item, the item cannot play at `rate`, or a rate
    /// change, seek, load or `cancelPendingPrerolls()` came first. Rate 0 keeps the current one.
    public func preroll(atRate rate: Float, completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        let handler: @Sendable (Bool) -> Void = completionHandler ?? { _ in }
        queue.async {
            guard self.rate == 0, self.engine.pipeline != nil, let item = self.engine.loadedItem,
                item.status != .failed, rate.isFinite,
                rate == 0 || item.status != .readyToPlay || item.canPlay(atRate: rate)
            else {
                self.deliver(on: nil) { handler(false) }
                return
            }
            let wanted = rate == 0 ? self.engine.segmentRate : Double(rate)
            if item.status == .readyToPlay, self.engine.prerolled, wanted == self.engine.segmentRate {
                self.deliver(on: nil) { handler(true) }
                return
            }
            self.engine.prerollHandlers.append((nil, handler))
            guard item.status == .readyToPlay, wanted != self.engine.segmentRate, let pipeline = self.engine.pipeline
            else { return }
            if self.engine.scheduledMode { self.leaveScheduledMode(pipeline) }
            let position = pipeline.playbin.queryPosition() ?? self.engine.timebase.itemTime(atHost: .invalid)
            self.engine.segmentRate = wanted
            self.performSeek(self.makeSeek(to: position, before: .zero, after: .zero, queue: nil, completion: nil))
        }
    }

    /// `preroll(atRate:completionHandler:)`, awaiting whether it finished.
    public func preroll(atRate rate: Float) async -> Bool {
        await withCheckedContinuation { continuation in
            preroll(atRate: rate) { continuation.resume(returning: $0) }
        }
    }

    /// Completes every pending preroll with false.
    public func cancelPendingPrerolls() {
        queue.async { self.completePrerolls(false) }
    }

    /// Starts playback in step with other players: at `hostClockTime` on `masterClock` the frame
    /// of item time `itemTime` is presented, and playback proceeds at `rate`.
    ///
    /// An invalid `itemTime` means the current time; an invalid `hostClockTime` means as soon as
    /// the pipeline is ready. The pipeline is prerolled at `itemTime` first if it is not there
    /// already; for a start that is exact to the host time, preroll in advance and give a host
    /// time far enough ahead. A rate of 0 pauses at the host time, and with a numeric `itemTime`
    /// shows that item time there, exactly (as the timebase AVPlayer sets: at the host time, the
    /// item is at `itemTime`, not moving). Prerolled at `itemTime` already and not playing, the
    /// player presents that frame through its sink at the host time, and no frame after it: a
    /// player prepared behind another (`showsPrerollFrame` false) so takes the screen with a still
    /// frame at a host time as exactly as a start does with a moving one.
    ///
    /// - Throws: `PlayerError.waitsToMinimizeStalling` when `automaticallyWaitsToMinimizeStalling`
    ///   is true, `.notFileBased` for an item that is not a local file, `.itemNotReady` without a
    ///   playable item, `.invalidTime` for infinite or indefinite times, `.unsupportedRate` for a rate
    ///   that is not finite or that the item cannot play at (`canPlay(atRate:)`).
    public func setRate(_ rate: Float, time itemTime: MediaTime, atHostTime hostClockTime: MediaTime)
        throws(PlayerError)
    {
        guard !automaticallyWaitsToMinimizeStalling else { throw .waitsToMinimizeStalling }
        guard let item = currentItem else { throw .itemNotReady("setRate(_:time:atHostTime:)") }
        guard item.asset.isFileBased else { throw .notFileBased(item.asset.url.absoluteString) }
        guard item.status != .failed else { throw .itemNotReady("setRate(_:time:atHostTime:)") }
        guard rate.isFinite, rate == 0 || item.status != .readyToPlay || item.canPlay(atRate: rate) else {
            throw .unsupportedRate(rate)
        }
        if itemTime.isValid, !itemTime.isNumeric { throw .invalidTime(argument: "time", time: itemTime) }
        if hostClockTime.isValid, !hostClockTime.isNumeric {
            throw .invalidTime(argument: "atHostTime", time: hostClockTime)
        }
        scheduledStartsInFlight.add(1, ordering: .sequentiallyConsistent)
        rateStream.update(rate)
        queue.async {
            self.scheduledStartsInFlight.subtract(1, ordering: .sequentiallyConsistent)
            self.scheduleStart(rate: rate, itemTime: itemTime, hostTime: hostClockTime)
        }
    }

    private func scheduleStart(rate newRate: Float, itemTime: MediaTime, hostTime: MediaTime) {
        guard let (pipeline, item) = beginRateChange() else { return }
        if newRate == 0 {
            if itemTime.isNumeric, hostTime.isNumeric, holdsPrerolledFrame(at: itemTime, pipeline: pipeline, item: item)
            {
                presentPrerolledFrame(itemTime: itemTime, hostTime: hostTime, pipeline: pipeline)
                return
            }
            let pause: @Sendable (Player) -> Void = { player in
                player.applyRate(0, immediately: true)
                guard itemTime.isNumeric else { return }
                player.drawExactly(itemTime)
            }
            guard hostTime.isNumeric else { return pause(self) }
            // The pause is a state change its alarm makes; the frames due from its time on wait at
            // the sink meanwhile, so one woken late shows none of them.
            pipeline.holdFrames(from: hostTime)
            addStartAlarm(at: hostTime, pause)
            return
        }
        pipeline.holdFrames(from: nil)
        let target =
            itemTime.isNumeric
            ? itemTime : (pipeline.playbin.queryPosition() ?? engine.timebase.itemTime(atHost: .invalid))
        engine.nextStartID += 1
        engine.pendingStart = ScheduledStart(
            id: engine.nextStartID, rate: newRate, itemTime: target, hostTime: hostTime)
        // Also when PLAYING was asked for and is not reached yet (a wait for data that ended just
        // now): the start's base time takes effect only from PAUSED.
        if engine.pipelineState == GST_STATE_PLAYING || pipeline.playbin.isPlayingOrGoingTo {
            logger.debug(
                "scheduled start found the pipeline playing: paused first",
                metadata: ["start.prerolled": .value(engine.prerolled), "start.rate_before": .value(rate)])
            pipeline.playbin.setState(GST_STATE_PAUSED)
            engine.runningTimeZero = nil
        }
        engine.scheduledMode = true
        pipeline.playbin.setStartTime(GStreamer.clockTimeNone)
        setTimeControl(.waitingToPlayAtSpecifiedRate, reason: .scheduledStart)
        if item.status == .readyToPlay, engine.pendingSeek == nil {
            continueScheduledStart()
        }
    }

    /// Whether the pipeline stands prerolled at `itemTime`, not playing, with a frame in its video
    /// sink: a pause there at a host time can present that frame at the host time exactly.
    private func holdsPrerolledFrame(at itemTime: MediaTime, pipeline: PlaybackPipeline, item: PlayerItem) -> Bool {
        item.status == .readyToPlay && item.hasPlayableVideo && settings.withLock({ $0.video }) != nil
            && engine.prerolled && engine.pendingSeek == nil
            && engine.runningTimeZero == itemTime && engine.segmentRate > 0
            && engine.pipelineState != GST_STATE_PLAYING && !pipeline.playbin.isPlayingOrGoingTo
    }

    /// A pause at `hostTime` showing `itemTime`, on a pipeline prerolled there: the frame waiting in
    /// the sink is presented at the host time as a start's first frame would be (through the sink,
    /// on its clock), every frame after it waits at the gate with the audio muted, and the pipeline
    /// pauses `heldFrameSettling` later and moves back to `itemTime` exactly. A player prepared
    /// behind another (its preroll frame not drawn) so takes the screen at a host time with a
    /// still frame, as a start takes it with a moving one.
    private func presentPrerolledFrame(itemTime: MediaTime, hostTime: MediaTime, pipeline: PlaybackPipeline) {
        guard hostTime - effectiveClock.now() > Self.scheduledStartLead else {
            // Too late for the sink to present it on time: it draws the frame at once, as a preroll.
            drawExactly(itemTime)
            return
        }
        pipeline.playbin.set("mute", true)
        pipeline.holdFrames(from: hostTime + Self.heldFrameGate, fromTheStart: true)
        engine.nextStartID += 1
        let start = ScheduledStart(
            id: engine.nextStartID, rate: Float(engine.segmentRate), itemTime: itemTime, hostTime: hostTime,
            holdsFirstFrame: true)
        engine.pendingStart = start
        engine.scheduledMode = true
        pipeline.playbin.setStartTime(GStreamer.clockTimeNone)
        armScheduledStart(start)
    }

    /// Moves exactly to `itemTime` and draws that frame as a preroll, also on a player whose
    /// prerolls are not drawn (`showsPrerollFrame` false: one taking the screen with it); then its
    /// prerolls are drawn as that setting says again.
    private func drawExactly(_ itemTime: MediaTime) {
        engine.pipeline?.showPrerollFrame(true)
        let seek = makeSeek(to: itemTime, before: .zero, after: .zero, queue: queue) { [weak self] _ in
            guard let self else { return }
            self.engine.pipeline?.showPrerollFrame(self.settings.withLock { $0.showsPrerollFrame })
        }
        performSeek(seek)
    }

    /// Ends a pause begun by `presentPrerolledFrame`: paused, the audio as it was, the pipeline back
    /// at the item time shown (the frame after it waits at the gate, undrawn).
    private func settleHeldFrame(_ start: ScheduledStart) {
        // The frame after the held one waits at the gate at most 200 ms (the stamp's limit), so
        // that a pause that never comes cannot wedge the render thread: a pause this late may have
        // let it be drawn.
        let late = effectiveClock.now() - start.hostTime
        if late > Self.heldFrameSettling + MediaTime(value: 100, timescale: 1000) {
            logger.warning(
                "a held frame's pause came late: the frame after it may have been drawn",
                metadata: ["start.late_by_ns": .nanoseconds(late - Self.heldFrameSettling)])
        }
        applyRate(0, immediately: true)
        performSeek(makeSeek(to: start.itemTime, before: .zero, after: .zero, queue: nil, completion: nil))
    }

    /// Prerolls at the start's item time and rate if the pipeline is not there yet, else arms
    /// the start. Called again when the seek it issues completes.
    func continueScheduledStart() {
        guard let start = engine.pendingStart else { return }
        // Armed, the start stands: a seek to its item time now would flush the frame it waits to
        // present and open the gate holding the frames after a held one.
        guard !start.armed else {
            logger.debug("a preroll after the start was armed: the start stands")
            return
        }
        if engine.prerolled, engine.runningTimeZero == start.itemTime, engine.segmentRate == Double(start.rate) {
            armScheduledStart(start)
            return
        }
        logger.debug(
            "scheduled start seeks to its item time first",
            metadata: [
                "start.prerolled": .value(engine.prerolled),
                "start.running_time_zero_ns": "\(engine.runningTimeZero.map { "\($0.nanoseconds ?? -1)" } ?? "none")",
                "start.item_time_ns": .nanoseconds(start.itemTime),
            ])
        engine.segmentRate = Double(start.rate)
        performSeek(makeSeek(to: start.itemTime, before: .zero, after: .zero, queue: nil, completion: nil))
    }

    /// Sets the base time so that running time zero (the item time of the start) is presented at
    /// the host time, and schedules PLAYING shortly before it.
    private func armScheduledStart(_ start: ScheduledStart) {
        guard let pipeline = engine.pipeline else { return }
        if engine.pendingStart?.id == start.id { engine.pendingStart?.armed = true }
        let clock = effectiveClock
        let latency = pipelineLatency
        pipeline.use(clock)
        pipeline.setLatency(latency)
        let now = clock.now()
        let hostTime = start.hostTime.isNumeric ? start.hostTime : now + Self.unscheduledStartDelay
        guard let base = (hostTime - latency).clockTime else {
            logger.error(
                "scheduled start before the clock's zero", metadata: ["start.host_time_ns": .nanoseconds(hostTime)])
            cancelScheduledStart()
            stopPlayback()
            return
        }
        pipeline.playbin.setStartTime(GStreamer.clockTimeNone)
        pipeline.playbin.baseTime = base
        engine.runningTimeZero = nil
        setTimebase(
            start.holdsFirstFrame
                ? .stopped(at: start.itemTime)
                : Timebase(hostTime: hostTime, itemTime: start.itemTime, rate: Double(start.rate)))
        if hostTime < now {
            logger.warning("scheduled start is late", metadata: ["start.late_by_ns": .nanoseconds(now - hostTime)])
        }
        logger.debug(
            "start armed",
            metadata: [
                "start.host_time_ns": .nanoseconds(hostTime), "start.item_time_ns": .nanoseconds(start.itemTime),
                "start.rate": .value(start.rate),
            ])
        let playAt = hostTime - Self.scheduledStartLead
        if playAt <= now {
            pipeline.playbin.setState(GST_STATE_PLAYING)
        } else {
            addStartAlarm(at: playAt, startID: start.id) { player in
                player.engine.pipeline?.playbin.setState(GST_STATE_PLAYING)
            }
        }
        if start.holdsFirstFrame {
            addStartAlarm(at: hostTime + Self.heldFrameSettling, startID: start.id) { $0.settleHeldFrame(start) }
            return
        }
        addStartAlarm(at: hostTime, startID: start.id) { player in
            player.engine.pendingStart = nil
            player.setTimeControl(.playing)
            player.timebaseChanged()
        }
    }

    /// Runs `action` on the control queue at `time` on the master clock, unless the start it
    /// belongs to was replaced by then.
    private func addStartAlarm(at time: MediaTime, startID: Int? = nil, _ action: @escaping @Sendable (Player) -> Void)
    {
        let alarm = ClockAlarm(clock: effectiveClock, at: time) { [weak self] in
            guard let self else { return }
            self.queue.async {
                if let startID, self.engine.pendingStart?.id != startID { return }
                action(self)
            }
        }
        if let alarm { engine.startAlarms.append(alarm) }
    }
}
