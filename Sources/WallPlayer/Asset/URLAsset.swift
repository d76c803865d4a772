import Foundation
import LockstepLocks
import LockstepTime

/// A media file or stream at a URL (`AVURLAsset`), inspected with libavformat.
///
/// Properties load asynchronously, once: the first `load()` reads the container on a background
/// thread, and later calls return the same result or error.
public final class URLAsset: Sendable {
    public let url: URL
    private let loaded = Mutex<Result<MediaInspection, PlayerError>?>(nil)
    /// The cues of each subtitle track read so far, by the track's number among subtitle tracks.
    let subtitleCues = Mutex<[Int: Result<SubtitleCues, PlayerError>]>([:])
    /// Subtitle tracks whose cues a caller is reading now (`claimSubtitleRead`).
    let subtitleReads = Mutex<Set<Int>>([])
    /// Loads started by `loadValuesAsynchronously(forKeys:completionHandler:)`, for its statuses.
    let keyLoading = Mutex(KeyLoading())

    struct KeyLoading {
        /// The loads under way, to cancel.
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var nextTask: UInt64 = 0
        /// Whether the last load ended by `cancelLoading()` (until another starts).
        var cancelled = false
    }

    public init(url: URL) {
        self.url = url
    }

    /// The URL for media named as a user types it: a URL with a scheme (`http://…`, `file://…`) as
    /// it is, anything else as a file path.
    public static func url(forLocation location: String) -> URL {
        if location.range(of: "^[A-Za-z][A-Za-z0-9+.-]*://", options: .regularExpression) != nil,
            let url = URL(string: location)
        {
            return url
        }
        return URL(fileURLWithPath: location)
    }

    /// Whether the URL names a local file, as `setRate(_:time:atHostTime:)` requires.
    public var isFileBased: Bool { url.isFileURL }

    /// The asset's duration; `indefinite` for live streams.
    public var duration: MediaTime {
        get async throws(PlayerError) { try await inspection().duration }
    }

    /// All tracks of the asset.
    public var tracks: [AssetTrack] {
        get async throws(PlayerError) { try await inspection().tracks }
    }

    /// Tags with a meaning across formats (title, creator, ...).
    public var commonMetadata: [MetadataItem] {
        get async throws(PlayerError) { try await inspection().commonMetadata.filter { $0.commonKey != nil } }
    }

    /// Every tag of the container.
    public var metadata: [MetadataItem] {
        get async throws(PlayerError) { try await inspection().commonMetadata }
    }

    /// The container format's short name as libavformat knows it ("mov,mp4,m4a,3gp,3g2,mj2", ...).
    public var formatName: String {
        get async throws(PlayerError) { try await inspection().formatName }
    }

    /// The tracks of one media type (`loadTracks(withMediaType:)`).
    public func loadTracks(withMediaType mediaType: MediaType) async throws(PlayerError) -> [AssetTrack] {
        try await tracks.filter { $0.mediaType == mediaType }
    }

    /// Whether the asset has a playable audio or video track; false when it cannot be loaded.
    public var isPlayable: Bool {
        get async { (try? await tracks.contains(where: \.isPlayable)) ?? false }
    }

    /// Loads every property, throwing what went wrong.
    public func load() async throws(PlayerError) {
        _ = try await inspection()
    }

    /// The loaded result, if loading finished.
    var loadedInspection: Result<MediaInspection, PlayerError>? { loaded.withLock { $0 } }

    /// How long after `MediaInspector.readTimeout` an async load gives up on a read that libavformat
    /// could not interrupt (one stuck in the kernel): its thread is left behind, its caller is not.
    static let abandonAfter = MediaTime(value: 1, timescale: 1)

    /// Loads on a thread of its own, so a slow or stuck read never holds a thread of Swift's
    /// cooperative pool (or an actor waiting for it) past the read timeout.
    func inspection() async throws(PlayerError) -> MediaInspection {
        if let done = loadedInspection { return try done.get() }
        let url = self.url
        let timeout = MediaInspector.readTimeout
        let limit = timeout + Self.abandonAfter
        let answer = await Deadline.firstAnswer(within: limit) {
            (answer: @escaping @Sendable (Result<MediaInspection, PlayerError>) -> Void) in
            let reader = Thread { answer(Self.inspect(url)) }
            reader.name = "wallplayer.inspect"
            reader.start()
        }
        let name = url.isFileURL ? url.path : url.absoluteString
        guard let result = answer ?? (Task.isCancelled ? nil : .failure(.readTimedOut(path: name, after: timeout)))
        else {
            // Whoever asked has gone: nothing is known of the file, and a later load reads it again.
            throw .cancelled("loading \(name)")
        }
        let stored = loaded.withLock { current in
            if current == nil { current = result }
            return current!
        }
        return try stored.get()
    }

    /// Inspects synchronously on the caller's thread, storing the result.
    func inspectNow() -> Result<MediaInspection, PlayerError> {
        if let done = loadedInspection { return done }
        let result = Self.inspect(url)
        return loaded.withLock { current in
            if current == nil { current = result }
            return current!
        }
    }

    private static func inspect(_ url: URL) -> Result<MediaInspection, PlayerError> {
        do {
            return .success(try MediaInspector.inspect(url: url))
        } catch {
            return .failure(error)
        }
    }
}
