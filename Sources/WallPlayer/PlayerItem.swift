import Foundation
import LockstepLocks
import LockstepTime

/// The playback state of one asset in a player (`AVPlayerItem`).
///
/// An item's status stays `unknown` until a player loads it; it becomes `readyToPlay` once the
/// pipeline has prerolled its first frame, or `failed` with a typed `error`. An item is current in
/// at most one player at a time.
public final class PlayerItem: Sendable, CustomStringConvertible {
    /// `AVPlayerItem.Status`.
    public enum Status: Sendable, Hashable {
        case unknown, readyToPlay, failed
    }

    /// What happened to the item, as `AVPlayerItem`'s notifications say it.
    public enum Event: Sendable, Hashable {
        /// The item played to its end (`AVPlayerItemDidPlayToEndTime`).
        case didPlayToEndTime
        /// The item stopped before its end (`AVPlayerItemFailedToPlayToEndTime`).
        case failedToPlayToEndTime(PlayerError)
        /// Media did not arrive in time to keep playing (`AVPlayerItemPlaybackStalled`).
        case playbackStalled
        /// The item's time changed discontinuously: a seek (`AVPlayerItemTimeJumped`).
        case timeJumped
    }

    /// What the player learns when it prerolls the item.
    struct Facts: Sendable, Equatable {
        var duration: MediaTime = .indefinite
        var seekableTimeRanges: [MediaTimeRange] = []
        var loadedTimeRanges: [MediaTimeRange] = []
        var isSeekable = false
    }

    public let asset: URLAsset
    /// The tracks, once the asset is loaded; each can be disabled.
    ///
    /// A local file's are read when the item is made. A network asset is not read on the caller's
    /// thread: its item has no tracks until the asset is loaded (by a player loading the item, or
    /// by `asset.load()`), and they appear then (`trackUpdates`), as `AVPlayerItem.tracks` fill in
    /// once an item from a stream is ready.
    public var tracks: [PlayerItemTrack] {
        adoptLoadedTracks()
        return trackList.value
    }
    /// The tracks now and every change after (they change once, when a network asset's arrive).
    public var trackUpdates: AsyncStream<[PlayerItemTrack]> {
        adoptLoadedTracks()
        return trackList.values()
    }
    private let trackList = ChangeStream([PlayerItemTrack]())
    /// Whether the asset's tracks were taken into `trackList`.
    private let tracksAdopted = Mutex(false)
    private let statusStream = ChangeStream(Status.unknown)
    private let failure = Mutex<PlayerError?>(nil)
    private let facts = Mutex(Facts())
    private let durationStream = ChangeStream(MediaTime.indefinite)
    private let loadedRangesStream = ChangeStream([MediaTimeRange]())
    private let seekableRangesStream = ChangeStream([MediaTimeRange]())
    private let eventStream = EventStream<Event>()
    private let bounds = Mutex((start: MediaTime.zero, forwardEnd: MediaTime.invalid))

    /// An item for the asset. A local file's tracks are read now, synchronously (a failure to read
    /// it shows as `status == .failed` once a player loads the item); a network asset's once it is
    /// loaded.
    public init(asset: URLAsset) {
        self.asset = asset
        automaticallyLoadedAssetKeys = []
        if asset.isFileBased { _ = asset.inspectNow() }
        adoptLoadedTracks()
    }

    /// An item that starts loading `automaticallyLoadedAssetKeys` of its asset at once
    /// (`AVPlayerItem(asset:automaticallyLoadedAssetKeys:)`), so that a network asset is read while
    /// the item waits for a player, not when a player takes it. The item is ready to play only once
    /// they have loaded; a local file's are read now, as any item's.
    public init(asset: URLAsset, automaticallyLoadedAssetKeys keys: [String]) {
        self.asset = asset
        automaticallyLoadedAssetKeys = keys
        if asset.isFileBased {
            _ = asset.inspectNow()
        } else if !keys.isEmpty {
            asset.loadValuesAsynchronously(forKeys: keys) { [weak self] in self?.adoptLoadedTracks() }
        }
        adoptLoadedTracks()
    }

    /// The asset's keys this item loaded as it was made (`automaticallyLoadedAssetKeys`).
    public let automaticallyLoadedAssetKeys: [String]

    public convenience init(url: URL) {
        self.init(asset: URLAsset(url: url))
    }

