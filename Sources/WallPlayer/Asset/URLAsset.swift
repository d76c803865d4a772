import Foundation
import LockstepTime
import Synchronization

/// A media file or stream at a URL (`AVURLAsset`), inspected with libavformat.
///
/// Properties load asynchronously, once: the first `load()` reads the container on a background
/// thread, and later calls return the same result or error.
public final class URLAsset: Sendable {
    public let url: URL
    private let loaded = Mutex<Result<MediaInspection, PlayerError>?>(nil)

    public init(url: URL) {
        self.url = url
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

    func inspection() async throws(PlayerError) -> MediaInspection {
        if let done = loadedInspection { return try done.get() }
        let url = self.url
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<MediaInspection, PlayerError>, Never>) in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: Self.inspect(url))
            }
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
        guard url.isFileURL else {
            return .failure(.unsupportedURL(url.absoluteString))
        }
        do {
            return .success(try MediaInspector.inspect(path: url.path))
        } catch {
            return .failure(error)
        }
    }
}
