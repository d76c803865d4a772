internal import CGStreamer
internal import CLockstepShims
import Dispatch
import Foundation
import LockstepLocks
import LockstepTime
import Logging

/// Plays one item at a time through a GStreamer pipeline (`AVPlayer`).
///
/// Commands (play, pause, seek, replace the item, schedule a start) take effect in the order
/// they are made, on the player's serial control queue; getters answer at once from the player's
/// published state. Completion handlers and time observers run on the queue given, or on the
/// player's callback queue.
///
/// For a wall, every node prerolls (`preroll(atRate:completionHandler:)`), runs on a shared
/// `masterClock`, and starts with `setRate(_:time:atHostTime:)`: at host time H the frame of item
/// time T is presented, and playback proceeds at the rate given.
public class Player: @unchecked Sendable {
    /// `AVPlayer.Status`.
    public enum Status: Sendable, Hashable {
        case unknown, readyToPlay, failed
    }

    /// `AVPlayer.TimeControlStatus`.
    public enum TimeControlStatus: Sendable, Hashable {
        case paused, waitingToPlayAtSpecifiedRate, playing
    }

    /// `AVPlayer.WaitingReason`, plus the wait for a scheduled host time.
    public enum WaitingReason: Sendable, Hashable {
        /// Waiting for enough media to play without stalling.
        case toMinimizeStalls
        /// Starting up: the pipeline is moving to playing.
        case evaluatingBufferingRate
        /// The rate is set but there is no item (or it failed).
        case noItemToPlay
        /// `setRate(_:time:atHostTime:)` was given a host time still in the future.
        case scheduledStart
    }

    /// What happens when the current item ends (`AVPlayer.ActionAtItemEnd`).
    public enum ActionAtItemEnd: Sendable, Hashable {
        /// Go on to the next item (`QueuePlayer` only; a plain `Player` pauses).
        case advance
        /// Pause at the end.
        case pause
        /// Do nothing: the player stays at the end with its rate unchanged.
        case none
    }

    /// How long before a scheduled host time the pipeline is set to PLAYING. The sink then waits
    /// that long on the master clock for the first frame; GStreamer's clock wait is exact to
    /// `lead × (clock rate - 1)`, so a short lead keeps even a fast-running master within
    /// microseconds.
    static let scheduledStartLead = MediaTime(value: 50, timescale: 1000)
    /// How far ahead a start is scheduled when `setRate(_:time:atHostTime:)` gets no host time.
    static let unscheduledStartDelay = MediaTime(value: 100, timescale: 1000)
    /// A pause presenting a prerolled frame at its host time holds every frame due this long after
    /// it, and the item's end: the first frame passes (due at the host time, or clipped to it), none
    /// after it, and an end due just after it (a frame held 1 ms before its item's end) waits for
    /// the pause.
    static let heldFrameGate = MediaTime(value: 1, timescale: 1_000_000)
    /// How long after its host time such a pause takes the pipeline to PAUSED: time for the sink to
    /// present the frame, well within the gate's limit (200 ms).
    static let heldFrameSettling = MediaTime(value: 50, timescale: 1000)

    let logger: Logger
    /// Where engine work runs, one operation at a time.
    let queue: DispatchQueue
    /// Where completion handlers and observers run when no queue is given.
    let callbackQueue: DispatchQueue

