internal import CGStreamer
internal import CLockstepShims
import Dispatch
import Foundation
import LockstepLocks
import LockstepTime

/// Images of an asset's video at requested times, without a player (`AVAssetImageGenerator`):
/// thumbnails, scrubbing previews, a poster frame.
///
/// Requests are served one at a time, in order, by one paused GStreamer pipeline the generator
/// keeps: each is a flushing seek and the frame the video output prerolls on. With zero
/// tolerances the seek is exact and the image is the frame shown at the requested time; with the
/// default (unbounded) tolerances it goes to the keyframe at or before it, which needs no decoding
/// of the frames in between.
public final class AssetImageGenerator: Sendable {
    /// One generated image: the time asked for, the item time of the frame it shows, and the frame.
    public struct Image: Sendable, Hashable {
        public let requestedTime: MediaTime
        public let actualTime: MediaTime
        public let frame: VideoFrame
    }

    /// How one request ended (`AVAssetImageGenerator.Result`).
    public enum Result: Sendable, Hashable {
        case succeeded(Image)
        case failed(requestedTime: MediaTime, error: PlayerError)
        case cancelled(requestedTime: MediaTime)
    }

    private struct Settings: Sendable {
        var toleranceBefore = MediaTime.positiveInfinity
        var toleranceAfter = MediaTime.positiveInfinity
        var maximumSize: PixelSize?
        var appliesPreferredTrackTransform = false
        var format = VideoFrame.Format.png
    }

    /// How long a seek may take to bring its frame before the request fails.
    static let frameTimeout = MediaTime(value: 10, timescale: 1)

    public let asset: URLAsset
    private let settings = Mutex(Settings())
    /// Bumped by `cancelAllImageGeneration()`: requests made before it are cancelled.
    private let cancellations = Atomic(0)
    private let queue = DispatchQueue(label: "wallplayer.image-generator")
    /// The pipeline, used only on `queue`, built for one orientation setting.
    private let pipeline = Mutex<(output: FrameOutput, turned: Bool)?>(nil)

    public init(asset: URLAsset) {
        self.asset = asset
        GStreamer.ensureInitialized()
    }

    deinit {
        pipeline.withLock { $0?.output.shutdown() }
    }

    /// How far before the requested time an image may be (default: unbounded).
    public var requestedTimeToleranceBefore: MediaTime {
        get { settings.withLock { $0.toleranceBefore } }
        set { settings.withLock { $0.toleranceBefore = newValue } }
    }

    /// How far after the requested time an image may be (default: unbounded).
    public var requestedTimeToleranceAfter: MediaTime {
        get { settings.withLock { $0.toleranceAfter } }
        set { settings.withLock { $0.toleranceAfter = newValue } }
    }

    /// The largest image wanted: a larger picture is scaled down to fit, keeping its aspect ratio
    /// (nil: the picture's own size).
    public var maximumSize: PixelSize? {
        get { settings.withLock { $0.maximumSize } }
        set { settings.withLock { $0.maximumSize = newValue } }
    }

    /// Whether images are turned upright as the video's display matrix says (default: false, the
    /// picture as stored, as AVFoundation's default).
    public var appliesPreferredTrackTransform: Bool {
        get { settings.withLock { $0.appliesPreferredTrackTransform } }
        set { settings.withLock { $0.appliesPreferredTrackTransform = newValue } }
    }

    /// The form of the images (default PNG).
    public var imageFormat: VideoFrame.Format {
        get { settings.withLock { $0.format } }
        set { settings.withLock { $0.format = newValue } }
    }

    /// The image at `time`, within the tolerances.
    public func image(at time: MediaTime) async throws(PlayerError) -> Image {
        let outcome = await withCheckedContinuation { continuation in
            let ticket = cancellations.load(ordering: .acquiring)
            queue.async { continuation.resume(returning: self.serve(time, ticket: ticket)) }
        }
        switch outcome {
        case .succeeded(let image): return image
        case .failed(_, let error): throw error
        case .cancelled: throw .cancelled("the image at \(time)")
        }
    }

