import Foundation
import LockstepTime
import Logging
import SyncClock
import WallDisplay
import WallPlayer
import WallProtocol
import WallTimeline

/// The node's commands over its player, one at a time: what the control API calls.
///
/// Prerolling and starting need the clock locked to the master (waiting up to the configured
/// timeout); a start is `setRate(_:time:atHostTime:)`, moved earlier by this screen's display
/// latency so that light leaves every screen at once.
actor NodeController {
    /// How long an item may take to load, and a preroll to finish.
    static let loadTimeout = MediaTime(value: 30, timescale: 1)
    /// A start time must be at least this far ahead when the command arrives.
    static let minimumStartLead = MediaTime(value: 20, timescale: 1000)

    let settings: NodeSettings
    let player: QueuePlayer
    let clock: ClockFollower
    let frames: FrameLog
    /// The node's window, black between shows; nil when the sink has none of ours.
    let screen: OutputWindow?
    let logger: Logger
    var looper: PlayerLooper?
    var loadedMedia: String?
    /// The item time the player is prerolled at, until it plays or moves.
    var prerolledAt: MediaTime?
    /// The timeline this node follows, and what it has set the player to do for it
    /// (NodeController+Timeline.swift).
    var following = TimelineFollowing()
    /// The test card on the screen, if any (NodeController+Identify.swift).
    var identification: Identification?
    var identificationSerial: UInt64 = 0
    /// The configured still, decoded for this screen, or why it cannot be shown.
    let still: Result<(rgb: [UInt8], size: PixelSize), PlayerError>?
    /// Why the configured still cannot be shown; nil when it can or there is none.
    nonisolated var stillProblem: String? {
        if case .failure(let error) = still { return "\(error)" }
        return nil
    }
    /// The still while it is on the screen.
    var stillShown: StillPicture?

    init(
        settings: NodeSettings, player: QueuePlayer, clock: ClockFollower, frames: FrameLog,
        screen: OutputWindow? = nil,
        logger: Logger
    ) {
        self.settings = settings
        self.player = player
        self.clock = clock
        self.frames = frames
        self.screen = screen
        self.logger = logger
        still = settings.still.map { still in
            Result { () throws(PlayerError) in try StillPicture.decodeImage(atPath: still.path, crop: still.crop) }
        }
        if case .failure(let error) = still {
            logger.error(
                "the still cannot be shown: screens stay black between shows", metadata: ["still.error": "\(error)"])
        }
    }

    // MARK: Commands

    /// Loads the configured media (or `media`, which must be a regular file inside the media
    /// roots), paused at its start.
    ///
    /// The file is read first, off this actor (`URLAsset` loads on a thread of its own, with a
    /// deadline), so a slow or stuck file never holds status and the other commands; and media
    /// without video is refused here, not in the player: WallPlayer plays audio-only files, but a
    /// wall node exists to show a picture.
    func load(media: String?) async throws(NodeError) {
        suspendFollowing(because: "a one-shot command")
        clearScreenForPlayer()
        let path =
            try media.map { media throws(NodeError) in
                try checked { () throws(RequestRejection) in
                    try settings.mediaRoots.resolve(media)
                }
            } ?? settings.media
        let asset = URLAsset(url: URL(fileURLWithPath: path))
        let tracks: [AssetTrack]
        do {
            tracks = try await asset.tracks
        } catch {
            throw .mediaFailed(error)
        }
        guard tracks.contains(where: { $0.mediaType == .video && $0.isPlayable }) else {
            throw .noVideoTrack(path: path, found: tracks.map { "\($0.mediaType.rawValue) (\($0.codec))" })
        }
        prerolledAt = nil
        player.pause()
        let item = PlayerItem(asset: asset)
        if settings.loop {
            looper?.disableLooping()
            looper = PlayerLooper(player: player, templateItem: item)
        } else {
            looper?.disableLooping()
            looper = nil
            player.removeAllItems()
            player.insert(item, after: nil)
        }
        guard let current = player.currentItem else { throw .nothingLoaded }
        try await waitUntilReady(current)
        loadedMedia = path
        logger.info(
            "media loaded", metadata: ["node.media": "\(path)", "media.duration_ns": .nanoseconds(current.duration)])
    }

    /// Seeks exactly to `itemTime` and prerolls there, with the clock locked.
    func preroll(at itemTime: MediaTime) async throws(NodeError) {
        try await clock.waitUntilLocked(timeout: settings.lockTimeout)
        if loadedMedia == nil { try await load(media: nil) }
        guard let item = player.currentItem else { throw .nothingLoaded }
        if item.status == .failed { throw .mediaFailed(item.error ?? .itemNotReady("preroll")) }
        try checked { () throws(RequestRejection) in try RequestChecks.itemTime(itemTime, duration: item.duration) }
        if prerolledAt == itemTime, player.rate == 0 { return }
        prerolledAt = nil
        player.pause()
        guard try answered(await exactSeek(to: itemTime), "the player's seek to \(itemTime)") else {
            throw .prerollFailed("the seek to \(itemTime) was superseded or refused")
        }
        guard try answered(await prerollPlayer(), "the player's preroll at \(itemTime)") else {
            throw .prerollFailed(item.error.map { "\($0)" } ?? "a newer command came first")
        }
        prerolledAt = itemTime
        logger.info("prerolled", metadata: ["node.item_time_ns": .nanoseconds(itemTime)])
    }

    /// Starts at `request.hostTime` on the master clock with `request.itemTime`.
    func start(_ request: StartRequest) async throws(NodeError) {
        suspendFollowing(because: "a one-shot command")
        guard clock.isLocked, let master = clock.masterClock else {
            throw .clockNotLocked(state: clock.report().state, waited: .zero)
        }
        guard loadedMedia != nil, let item = player.currentItem else { throw .nothingLoaded }
        let now = master.now()
        try checked { () throws(RequestRejection) in
            try RequestChecks.rate(request.rate, canPlay: item.canPlay(atRate:))
            try RequestChecks.itemTime(request.itemTime, duration: item.duration)
            try scheduled(request.hostTime, now: now)
        }
        let presentAt = request.hostTime - settings.displayLatency
        player.automaticallyWaitsToMinimizeStalling = false
        do {
            try player.setRate(request.rate, time: request.itemTime, atHostTime: presentAt)
        } catch {
            throw .playerRefused(error)
        }
        prerolledAt = nil
        logger.info(
            "start scheduled",
            metadata: [
                "start.host_time_ns": .nanoseconds(request.hostTime),
                "start.item_time_ns": .nanoseconds(request.itemTime),
                "start.in_ns": .nanoseconds(presentAt - now), "start.rate": .value(request.rate),
            ])
    }

    /// Pauses, at once or at a host time on the master clock.
    func pause(at hostTime: MediaTime?) throws(NodeError) {
        suspendFollowing(because: "a one-shot command")
        guard let hostTime else {
            prerolledAt = nil
            return player.pause()
        }
        guard clock.isLocked, let master = clock.masterClock else {
            throw .clockNotLocked(state: clock.report().state, waited: .zero)
        }
        try checked { () throws(RequestRejection) in try scheduled(hostTime, now: master.now()) }
        prerolledAt = nil
        do {
            try player.setRate(0, time: .invalid, atHostTime: hostTime - settings.displayLatency)
        } catch {
            throw .playerRefused(error)
        }
    }

    /// Pauses and moves exactly to `itemTime`, prerolled there.
    func seek(to itemTime: MediaTime) async throws(NodeError) {
        suspendFollowing(because: "a one-shot command")
        try await preroll(at: itemTime)
    }

    /// Stops and unloads.
    func stop() {
        suspendFollowing(because: "stop")
        stopPlayer()
        logger.info("stopped")
    }

    /// Empties the player and drops the looper.
    func stopPlayer() {
        clearScreenForPlayer()
        looper?.disableLooping()
        looper = nil
        player.pause()
        player.removeAllItems()
        loadedMedia = nil
        prerolledAt = nil
        blankScreen()
    }

    /// Shows the still (or black) once the player has let go of the screen: the sink leaves its
    /// last frame drawn, and between shows a wall shows its still or black, not a frozen picture.
    func blankScreen() {
        let player = self.player
        Task {
            await player.settle()
            await self.showBetweenShows()
        }
    }

    /// Shows the configured still, or paints the window black, when nothing else is on the screen.
    func showBetweenShows() {
        guard player.currentItem == nil, identification == nil, stillShown == nil else { return }
        if case .success(let image) = still, let video = player.videoOutput {
            do {
                stillShown = try StillPicture(rgb: image.rgb, size: image.size, output: video)
                return
            } catch {
                logger.error("the still cannot be shown", metadata: ["still.error": "\(error)"])
            }
        }
        screen?.clear()
    }

    /// Takes the still and any test card off the screen: the player is about to show something.
    func clearScreenForPlayer() {
        endIdentification(showingStill: false)
        stillShown?.close()
        stillShown = nil
    }

    // MARK: Status

    func status() -> NodeStatus {
        let item = player.currentItem
        let counts = frames.counts
        let reading = clock.masterClock?.reading()
        return NodeStatus(
            id: settings.id,
            masterTime: reading?.master, monotonicTime: reading.map { MediaTime(nanoseconds: $0.monotonicNanoseconds) },
            clock: clock.report(),
            player: PlayerReport(
                status: "\(player.status)", media: loadedMedia, itemStatus: item.map { "\($0.status)" },
                timeControlStatus: "\(player.timeControlStatus)",
                waitingReason: player.reasonForWaitingToPlay.map { "\($0)" }, rate: player.rate,
                position: item == nil ? .zero : player.currentTime(), prerolled: prerolledAt != nil,
                framesPresented: counts.presented, framesLate: counts.late,
                framesDropped: player.videoFrameCounts.dropped, renderThread: player.renderThreadPriority.description,
                error: (player.error ?? item?.error).map { "\($0)" }),
            timeline: timelineReport())
    }

    // MARK: Helpers

    /// Checks a host time a command schedules something at: far enough ahead to act on, with this
    /// screen's display latency taken off, and within the wall's start horizon.
    func scheduled(_ hostTime: MediaTime, now: MediaTime) throws(RequestRejection) {
        try RequestChecks.hostTime(
            hostTime, now: now, minimumLead: Self.minimumStartLead + settings.displayLatency,
            horizon: settings.startHorizon)
    }

    func checked<T>(_ check: () throws(RequestRejection) -> T) throws(NodeError) -> T {
        // Assigned, then returned after the `do`: Swift 6.3 at -O miscompiles a generic result
        // returned from inside `do throws(E)` (see Wall.eachNode in wallctl).
        let result: Result<T, RequestRejection>
        do throws(RequestRejection) {
            result = .success(try check())
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let value): return value
        case .failure(let rejection): throw .rejected(rejection)
        }
    }

    /// How long the node waits for its player to complete a seek or a preroll. A pipeline wedged
    /// inside GStreamer may never complete one; the node must not wait with it: the command fails,
    /// an anchor is tried again on a new pipeline, and a shutdown is never held up.
    static let playerAnswerLimit = MediaTime(value: 8, timescale: 1)

    /// Seeks the player exactly to `itemTime`: whether the seek finished, or nil when the player
    /// gave no answer within `playerAnswerLimit` (or the node is shutting down).
    func exactSeek(to itemTime: MediaTime) async -> Bool? {
        let player = self.player
        return await playerAnswer("an exact seek to \(itemTime.seconds) s") { done in
            player.seek(to: itemTime, toleranceBefore: .zero, toleranceAfter: .zero, completionHandler: done)
        }
    }

    /// Prerolls the player for rate 1: whether that finished, or nil as for `exactSeek(to:)`.
    func prerollPlayer() async -> Bool? {
        let player = self.player
        let answer = await playerAnswer("a preroll") { done in player.preroll(atRate: 1, completionHandler: done) }
        if answer == nil { player.cancelPendingPrerolls() }
        return answer
    }

    /// The player's answer to `request`, started by `start`, within `playerAnswerLimit`; nil, logged
    /// unless the node is shutting down, when there was none.
    private func playerAnswer(
        _ request: String, _ start: @Sendable (@escaping @Sendable (Bool) -> Void) -> Void
    ) async -> Bool? {
        let answer = await Deadline.firstAnswer(within: Self.playerAnswerLimit, start)
        if answer == nil, !Task.isCancelled {
            logger.error(
                "the player did not answer; its pipeline will be replaced",
                metadata: ["player.request": "\(request)", "player.limit_ns": .nanoseconds(Self.playerAnswerLimit)])
        }
        return answer
    }

    /// The player's answer to a one-shot request; when there was none, the pipeline is renewed and
    /// the request times out (HTTP 503), so the next one starts afresh.
    private func answered(_ answer: Bool?, _ request: String) throws(NodeError) -> Bool {
        guard let answer else {
            forgetWedgedPipeline()
            throw .timedOut(what: request, after: Self.playerAnswerLimit)
        }
        return answer
    }

    /// After the player failed to answer: the next load builds a new pipeline, and a one-shot
    /// command loads the media again rather than trusting the old one.
    func forgetWedgedPipeline() {
        player.renewPipelineAtNextLoad()
        loadedMedia = nil
        prerolledAt = nil
    }

    func waitUntilReady(_ item: PlayerItem) async throws(NodeError) {
        let limit = Self.loadTimeout
        let status = await withTaskGroup(of: PlayerItem.Status?.self) { group in
            group.addTask {
                for await status in item.statusUpdates where status != .unknown { return status }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .nanoseconds(limit.nanoseconds ?? 0))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch status {
        case .readyToPlay?: return
        case .failed?: throw .mediaFailed(item.error ?? .itemNotReady("load"))
        case .unknown?, nil: throw .timedOut(what: "loading \(item.asset.url.path)", after: limit)
        }
    }
}
