internal import CFFmpeg
import LockstepTime

/// An input libavformat opened: valid only within `MediaInspector.withInput`'s body.
struct MediaInput {
    let context: UnsafeMutablePointer<AVFormatContext>
    /// When its reads give up; a read that failed after it passed was interrupted.
    let deadline: InputDeadline
}

/// Why libavformat could not open an input, or read its streams.
struct MediaInputFailure: Error {
    enum Stage: Sendable { case open, streamInfo }
    var stage: Stage
    /// libavformat's error code.
    var code: Int32
    /// The input's deadline had passed: its reads were interrupted.
    var timedOut: Bool
    /// The container format, once the input was open.
    var formatName: String?

    var reason: String { MediaInspector.errorString(code) }
}

extension MediaInspector {
    /// Opens `location` with libavformat, reads its stream information (unless `readingStreams` is
    /// false), hands `body` the context or why there is none, and closes the input when `body`
    /// returns. Every read gives up at `timeout` (`InputDeadline`).
    static func withInput<Value, Failure: Error>(
        _ location: String, timeout: MediaTime, options: [(key: String, value: String)] = [],
        readingStreams: Bool = true,
        _ body: (Result<MediaInput, MediaInputFailure>) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let deadline = InputDeadline(after: timeout)
        var context = avformat_alloc_context()
        context?.pointee.interrupt_callback = deadline.callback
        var dictionary: OpaquePointer?
        for option in options { av_dict_set(&dictionary, option.key, option.value, 0) }
        let opened = avformat_open_input(&context, location, nil, &dictionary)
        av_dict_free(&dictionary)
        guard opened >= 0, let context else {
            // libavformat freed the context.
            return try body(.failure(MediaInputFailure(stage: .open, code: opened, timedOut: deadline.hasPassed)))
        }
        defer {
            var closing: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&closing)
            // The interrupt callback points into the deadline: it must outlive the context.
            withExtendedLifetime(deadline) {}
        }
        if readingStreams {
            let found = avformat_find_stream_info(context, nil)
            guard found >= 0 else {
                return try body(
                    .failure(
                        MediaInputFailure(
                            stage: .streamInfo, code: found, timedOut: deadline.hasPassed,
                            formatName: formatName(of: context))))
            }
        }
        return try body(.success(MediaInput(context: context, deadline: deadline)))
    }

    /// The container format libavformat recognized.
    static func formatName(of context: UnsafeMutablePointer<AVFormatContext>) -> String {
        context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
    }
}