    let statusStream = ChangeStream(Status.unknown)
    let rateStream = ChangeStream(Float(0))
    let timeControlStream = ChangeStream(TimeControlStatus.paused)
    let currentItemStream = ChangeStream<PlayerItem?>(nil)
    let readyForDisplayStream = ChangeStream(false)
    let presentedStream = EventStream<PresentedFrame>(bufferingPolicy: .bufferingNewest(4096))
    let settings: Mutex<Settings>
    let pipelineRef = Mutex<PlaybackPipeline?>(nil)
    /// Counts loads, readable from GStreamer's threads: a bus message remembers the load it was
    /// posted under, so an error from an item already replaced does not fail the new one.
    let loadsStarted = Atomic<Int>(0)
    /// `setRate(_:time:atHostTime:)` calls whose start the control queue has not taken up yet.
    /// `rate` reads the new rate at once, as AVPlayer's does; until the queue arms the start, a
    /// preroll that completes meanwhile must not take that rate for a plain play and start early.
    let scheduledStartsInFlight = Atomic<Int>(0)
    /// Counts seeks issued to the pipeline, readable from GStreamer's threads in the same way.
    let seeksIssued = Atomic<Int>(0)
    /// Set while a load takes the pipeline's old source down: an about-to-finish the old source
    /// emits on its way down hands nothing over (its successor would be taken for the new item's).
    let sourceChanging = Atomic<Bool>(false)
    /// Pipelines that did not stop when replaced and were left on their own threads.
    let pipelinesAbandoned = Atomic<Int>(0)
    /// A copy of the engine's timebase for readers off the control queue.
    let publishedTimebase = Mutex(Timebase.stopped(at: .zero))
    /// Engine state: read and written only on `queue`.
    var engine = Engine()

    /// Settings that take effect through the control queue, readable at once.
    struct Settings {
        var error: PlayerError?
        var reasonForWaitingToPlay: WaitingReason?
        var actionAtItemEnd: ActionAtItemEnd
        var automaticallyWaitsToMinimizeStalling = true
        var defaultRate: Float = 1
        var volume: Float = 1
        var isMuted = false
        var masterClock: MasterClock?
        var video: VideoOutputSettings?
        var audioSinkDescription: String?
        var realtimeRenderPriority: Int32?
        var latency: MediaTime = .zero
        var framesRendered: UInt64 = 0
        var framesDropped: UInt64 = 0
        var appliesMediaSelectionCriteriaAutomatically = true
        var closedCaptionDisplayEnabled = false
        var showsPrerollFrame = true
        var selectionCriteria: [MediaCharacteristic: PlayerMediaSelectionCriteria] = [:]
    }

    /// A player for `item` (nil: no item yet) with the given outputs.
    ///
    /// - Parameters:
    ///   - video: where video goes; nil plays no video. Defaults to `autovideosink`.
    ///   - audioSinkDescription: a GStreamer bin description for audio; nil plays no audio.
    ///     Defaults to `autoaudiosink`, which falls back to a fake sink on a machine with no sound.
    public init(
        playerItem item: PlayerItem?, video: VideoOutputSettings? = VideoOutputSettings(),
        audioSinkDescription: String? = "autoaudiosink", logger: Logger = Logger(label: "wallplayer")
    ) {
        GStreamer.ensureInitialized()
        self.logger = logger
        queue = DispatchQueue(label: "wallplayer.control")
        callbackQueue = DispatchQueue(label: "wallplayer.callbacks")
        settings = Mutex(
            Settings(
                actionAtItemEnd: Self.defaultActionAtItemEnd, video: video,
                audioSinkDescription: audioSinkDescription))
        if let item { replaceCurrentItem(with: item) }
    }

    /// A player for the media at `url`.
    public convenience init(url: URL) {
        self.init(playerItem: PlayerItem(url: url))
    }

    class var defaultActionAtItemEnd: ActionAtItemEnd { .pause }

    // MARK: Queue hooks (overridden by QueuePlayer)

    /// The URI to continue with when the current one is fully read (GStreamer streaming thread:
    /// must not block); a plain player has none.
    func gaplessSuccessorURI() -> String? { nil }

    /// On the control queue when a stream starts: a gapless change lands here.
    func streamStarted() {}

    /// Whether the pipeline has been handed a successor it has not started yet; on the control
    /// queue.
    func hasHandedOverSuccessor() -> Bool { false }

    /// Forgets the successors handed to the pipeline, which a reload dropped; on the control queue.
    func forgetHandedOverSuccessors() {}

