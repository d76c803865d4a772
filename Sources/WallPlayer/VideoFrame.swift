internal import CGStreamer
internal import CLockstepShims
import Foundation
import LockstepTime

/// A copy of one video frame, as encoded image or raw pixels.
public struct VideoFrame: Sendable, Hashable {
    /// What to copy a frame as.
    public enum Format: Sendable, Hashable {
        /// A PNG image.
        case png
        /// Raw I420 (planar Y, then U and V at half resolution).
        case i420
        /// Raw packed RGB, 3 bytes a pixel, rows without padding.
        case rgb

        var caps: String {
            switch self {
            case .png: return "image/png"
            case .i420: return "video/x-raw,format=I420"
            case .rgb: return "video/x-raw,format=RGB"
            }
        }
    }

    public let presentationTimestamp: MediaTime
    public let size: PixelSize
    public let format: Format
    public let data: Data
}

extension Player {
    /// The longest side a frame copy may have: 8K UHD's width, twice.
    public static let maximumFrameSide = 15_360

    /// A copy of the frame the video sink shows now (prerolled or presented), converted to
    /// `format` and stretched to exactly `size` if given; nil before the first frame
    /// (`AVPlayerItemVideoOutput.copyPixelBuffer`).
    public func copyCurrentVideoFrame(format: VideoFrame.Format = .png, size: PixelSize? = nil) throws(PlayerError)
        -> VideoFrame?
    {
        guard let pipeline = pipelineRef.withLock({ $0 }) else { return nil }
        return try VideoFrame.copying(pipeline.lastVideoSample(), to: format, size: size)
    }
}

extension VideoFrame {
    /// A copy of `sample` as `Player.copyCurrentVideoFrame` makes it, its size checked first; nil
    /// when there is no sample.
    static func copying(_ sample: Sample?, to format: Format, size: PixelSize?) throws(PlayerError) -> VideoFrame? {
        let limit = Player.maximumFrameSide
        if let size, !(1...limit).contains(size.width) || !(1...limit).contains(size.height) {
            throw .pipelineConstruction(
                "a frame copy of \(size.width)x\(size.height): each side must be 1 to \(limit) pixels")
        }
        guard let sample else { return nil }
        return try converting(sample, to: format, size: size)
    }
}

extension VideoFrame {
    /// `sample` converted to `format`, stretched to exactly `size` if given, stamped with its item
    /// time; nil when it holds no buffer.
    static func converting(_ sample: Sample, to format: Format, size: PixelSize?) throws(PlayerError) -> VideoFrame? {
        var description = format.caps
        if let size { description += ",width=\(size.width),height=\(size.height)" }
        guard let caps = gst_caps_from_string(description) else {
            throw .pipelineConstruction("bad frame format \(description)")
        }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(caps).assumingMemoryBound(to: GstMiniObject.self)) }
        var error: UnsafeMutablePointer<GError>?
        guard let converted = gst_video_convert_sample(sample.pointer, caps, 5 * 1_000_000_000, &error) else {
            throw .playbackFailed(element: "frame copy", reason: GStreamer.consume(error), debug: nil)
        }
        let result = Sample(owning: converted)
        guard let buffer = gst_sample_get_buffer(result.pointer) else { return nil }
        var info = GstMapInfo()
        guard gst_buffer_map(buffer, &info, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &info) }
        var data = Data(bytes: info.data, count: Int(info.size))
        let picture = GStreamer.pictureSize(of: gst_sample_get_caps(result.pointer)) ?? PixelSize(width: 0, height: 0)
        if format == .rgb { data = unpadded(data, width: picture.width, height: picture.height) }
        return VideoFrame(presentationTimestamp: sample.streamTime, size: picture, format: format, data: data)
    }

    /// GStreamer pads RGB rows to 4 bytes; a frame copy has none.
    private static func unpadded(_ data: Data, width: Int, height: Int) -> Data {
        let row = width * 3
        let stride = (row + 3) & ~3
        guard stride != row, height > 0, data.count >= stride * height else { return data }
        var packed = Data(capacity: row * height)
        for y in 0..<height { packed.append(data[(y * stride)..<(y * stride + row)]) }
        return packed
    }
}

extension Sample {
    /// The item time of the sample's buffer: its timestamp through the sample's segment (see
    /// PresentedFrame); `invalid` without a timestamp.
    var streamTime: MediaTime {
        var time = gst_sample_get_buffer(pointer)?.pointee.pts ?? GStreamer.clockTimeNone
        if let segment = gst_sample_get_segment(pointer), time != GStreamer.clockTimeNone {
            let streamTime = gst_segment_to_stream_time(segment, GST_FORMAT_TIME, time)
            if streamTime != GStreamer.clockTimeNone { time = streamTime }
        }
        return time == GStreamer.clockTimeNone ? .invalid : MediaTime(clockTime: time)
    }
}
