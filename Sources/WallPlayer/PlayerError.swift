import LockstepTime

/// What went wrong in WallPlayer. Every case carries its context and reads as a sentence.
public enum PlayerError: Error, Hashable, CustomStringConvertible {
    // MARK: Media

    /// The URL names no file.
    case fileNotFound(path: String)
    /// The file exists but cannot be read (permissions, a directory, an I/O error).
    case unreadableFile(path: String, reason: String)
    /// The path names a FIFO, a device or a socket: opening or reading it could block forever.
    case notARegularFile(path: String, kind: String)
    /// Reading the file's container took longer than the time allowed, and was given up.
    case readTimedOut(path: String, after: MediaTime)
    /// No demuxer recognizes the file: text, random bytes, an unknown format.
    case notAMediaFile(path: String, reason: String)
    /// A demuxer recognizes the format but cannot read the file: truncated or damaged.
    case corruptMedia(path: String, format: String, reason: String)
    /// The file holds no audio or video track that can be played.
    case noPlayableTrack(path: String, found: [String])
    /// GStreamer has no decoder (or demuxer) for part of the media.
    case unsupportedCodec(String)
    /// No installed GStreamer plugin handles part of the media: what is missing (GStreamer's own
    /// description, e.g. "AV1 decoder") and the Debian package that has one, where there is one.
    case missingPlugin(description: String, package: String?)
    /// The URL's scheme is not one WallPlayer plays.
    case unsupportedURL(String)
    /// A network asset could not be read: the server refused, answered with an error, or went away.
    case networkFailed(url: String, reason: String)

    // MARK: Pipeline

    /// A GStreamer element the player needs is not installed.
    case missingElement(String)
    /// A sink description given by the user does not parse.
    case invalidSinkDescription(role: String, description: String, reason: String)
    /// The pipeline could not be put together.
    case pipelineConstruction(String)
    /// The pipeline reported an error while loading or playing.
    case playbackFailed(element: String, reason: String, debug: String?)

    // MARK: Use

    /// `setRate(_:time:atHostTime:)` was called while `automaticallyWaitsToMinimizeStalling` is true.
    case waitsToMinimizeStalling
    /// `setRate(_:time:atHostTime:)` needs a file-based item.
    case notFileBased(String)
    /// The operation needs a current item that is ready to play.
    case itemNotReady(String)
    /// A time argument was not usable.
    case invalidTime(argument: String, time: MediaTime)
    /// The item's media cannot play at that rate.
    case unsupportedRate(Float)
    /// A time at or past the end of the media.
    case timePastEnd(MediaTime, duration: MediaTime)
    /// The request was cancelled before it was served (`cancelAllImageGeneration()`).
    case cancelled(String)
    /// A key `statusOfValue(forKey:error:)` or `loadValuesAsynchronously(forKeys:)` does not know.
    case unknownAssetKey(String, known: [String])

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "media file not found: \(path)"
        case .unreadableFile(let path, let reason):
            return "cannot read media file \(path): \(reason)"
        case .notARegularFile(let path, let kind):
            return "\(path) is \(kind), not a regular file: only media files can be played"
        case .readTimedOut(let path, let after):
            return "reading \(path) did not finish within \(after.seconds) s"
        case .notAMediaFile(let path, let reason):
            return "\(path) is not a media file (\(reason))"
        case .corruptMedia(let path, let format, let reason):
            return "\(path) looks like \(format) but is damaged or truncated (\(reason))"
        case .noPlayableTrack(let path, let found):
            let what = found.isEmpty ? "no tracks at all" : "only \(found.joined(separator: ", "))"
            return "\(path) has no playable audio or video track (\(what))"
        case .unsupportedCodec(let detail):
            return "unsupported codec or format: \(detail)"
        case .missingPlugin(let description, let package):
            let remedy =
                package.map { "; on Debian it is in \($0) (apt-get install \($0))" }
                ?? MissingPlugins.advice(for: description).map { "; \($0)" } ?? ""
            return "no installed GStreamer plugin provides a \(description)\(remedy)"
        case .unsupportedURL(let url):
            return "unsupported URL \(url): only file paths and file://, http(s):// URLs play"
        case .networkFailed(let url, let reason):
            return "cannot read \(url): \(reason)"
        case .missingElement(let factory):
            return "GStreamer element \"\(factory)\" is not installed (run `make setup`)"
        case .invalidSinkDescription(let role, let description, let reason):
            return "invalid \(role) sink description \"\(description)\": \(reason)"
        case .pipelineConstruction(let reason):
            return "cannot build the playback pipeline: \(reason)"
        case .playbackFailed(let element, let reason, let debug):
            return "playback failed in \(element): \(reason)" + (debug.map { " (\($0))" } ?? "")
        case .waitsToMinimizeStalling:
            return "setRate(_:time:atHostTime:) needs automaticallyWaitsToMinimizeStalling to be false"
        case .notFileBased(let url):
            return "setRate(_:time:atHostTime:) needs a file-based item, not \(url)"
        case .timePastEnd(let time, let duration):
            return "\(time) is past the end of the media, which lasts \(duration)"
        case .cancelled(let request):
            return "\(request) was cancelled before it was made"
        case .unknownAssetKey(let key, let known):
            return "\"\(key)\" is not a property an asset loads (it loads \(known.joined(separator: ", ")))"
        case .itemNotReady(let operation):
            return "\(operation) needs a current item that is ready to play"
        case .invalidTime(let argument, let time):
            return "\(argument) must be a numeric time, got \(time)"
        case .unsupportedRate(let rate):
            return "the current item cannot play at rate \(rate)"
        }
    }
}
