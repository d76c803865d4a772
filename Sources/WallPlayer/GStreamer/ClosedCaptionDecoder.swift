internal import CFFmpeg
internal import CGStreamer
internal import CLockstepShims
import LockstepTime

/// Decodes the CEA-608 closed captions that ride on video frames into the text on screen.
///
/// Broadcast video carries its captions inside the video stream (ATSC A/53 user data in H.264 and
/// MPEG-2 SEI), not as a track of their own; GStreamer's decoders hand them on each decoded frame
/// (`GstVideoCaptionMeta`). GStreamer 1.22 has no CEA-608 text decoder, so libavcodec's
/// (`cc_dec`, field 1, channel CC1) turns them into the screen's text, in real-time mode: it tells
/// every change of the screen as the frame that makes it arrives (at most one each 200 ms). One
/// decoder per video stream; not thread-safe (the video streaming thread feeds it).
final class ClosedCaptionDecoder {
    /// What the screen shows, after a frame's captions: its text (nil: nothing).
    enum Change: Equatable {
        case text(String?)
    }

    private var codec: UnsafeMutablePointer<AVCodecContext>?
    /// The stream time of the last frame fed, to notice a jump (a seek) and start afresh.
    private var last: MediaTime?

    init() {}

    deinit {
        avcodec_free_context(&codec)
    }

    /// Feeds the captions of the frame at `streamTime`: `type` is its `GstVideoCaptionType`.
    /// Returns the screen's new text when this frame changed it.
    func decode(type: Int32, data: UnsafeRawBufferPointer, at streamTime: MediaTime) -> Change? {
        if let last, streamTime < last || streamTime - last > MediaTime(value: 1, timescale: 2) {
            // A seek: what was on screen is gone, and the decoder's timing restarts.
            avcodec_free_context(&codec)
        }
        last = streamTime
        guard let triplets = Self.triplets(type: type, data), !triplets.isEmpty, let codec = opened() else {
            return nil
        }
        guard let packet = av_packet_alloc() else { return nil }
        var owned: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&owned) }
        guard av_new_packet(packet, Int32(triplets.count)) >= 0 else { return nil }
        triplets.withUnsafeBytes { packet.pointee.data.update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: triplets.count) }
        packet.pointee.pts = streamTime.nanoseconds ?? 0
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        guard avcodec_decode_subtitle2(codec, &subtitle, &got, packet) >= 0, got != 0 else { return nil }
        defer { avsubtitle_free(&subtitle) }
        let lines = MediaInspector.textLines(of: subtitle)
        return .text(lines.isEmpty ? nil : lines.joined(separator: "\n"))
    }

    private func opened() -> UnsafeMutablePointer<AVCodecContext>? {
        if let codec { return codec }
        guard let decoder = avcodec_find_decoder(AV_CODEC_ID_EIA_608), let context = avcodec_alloc_context3(decoder)
        else { return nil }
        var created: UnsafeMutablePointer<AVCodecContext>? = context
        context.pointee.pkt_timebase = AVRational(num: 1, den: 1_000_000_000)
        var options: OpaquePointer?
        av_dict_set(&options, "real_time", "1", 0)
        defer { av_dict_free(&options) }
        guard avcodec_open2(context, decoder, &options) >= 0 else {
            avcodec_free_context(&created)
            return nil
        }
        codec = context
        return context
    }

    /// The caption bytes as cc_data triplets (marker and type, two bytes), which libavcodec's
    /// decoder reads: CEA-708 raw is that already; CEA-608 byte pairs and SMPTE 334-1 triplets
    /// become field-1 (or field-2) 608 triplets. CDP packets are not read (nil).
    static func triplets(type: Int32, _ data: UnsafeRawBufferPointer) -> [UInt8]? {
        let bytes = Array(data)
        switch UInt32(type) {
        case GST_VIDEO_CAPTION_TYPE_CEA708_RAW.rawValue:
            return Array(bytes.prefix(bytes.count - bytes.count % 3))
        case GST_VIDEO_CAPTION_TYPE_CEA608_RAW.rawValue:
            return stride(from: 0, to: bytes.count - 1, by: 2).flatMap { [0xFC, bytes[$0], bytes[$0 + 1]] }
        case GST_VIDEO_CAPTION_TYPE_CEA608_S334_1A.rawValue:
            return stride(from: 0, to: bytes.count - 2, by: 3).flatMap {
                [bytes[$0] & 0x80 != 0 ? 0xFC : 0xFD, bytes[$0 + 1], bytes[$0 + 2]]
            }
        default:
            return nil
        }
    }
}