    /// On the control queue at the end of an item with `actionAtItemEnd == .advance`: whether
    /// another item was loaded.
    func advanceAfterEnd() -> Bool { false }

    deinit {
        for observer in engine.observers.values { observer.cancelAlarm() }
        engine.startAlarms.forEach { $0.cancel() }
        // The last reference to a player can go on any thread, GStreamer's own among them (a bus or
        // signal callback holds one for a moment), and a pipeline must not be set to NULL from one
        // of its own streaming threads: it would wait for itself. It is stopped on its own thread.
        if let pipeline = pipelineRef.withLock({ $0 }) { _ = pipeline.stopOnItsOwnThread() }
    }

    // MARK: Status

    /// How many pipelines did not stop when replaced (wedged inside GStreamer) and were left on
    /// their own threads while the player went on with new ones. Not part of AVFoundation's model:
    /// for a player that runs for months, a figure to watch (each holds a thread and its memory).
    public var abandonedPipelines: Int { pipelinesAbandoned.load(ordering: .relaxed) }

    /// Whether the player can play (`AVPlayer.status`): `unknown` until its outputs are built,
    /// with the first item it loads; `readyToPlay` once they are; `failed` when they cannot work,
    /// for good.
    public var status: Status { statusStream.value }
    /// Why the player failed; set before `status` becomes `.failed`.
    public var error: PlayerError? { settings.withLock { $0.error } }
    /// The status now and every change after.
    public var statusUpdates: AsyncStream<Status> { statusStream.values() }

    // MARK: Items

    /// The item playing, or about to.
    public var currentItem: PlayerItem? { currentItemStream.value }
    /// The current item now and every change after.
    public var currentItemUpdates: AsyncStream<PlayerItem?> { currentItemStream.values() }