    // MARK: Playback bounds

    /// Where forward playback of the item ends (`forwardPlaybackEndTime`); invalid (the default)
    /// for the end of its media.
    ///
    /// The item ends there as it would at the end of its media: a queue moves on to its next item,
    /// gaplessly and exactly there, whether the file holds more or less than that (the running
    /// time of the next item follows from these times, not from the file). Read when the item is
    /// loaded, seeked or queued; set it before.
    public var forwardPlaybackEndTime: MediaTime {
        get { bounds.withLock { $0.forwardEnd } }
        set { bounds.withLock { $0.forwardEnd = newValue } }
    }

    /// Where the item starts when it is loaded or a queue moves on to it; zero by default.
    ///
    /// AVFoundation gets the same by seeking an item before it becomes current; a gapless
    /// successor cannot be seeked, so the start is a property here, read when the item is queued.
    public var playbackStartTime: MediaTime {
        get { bounds.withLock { $0.start } }
        set { bounds.withLock { $0.start = newValue.isNumeric && newValue > .zero ? newValue : .zero } }
    }

    /// The item time at which playback of this item ends going forward: its forward end time, or
    /// its media's duration.
    var playbackEnd: MediaTime {
        let end = forwardPlaybackEndTime
        if end.isNumeric, end > .zero { return end }
        if case .success(let inspection)? = asset.loadedInspection { return inspection.duration }
        return .indefinite
    }

    /// What libavformat read of the item's media, once it has (nil: not yet, or it failed).
    var inspection: MediaInspection? {
        if case .success(let inspection)? = asset.loadedInspection { return inspection }
        return nil
    }

    /// GStreamer's stream time at this item's time zero (`MediaInspection.streamTimeOrigin`), or
    /// the one the player measured on the item's first frame (`learnedOrigin`).
    var streamTimeOrigin: MediaTime { learnedOrigin.withLock { $0 } ?? inspection?.streamTimeOrigin ?? .zero }

    /// GStreamer's stream time at item time zero, measured where libavformat's facts cannot give it.
    let learnedOrigin = Mutex<MediaTime?>(nil)

    /// The characteristics whose option was chosen on the item (`select(_:in:)`, a track enabled
    /// or disabled): a player's criteria no longer choose for them.
    let handChosen = Mutex<Set<MediaCharacteristic>>([])

    /// Whether item time zero must be measured on the first frame: GStreamer's HLS demuxer starts
    /// stream time at the first segment's first decoding timestamp, which libavformat does not give,
    /// and an MPEG-TS file's first clock reference is not read ahead over the network.
    var needsLearnedOrigin: Bool {
        guard let format = inspection?.formatName, learnedOrigin.withLock({ $0 }) == nil else { return false }
        return format == "hls" || (format == "mpegts" && !asset.isFileBased)
    }

    /// Takes the asset's tracks once it has been read, each group on its default: the audio track
    /// the container marks default (else the first), no subtitles. A player's criteria may choose
    /// again when the item becomes current.
    func adoptLoadedTracks() {
        guard case .success(let inspection)? = asset.loadedInspection else { return }
        tracksAdopted.withLock { done in
            guard !done else { return }
            done = true
            let adopted = inspection.tracks.map { PlayerItemTrack(assetTrack: $0, isEnabled: true) }
            for track in adopted { track.item = self }
            _ = applySelectionCriteria({ _ in nil }, among: adopted)
            trackList.send(adopted)
        }
    }

    public var status: Status { statusStream.value }
    /// Why the item failed; set before `status` becomes `.failed`.
    public var error: PlayerError? { failure.withLock { $0 } }
    /// The status now and every change after.
    public var statusUpdates: AsyncStream<Status> { statusStream.values() }
    /// Events from now on.
    public var events: AsyncStream<Event> { eventStream.events() }

    /// The duration; `indefinite` until known, or for live streams.
    public var duration: MediaTime {
        let known = facts.withLock { $0.duration }
        if known.isNumeric { return known }
        if case .success(let inspection)? = asset.loadedInspection { return inspection.duration }
        return .indefinite
    }