    /// The images at `times`, in order, one result each; ends after the last.
    public func images(for times: [MediaTime]) -> AsyncStream<Result> {
        let (stream, continuation) = AsyncStream<Result>.makeStream(bufferingPolicy: .unbounded)
        let ticket = cancellations.load(ordering: .acquiring)
        queue.async {
            for time in times { continuation.yield(self.serve(time, ticket: ticket)) }
            continuation.finish()
        }
        return stream
    }

    /// The images at `times`, each handed to `completionHandler` as it is made, on a queue of the
    /// generator's (`generateCGImagesAsynchronously(forTimes:completionHandler:)`).
    public func generateImagesAsynchronously(
        forTimes times: [MediaTime], completionHandler: @escaping @Sendable (Result) -> Void
    ) {
        let ticket = cancellations.load(ordering: .acquiring)
        queue.async {
            for time in times { completionHandler(self.serve(time, ticket: ticket)) }
        }
    }

    /// Cancels every request not yet served: each ends `cancelled`.
    public func cancelAllImageGeneration() {
        cancellations.add(1, ordering: .releasing)
    }

    // MARK: Serving (on `queue`)

    private func serve(_ time: MediaTime, ticket: Int) -> Result {
        guard cancellations.load(ordering: .acquiring) == ticket else { return .cancelled(requestedTime: time) }
        do {
            return .succeeded(try generate(time))
        } catch {
            return .failed(requestedTime: time, error: error)
        }
    }

    private func generate(_ time: MediaTime) throws(PlayerError) -> Image {
        let wanted = settings.withLock { $0 }
        guard time.isNumeric, time >= .zero else { throw .invalidTime(argument: "time", time: time) }
        guard asset.isFileBased else { throw .notFileBased(asset.url.absoluteString) }
        let inspection = try asset.inspectNow().get()
        guard let video = inspection.tracks.first(where: { $0.mediaType == .video && $0.isPlayable }) else {
            throw .noPlayableTrack(
                path: asset.url.path, found: inspection.tracks.map { "\($0.mediaType.rawValue) (\($0.codec))" })
        }
        if inspection.duration.isNumeric, time >= inspection.duration {
            throw .timePastEnd(time, duration: inspection.duration)
        }
        let destination = MediaInspector.seekDestination(
            for: time, toleranceBefore: wanted.toleranceBefore, toleranceAfter: wanted.toleranceAfter,
            in: inspection, path: asset.url.path)
        let output = try frameOutput(turned: wanted.appliesPreferredTrackTransform)
        let sample = try output.frame(at: destination + inspection.streamTimeOrigin)
        let size = wanted.maximumSize.flatMap { maximum in
            GStreamer.pictureSize(of: gst_sample_get_caps(sample.pointer)).map { Self.fit($0, within: maximum) }
        }
        guard let frame = try VideoFrame.converting(sample, to: wanted.format, size: size) else {
            throw .playbackFailed(
                element: "image generator", reason: "the frame at \(time) holds no picture", debug: nil)
        }
        let shown = Self.unclippedStart(of: sample, frameRate: video.nominalFrameRate) ?? frame.presentationTimestamp
        let actual = shown - inspection.streamTimeOrigin
        // The frame, like the image, in item time.
        let image = VideoFrame(presentationTimestamp: actual, size: frame.size, format: frame.format, data: frame.data)
        return Image(requestedTime: time, actualTime: actual, frame: image)
    }

    /// Where the frame an exact seek landed inside really starts. The decoder clips that frame to
    /// the seek's position: its timestamp says the position and its duration the rest of it. Its
    /// end is true, so at a constant frame rate its start is its end less one frame (nil: not
    /// clipped, or no frame rate to go by).
    private static func unclippedStart(of sample: Sample, frameRate: Float) -> MediaTime? {
        guard frameRate > 0, let buffer = gst_sample_get_buffer(sample.pointer),
            let segment = gst_sample_get_segment(sample.pointer)
        else { return nil }
        let pts = buffer.pointee.pts
        let duration = buffer.pointee.duration
        let frame = GstClockTime((1e9 / Double(frameRate)).rounded())
        guard pts != GStreamer.clockTimeNone, duration != GStreamer.clockTimeNone, pts == segment.pointee.start,
            duration + 1_000 < frame, pts + duration >= frame
        else { return nil }
        // Before the segment's start, where gst_segment_to_stream_time gives none: at rate 1,
        // stream time runs with timestamps.
        guard let time = Int64(exactly: segment.pointee.time) else { return nil }
        return MediaTime(nanoseconds: time - Int64(frame - duration))
    }