    /// Returns once every change asked of the player before the call has reached its pipeline (an
    /// unloaded item has let go of the video sink, for one).
    public func settle() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } }
    }

    /// Makes `item` current (nil: none), keeping the rate. An item current in another player is
    /// refused, with an error logged (AVPlayer raises an exception): an item has one player.
    public func replaceCurrentItem(with item: PlayerItem?) {
        guard admits(item) else { return }
        makeCurrent(item)
    }

    /// Whether `item` may become current or be queued here: not while it is current in another
    /// player (refused with an error logged).
    func admits(_ item: PlayerItem?) -> Bool {
        guard let item, let owner = item.player, owner !== self else { return true }
        logger.error(
            "item refused: it is current in another player",
            metadata: ["player.item": "\(item.asset.url.lastPathComponent)"])
        return false
    }

    func makeCurrent(_ item: PlayerItem?) {
        setCurrentItem(item)
        queue.async { self.load(item) }
    }

    func setCurrentItem(_ item: PlayerItem?) {
        let previous = currentItemStream.value
        if previous === item { return }
        previous?.attach(to: nil)
        item?.attach(to: self)
        currentItemStream.send(item)
    }

    // MARK: Rate

    /// The playback rate: 0 is paused, 1 normal; negative rates play backwards where the item
    /// allows. Setting it cancels pending prerolls.
    public var rate: Float {
        get { rateStream.value }
        set { setRate(newValue) }
    }

    /// The rate `play()` uses (`defaultRate`).
    public var defaultRate: Float {
        get { settings.withLock { $0.defaultRate } }
        set { settings.withLock { $0.defaultRate = newValue } }
    }

    /// The rate now and every change after.
    public var rateUpdates: AsyncStream<Float> { rateStream.values() }

    /// Plays at `defaultRate`.
    public func play() { setRate(defaultRate) }

    /// Pauses: rate 0.
    public func pause() { setRate(0) }

    /// Plays at `rate` at once, without waiting to minimize stalls (`playImmediately(atRate:)`).
    public func playImmediately(atRate rate: Float) {
        setRate(rate, immediately: true)
    }

    func setRate(_ rate: Float, immediately: Bool = false) {
        rateStream.update(rate)
        queue.async { self.applyRate(rate, immediately: immediately) }
    }

    /// Whether the player is playing, waiting, or paused, and why it waits.
    public var timeControlStatus: TimeControlStatus { timeControlStream.value }
    /// Why the player waits while `timeControlStatus == .waitingToPlayAtSpecifiedRate`.
    public var reasonForWaitingToPlay: WaitingReason? { settings.withLock { $0.reasonForWaitingToPlay } }
    /// The time-control status now and every change after.
    public var timeControlStatusUpdates: AsyncStream<TimeControlStatus> { timeControlStream.values() }

    /// Whether playback waits for enough media before starting and after a stall. Must be false
    /// for `setRate(_:time:atHostTime:)`: a synchronized start cannot wait.
    public var automaticallyWaitsToMinimizeStalling: Bool {
        get { settings.withLock { $0.automaticallyWaitsToMinimizeStalling } }
        set {
            settings.withLock { $0.automaticallyWaitsToMinimizeStalling = newValue }
            // The rate asked for when the waiting ends, not by the time the queue gets to it: the
            // documented pattern sets this to false and calls setRate(_:time:atHostTime:) at once,
            // whose start must not begin early as if a wait for data had ended.
            let rate = self.rate
            if !newValue { queue.async { self.stopWaitingForData(rate: rate) } }
        }
    }

    /// Whether the video sink draws the frame a preroll stops on at once (true, as AVPlayerLayer
    /// shows a paused frame), or first when playback starts. A player prepared in standby behind
    /// another that still plays turns it off, so its first frame does not show before its time.
    public var showsPrerollFrame: Bool {
        get { settings.withLock { $0.showsPrerollFrame } }
        set {
            settings.withLock { $0.showsPrerollFrame = newValue }
            pipelineRef.withLock { $0 }?.showPrerollFrame(newValue)
        }
    }

    /// What happens at the end of the current item.
    public var actionAtItemEnd: ActionAtItemEnd {
        get { settings.withLock { $0.actionAtItemEnd } }
        set { settings.withLock { $0.actionAtItemEnd = newValue } }
    }

    // MARK: Time

    /// The current item's time (`currentTime()`): where playback is now.
    public func currentTime() -> MediaTime {
        if let pipeline = pipelineRef.withLock({ $0 }), let position = pipeline.playbin.queryPosition() {
            return position
        }
        let timebase = publishedTimebase.withLock { $0 }
        return timebase.itemTime(atHost: timebase.rate == 0 ? .invalid : effectiveClock.now())
    }

    // MARK: Audio

    /// Audio volume, 0 to 1 (linear).
    public var volume: Float {
        get { settings.withLock { $0.volume } }
        set {
            let clamped = min(max(newValue, 0), 1)
            settings.withLock { $0.volume = clamped }
            pipelineRef.withLock { $0 }?.playbin.set("volume", Double(clamped))
        }
    }

    /// Whether audio is muted.
    public var isMuted: Bool {
        get { settings.withLock { $0.isMuted } }
        set {
            settings.withLock { $0.isMuted = newValue }
            pipelineRef.withLock { $0 }?.playbin.set("mute", newValue)
        }
    }

    /// The audio sink's GStreamer bin description; nil plays no audio. Changing it rebuilds the
    /// pipeline at the current time.
    public var audioSinkDescription: String? {
        get { settings.withLock { $0.audioSinkDescription } }
        set {
            settings.withLock { $0.audioSinkDescription = newValue }
            queue.async { self.rebuildPipeline() }
        }
    }

    // MARK: Video

    /// Where and how video shows; nil plays no video. Crop, gravity and output size apply while
    /// playing; a new sink description rebuilds the pipeline at the current time.
    public var videoOutput: VideoOutputSettings? {
        get { settings.withLock { $0.video } }
        set {
            let old = settings.withLock { state -> VideoOutputSettings? in
                defer { state.video = newValue }
                return state.video
            }
            queue.async {
                if let newValue, let old, old.sharesSink(with: newValue) {
                    self.engine.pipeline?.updateVideo(newValue)
                } else {
                    self.rebuildPipeline()
                }
            }
        }
    }

    /// Whether the video sink holds a frame of the current item (`AVPlayerLayer.isReadyForDisplay`).
    public var isReadyForDisplay: Bool { readyForDisplayStream.value }

    /// `isReadyForDisplay` now and every change after.
    public var isReadyForDisplayUpdates: AsyncStream<Bool> { readyForDisplayStream.values() }

    /// Frames the video sink rendered and dropped as late, from GStreamer's QoS reports.
    public var videoFrameCounts: (rendered: UInt64, dropped: UInt64) {
        settings.withLock { ($0.framesRendered, $0.framesDropped) }
    }

    /// Every frame the video sink presents, with the master-clock time it was presented at,
    /// measured where it renders. Keeps the newest 4096 for a slow reader.
    public var presentedFrames: AsyncStream<PresentedFrame> { presentedStream.events() }

    /// How the render thread is scheduled.
    public var renderThreadPriority: RenderThreadPriority {
        pipelineRef.withLock { $0 }?.renderThreadPriority ?? .notStarted
    }

    /// The SCHED_FIFO priority asked for the render thread (nil: normal scheduling). The render
    /// thread only waits on the clock and renders, so at real-time priority it is not delayed by
    /// decoders or other processes. `renderThreadPriority` says what was granted.
    public var realtimeRenderPriority: Int32? {
        get { settings.withLock { $0.realtimeRenderPriority } }
        set {
            settings.withLock { $0.realtimeRenderPriority = newValue }
            pipelineRef.withLock { $0 }?.setRealtimePriority(newValue)
        }
    }

    // MARK: Clock

    /// The clock the pipeline runs on and host times are on; nil means `MasterClock.host`.
    /// Takes effect at the next start.
    public var masterClock: MasterClock? {
        get { settings.withLock { $0.masterClock } }
        set { settings.withLock { $0.masterClock = newValue } }
    }

    var effectiveClock: MasterClock { masterClock ?? .host }

    /// The latency every sink presents with, fixed so that it is the same on every node of a wall.
    /// `setRate(_:time:atHostTime:)` accounts for it: frames still appear at the host time given.
    public var pipelineLatency: MediaTime {
        get { settings.withLock { $0.latency } }
        set { settings.withLock { $0.latency = newValue } }
    }

    // MARK: Errors

    func fail(_ error: PlayerError) {
        logger.error("player failed", metadata: ["player.error": "\(error)"])
        settings.withLock { $0.error = error }
        statusStream.update(.failed)
    }

    func setTimeControl(_ status: TimeControlStatus, reason: WaitingReason? = nil) {
        settings.withLock { $0.reasonForWaitingToPlay = status == .waitingToPlayAtSpecifiedRate ? reason : nil }
        timeControlStream.update(status)
    }

    /// Stops playback's rate and its time control status together: both are in place before the
    /// subscribers of either hear of it (the rate's first), so whoever sees the rate fall reads the
    /// new status, and the other way round, whichever path stopped it (an item's end, a failure, a
    /// stall, an unsupported rate).
    func stopPlayback() {
        rateStream.stage(0)
        settings.withLock { $0.reasonForWaitingToPlay = nil }
        timeControlStream.stage(.paused)
        rateStream.deliverStaged()
        timeControlStream.deliverStaged()
    }

    /// Runs `work` on `queue`, or the player's callback queue.
    func deliver(on queue: DispatchQueue?, _ work: @escaping @Sendable () -> Void) {
        (queue ?? callbackQueue).async(execute: work)
    }
}