    /// The time ranges available without waiting for more data: a local file's whole length; over
    /// the network, what the pipeline reports buffered (playbin3 in GStreamer 1.22 reports none).
    public var loadedTimeRanges: [MediaTimeRange] { facts.withLock { $0.loadedTimeRanges } }
    /// The time ranges the player can seek to (a live stream's moves with its window).
    public var seekableTimeRanges: [MediaTimeRange] { facts.withLock { $0.seekableTimeRanges } }

    /// The duration now and every change after (key-value observing of `duration`).
    public var durationUpdates: AsyncStream<MediaTime> { durationStream.values() }
    /// `loadedTimeRanges` now and every change after.
    public var loadedTimeRangesUpdates: AsyncStream<[MediaTimeRange]> { loadedRangesStream.values() }
    /// `seekableTimeRanges` now and every change after.
    public var seekableTimeRangesUpdates: AsyncStream<[MediaTimeRange]> { seekableRangesStream.values() }

    /// Whether rate -1 is possible: a seekable local file in a container whose demuxer plays
    /// backwards (`canStepBack`).
    public var canPlayReverse: Bool { canStepBack }
    /// Whether rates between -1 and 0 are possible (as `canPlayReverse`).
    public var canPlaySlowReverse: Bool { canStepBack }
    /// Whether rates below -1 are possible (as `canPlayReverse`: the decoder goes back a keyframe
    /// interval at a time, and trick modes are not used).
    public var canPlayFastReverse: Bool { canStepBack }
    /// Whether rates between 0 and 1 are possible: any seekable item (a rate is set by a seek).
    public var canPlaySlowForward: Bool { isSeekable }
    /// Whether rates above 1 are possible: any seekable item (a live stream is not).
    public var canPlayFastForward: Bool { isSeekable }

    private var isSeekable: Bool { status == .readyToPlay && facts.withLock { $0.isSeekable } }

    /// The containers whose GStreamer demuxers play a file backwards, a keyframe interval at a
    /// time: QuickTime/MP4 (qtdemux) and Matroska/WebM (matroskademux), by libavformat's names.
    /// Measured with playbin3 on GStreamer 1.22: an MP4 or MKV seeked at rate -1, -2 or -4 plays
    /// backwards; the same stream in MPEG-TS refuses the seek and plays on forwards. Reverse over
    /// http or HLS is not offered.
    static let reverseContainers: Set<String> = ["mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"]

    private var canStepBack: Bool {
        isSeekable && asset.isFileBased && inspection.map { Self.reverseContainers.contains($0.formatName) } == true
    }

    /// Whether a rate is one this item can play at, by the canPlay* properties.
    public func canPlay(atRate rate: Float) -> Bool {
        switch rate {
        case 1, 0: return true
        case let r where r > 1: return canPlayFastForward
        case let r where r > 0: return canPlaySlowForward
        case let r where r > -1: return canPlaySlowReverse
        case -1: return canPlayReverse
        default: return canPlayFastReverse
        }
    }

    /// The player this item is current in.
    var player: Player? { ownerPlayer.withLock { $0.value } }
    private let ownerPlayer = Mutex(Weak<Player>(nil))

    /// The item's current time: its player's, or zero when in no player (`currentTime()`).
    public func currentTime() -> MediaTime {
        player?.currentTime() ?? .zero
    }

    /// Seeks within the item through its player (`seek(to:toleranceBefore:toleranceAfter:completionHandler:)`);
    /// completes with false when the item is in no player or the seek is superseded.
    public func seek(
        to time: MediaTime, toleranceBefore: MediaTime = .positiveInfinity,
        toleranceAfter: MediaTime = .positiveInfinity, completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        guard let player else {
            completionHandler?(false)
            return
        }
        player.seek(
            to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter,
            completionHandler: completionHandler)
    }

    /// The date of item time zero, where the media gives dates (an HLS playlist's
    /// `EXT-X-PROGRAM-DATE-TIME`), once the asset is read.
    var startDate: Date? {
        if case .success(let inspection)? = asset.loadedInspection { return inspection.startDate }
        return nil
    }

    /// The date of the current time, where the media gives dates (an HLS playlist's
    /// `EXT-X-PROGRAM-DATE-TIME`, on a playlist that ends or an `EVENT` one); nil otherwise, as
    /// AVPlayerItem's `currentDate()`.
    public func currentDate() -> Date? {
        let time = currentTime()
        guard let startDate, time.isNumeric else { return nil }
        return startDate.addingTimeInterval(time.seconds)
    }

