internal import CGStreamer
internal import CLockstepShims
import Foundation
import LockstepLocks
import LockstepTime

/// What a frame of a file costs this machine, measured: decoding it, deinterlacing, cropping it to
/// the tile and bringing it to the output's size and format, as the player does before its sink,
/// at full speed over a short stretch of the file (after a preroll, which is not counted). Measured
/// on the machine as it is (a node playing meanwhile shares the CPU with it, as it will in a show).
///
/// A node whose frames cost more than about two thirds of a frame period has no room for the
/// sink's own drawing, a busy moment or a second pipeline preparing a cut: it presents late.
public struct FrameCost: Sendable, Hashable {
    /// Wall time per frame at full speed.
    public let perFrame: MediaTime
    /// The file's frame period (from its frame rate), when it has one.
    public let framePeriod: MediaTime?
    /// How many frames were timed.
    public let frames: Int

    /// The share of the frame period a frame costs (nil without a frame period).
    public var shareOfFramePeriod: Double? {
        guard let framePeriod, framePeriod > .zero else { return nil }
        return perFrame.seconds / framePeriod.seconds
    }

    /// How long a measurement may take at most, opening and seeking included: a node answers a
    /// check within it, well inside the controller's 5 s request limit. A file whose frames cost
    /// so much that `frames` of them do not fit is measured over the frames that did.
    public static let limit = MediaTime(value: 3, timescale: 1)

    /// Measures `frames` frames of `url` from item time `start`, through `video`'s crop, scale
    /// and size (its sink is not used: a measuring pipeline must not draw on the screen), all
    /// within `limit`.
    public static func measure(
        url: URL, video: VideoOutputSettings, start: MediaTime = .zero, frames: Int = 45, limit: MediaTime = limit
    ) throws(PlayerError) -> FrameCost {
        let deadline = LocalClock.monotonic.now() + limit
        GStreamer.ensureInitialized()
        let asset = URLAsset(url: url)
        let inspection = try asset.inspectNow().get()
        guard let track = inspection.tracks.first(where: { $0.mediaType == .video && $0.isPlayable }) else {
            throw .noPlayableTrack(
                path: url.path, found: inspection.tracks.map { "\($0.mediaType.rawValue) (\($0.codec))" })
        }
        let rate = Double(track.nominalFrameRate)
        let period = rate > 0 ? MediaTime(seconds: 1 / rate, preferredTimescale: 1_000_000_000) : nil
        // The stretch timed: `frames` periods from `start`, within the file.
        let step = period ?? MediaTime(value: 1, timescale: 30)
        var from = start.isNumeric && start >= .zero ? start : .zero
        var until = from + step * Int64(frames + 1)
        if inspection.duration.isNumeric, until > inspection.duration {
            until = inspection.duration
            from = MediaTime.maximum(.zero, until - step * Int64(frames + 1))
        }
        let sizeCaps = video.outputSize.map {
            "video/x-raw,width=\($0.width),height=\($0.height),pixel-aspect-ratio=1/1"
        }
        let output = try Element.parseBin(
            "deinterlace ! videocrop name=crop ! videoscale ! videoconvert ! capsfilter caps=\"\(sizeCaps ?? "video/x-raw")\" "
                + "! fakesink name=cost sync=false enable-last-sample=false",
            role: "frame cost")
        let playbin = try PlaybackPipeline.videoOnly(name: "frame-cost", videoSink: output)
        playbin.set("uri", url.absoluteString)
        defer {
            playbin.settleIfTypefinding()
            playbin.setState(GST_STATE_NULL)
        }
        if let crop = gst_bin_get_by_name(output.cast(to: GstBin.self), "crop"), let size = track.naturalSize {
            let cropper = Element(owning: crop)
            let insets = video.cropInsets(source: size)
            cropper.set("left", Int32(insets.left))
            cropper.set("right", Int32(insets.right))
            cropper.set("top", Int32(insets.top))
            cropper.set("bottom", Int32(insets.bottom))
        }
        guard let found = gst_bin_get_by_name(output.cast(to: GstBin.self), "cost"),
            let pad = gst_element_get_static_pad(found, "sink")
        else { throw .pipelineConstruction("the frame cost pipeline lost its sink") }
        gst_object_unref(UnsafeMutableRawPointer(found))
        let counter = FrameCounter()
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, countFrame, handOff(counter), releaseCounter)
        gst_object_unref(UnsafeMutableRawPointer(pad))

        playbin.setState(GST_STATE_PAUSED)
        try settle(playbin, "opening \(url.lastPathComponent)", until: deadline, limit: limit)
        let origin = inspection.streamTimeOrigin
        guard playbin.seek(to: from + origin, rate: 1, flags: GST_SEEK_FLAG_ACCURATE, stop: until + origin) else {
            throw .playbackFailed(
                element: "frame cost", reason: "the seek to \(from.seconds) s was refused", debug: nil)
        }
        try settle(playbin, "seeking to \(from.seconds) s", until: deadline, limit: limit)
        // The prerolled frame is not timed: from here on, every frame decoded and converted is.
        counter.count.withLock { $0 = 0 }
        let began = LocalClock.monotonic.now()
        playbin.setState(GST_STATE_PLAYING)
        guard let bus = playbin.bus else { throw .pipelineConstruction("the frame cost pipeline has no bus") }
        // The stretch's end, or the deadline: then the frames counted so far are the measurement.
        let popped = gst_bus_timed_pop_filtered(
            bus.pointer, remaining(until: deadline).clockTime ?? 0,
            GstMessageType(GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue))
        let counted = counter.count.withLock { $0 }
        let elapsed = LocalClock.monotonic.now() - began
        if let popped {
            let message = Message(owning: popped)
            if message.pointer.pointee.type == GST_MESSAGE_ERROR {
                let reason = withExtendedLifetime(message) { GStreamer.errorText(of: message.pointer).reason }
                throw .playbackFailed(element: "frame cost", reason: reason, debug: nil)
            }
        }
        guard counted > 0 else {
            throw .playbackFailed(
                element: "frame cost",
                reason: popped == nil
                    ? "not one frame was decoded within \(limit.seconds) s" : "no frame came after the preroll",
                debug: nil)
        }
        return FrameCost(perFrame: elapsed.multiplied(byRatio: 1, Int64(counted)), framePeriod: period, frames: counted)
    }

    /// What is left before `deadline` (none once it passed).
    private static func remaining(until deadline: MediaTime) -> MediaTime {
        MediaTime.maximum(.zero, deadline - LocalClock.monotonic.now())
    }

    private static func settle(
        _ playbin: Element, _ doing: String, until deadline: MediaTime, limit: MediaTime
    ) throws(PlayerError) {
        try playbin.awaitPreroll(
            within: remaining(until: deadline), element: "frame cost", doing: doing,
            noFrame: "no frame within the measurement's \(limit.seconds) s")
    }
}

/// Frames that reached the measuring sink, counted on its streaming thread.
private final class FrameCounter: Sendable {
    let count = Mutex(0)
}

private let countFrame: GstPadProbeCallback = { _, _, data in
    guard let data else { return GST_PAD_PROBE_OK }
    Unmanaged<FrameCounter>.fromOpaque(data).takeUnretainedValue().count.withLock { $0 += 1 }
    return GST_PAD_PROBE_OK
}

private let releaseCounter: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<FrameCounter>.fromOpaque(data).release()
}