    private func frameOutput(turned: Bool) throws(PlayerError) -> FrameOutput {
        let built = pipeline.withLock { $0 }
        if let built, built.turned == turned { return built.output }
        if let built {
            built.output.shutdown()
            pipeline.withLock { $0 = nil }
        }
        let output = try FrameOutput(uri: asset.url.absoluteString, turned: turned)
        pipeline.withLock { $0 = (output, turned) }
        return output
    }

    /// `source` scaled down, keeping its aspect ratio, to fit `maximum`; never scaled up. A zero
    /// side of `maximum` leaves that side free, as AVFoundation's does.
    static func fit(_ source: PixelSize, within maximum: PixelSize) -> PixelSize {
        var scale = 1.0
        if maximum.width > 0 { scale = min(scale, Double(maximum.width) / Double(source.width)) }
        if maximum.height > 0 { scale = min(scale, Double(maximum.height) / Double(source.height)) }
        guard scale < 1 else { return source }
        return PixelSize(
            width: max(1, Int((Double(source.width) * scale).rounded())),
            height: max(1, Int((Double(source.height) * scale).rounded())))
    }
}

/// A paused playbin (`PlaybackPipeline.videoOnly`) that decodes only video into an appsink:
/// deinterlaced as the player shows it, turned upright or not, each seek's frame prerolled and pulled.
private final class FrameOutput: @unchecked Sendable {
    private let playbin: Element
    private let sink: Element

    init(uri: String, turned: Bool) throws(PlayerError) {
        let direction = turned ? Int(GST_VIDEO_ORIENTATION_AUTO.rawValue) : Int(GST_VIDEO_ORIENTATION_IDENTITY.rawValue)
        let output = try Element.parseBin(
            "deinterlace ! videoflip video-direction=\(direction) ! videoconvert ! appsink name=frames sync=false "
                + "max-buffers=1 enable-last-sample=false",
            role: "image generator")
        guard let found = gst_bin_get_by_name(output.cast(to: GstBin.self), "frames") else {
            throw .pipelineConstruction("the image generator's output lost its sink")
        }
        sink = Element(owning: found)
        playbin = try PlaybackPipeline.videoOnly(name: "image-generator", videoSink: output)
        playbin.set("uri", uri)
        playbin.setState(GST_STATE_PAUSED)
        do {
            try settle("opening the file")
        } catch {
            shutdown()
            throw error
        }
    }

    func shutdown() {
        playbin.settleIfTypefinding()
        playbin.setState(GST_STATE_NULL)
    }

    /// The frame a flushing, exact seek to stream time `time` prerolls on.
    func frame(at time: MediaTime) throws(PlayerError) -> Sample {
        guard playbin.seek(to: time, rate: 1, flags: GST_SEEK_FLAG_ACCURATE) else {
            throw .playbackFailed(element: "image generator", reason: "the seek to \(time) was refused", debug: nil)
        }
        try settle("seeking to \(time)")
        guard
            let pulled = gst_app_sink_try_pull_preroll(
                sink.cast(to: GstAppSink.self), AssetImageGenerator.frameTimeout.clockTime ?? 0)
        else {
            throw .playbackFailed(element: "image generator", reason: "no frame came for \(time)", debug: nil)
        }
        return Sample(owning: pulled)
    }

    /// Waits for the pipeline to preroll, turning its error, if any, into one naming `doing`.
    private func settle(_ doing: String) throws(PlayerError) {
        try playbin.awaitPreroll(
            within: AssetImageGenerator.frameTimeout, element: "image generator", doing: doing,
            noFrame: "no frame within \(AssetImageGenerator.frameTimeout.seconds) s")
    }
}