    /// Seeks to the item time of `date`, where the media gives dates (AVPlayerItem's
    /// `seek(to:completionHandler:)` with a date). Returns false, and does not seek, when the item
    /// has no dates or is in no player.
    @discardableResult
    public func seek(to date: Date, completionHandler: (@Sendable (Bool) -> Void)? = nil) -> Bool {
        guard let startDate, player != nil else { return false }
        let offset = date.timeIntervalSince(startDate)
        guard offset.isFinite else { return false }
        seek(to: MediaTime(seconds: offset, preferredTimescale: 1_000_000_000), completionHandler: completionHandler)
        return true
    }

    /// Completes every seek still pending on this item with false.
    public func cancelPendingSeeks() {
        player?.cancelPendingSeeks(of: self)
    }

    public var description: String { "PlayerItem(\(asset.url.lastPathComponent), \(status))" }

    // MARK: Player side

    func attach(to player: Player?) {
        ownerPlayer.withLock { $0 = Weak(player) }
    }

    func markReady(_ newFacts: Facts) {
        // Known before the status reads ready, told after it: whoever hears of a duration finds
        // the item ready, and whoever finds it ready finds its duration.
        facts.withLock { $0 = newFacts }
        statusStream.update(.readyToPlay)
        publishFacts()
    }

    /// Changes what the player knows of the item, and tells the observers of what changed.
    func updateFacts(_ change: (inout Facts) -> Void) {
        facts.withLock { change(&$0) }
        publishFacts()
    }

    private func publishFacts() {
        let now = facts.withLock { $0 }
        durationStream.update(duration)
        loadedRangesStream.update(now.loadedTimeRanges)
        seekableRangesStream.update(now.seekableTimeRanges)
    }

    func markFailed(_ error: PlayerError) {
        failure.withLock { $0 = error }
        statusStream.update(.failed)
    }

    func post(_ event: Event) {
        eventStream.send(event)
    }

    var hasPlayableVideo: Bool { tracks.contains { $0.assetTrack.mediaType == .video && $0.isEnabled } }

    /// The streams the pipeline plays for this item: the first enabled track of each kind.
    var streamChoice: StreamChoice {
        func firstEnabled(_ type: MediaType) -> Int? {
            tracks.filter { $0.assetTrack.mediaType == type }.firstIndex(where: \.isEnabled)
        }
        let hasVideo = tracks.contains { $0.assetTrack.mediaType == .video }
        let hasAudio = tracks.contains { $0.assetTrack.mediaType == .audio }
        return StreamChoice(
            video: hasVideo ? firstEnabled(.video) : 0, audio: hasAudio ? firstEnabled(.audio) : 0,
            text: firstEnabled(.subtitle))
    }
}

/// One track of an item as the player plays it (`AVPlayerItemTrack`): it can be switched on or off.
///
/// Of each kind the first enabled track plays: one video track, one audio track, and one
/// subtitle track shown over the picture. Enabling a track is choosing it, as selecting its media
/// selection option does; disabling every track of a kind leaves that kind out.
public final class PlayerItemTrack: Sendable {
    public let assetTrack: AssetTrack
    private let enabled: Mutex<Bool>
    private let owner = Mutex<Weak<PlayerItem>>(Weak(nil))

    init(assetTrack: AssetTrack, isEnabled: Bool) {
        self.assetTrack = assetTrack
        enabled = Mutex(isEnabled)
    }

    /// Whether the track plays. A change applies to a playing item at once.
    public var isEnabled: Bool {
        get { enabled.withLock { $0 } }
        set {
            guard setEnabled(newValue), let item else { return }
            item.chosenByHand(assetTrack.mediaType)
            item.player?.tracksChanged(of: item)
        }
    }

    /// Sets whether the track plays without telling the player; returns whether that changed.
    @discardableResult
    func setEnabled(_ value: Bool) -> Bool {
        enabled.withLock { current -> Bool in
            defer { current = value }
            return current != value
        }
    }

    var item: PlayerItem? {
        get { owner.withLock { $0.value } }
        set { owner.withLock { $0 = Weak(newValue) } }
    }
}

/// A weak reference that can sit in a Mutex.
struct Weak<Object: AnyObject>: @unchecked Sendable {
    weak var value: Object?
    init(_ value: Object?) { self.value = value }
}
