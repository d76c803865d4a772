internal import CFFmpeg
import Foundation
import LockstepTime

extension MediaInspector {
    /// How long reading a file's subtitles may take: the whole file is read, its other streams
    /// skipped.
    static let subtitleReadTimeout = MediaTime(value: 60, timescale: 1)

    /// The cues of the subtitle track numbered `number` among the file's subtitle tracks, in item
    /// time (`containerStart` is the inspection's).
    ///
    /// Reads every packet of that track (`av_read_frame`, the other streams discarded) and decodes
    /// it with libavcodec (`avcodec_decode_subtitle2`), which gives every text format as ASS.
    static func subtitleCues(path: String, number: Int, containerStart: MediaTime) throws(PlayerError) -> SubtitleCues {
        try checkRegularFile(path)
        return try withInput(path, timeout: subtitleReadTimeout) { (opening) throws(PlayerError) -> SubtitleCues in
            switch opening {
            case .success(let input):
                return try subtitleCues(in: input, path: path, number: number, containerStart: containerStart)
            case .failure(let failure) where failure.stage == .open:
                throw .unreadableFile(path: path, reason: failure.reason)
            case .failure(let failure):
                throw .corruptMedia(path: path, format: "subtitles", reason: failure.reason)
            }
        }
    }

    /// The cues of an HLS subtitle rendition, read from its media playlist, in item time:
    /// `containerStart` is the main stream's (MPEG-TS time at item time zero), which a segment's
    /// `X-TIMESTAMP-MAP` ties its cue times to; without one, cue times are item time
    /// (`HLSRenditions.timestampOffset`).
    static func subtitleCues(rendition playlist: URL, containerStart: MediaTime) throws(PlayerError) -> SubtitleCues {
        let location = playlist.absoluteString
        let offset = readText(playlist, timeout: readTimeout)
            .flatMap { HLSRenditions.firstSegment(inPlaylist: $0, at: playlist) }
            .flatMap { readText($0, timeout: readTimeout) }
            .flatMap(HLSRenditions.timestampOffset(ofSegment:))
        let options = [(key: "rw_timeout", value: "\(readTimeout.convertScale(1_000_000, method: .default).value)")]
        return try withInput(location, timeout: subtitleReadTimeout, options: options) {
            (opening) throws(PlayerError) -> SubtitleCues in
            switch opening {
            case .success(let input):
                return try subtitleCues(
                    in: input, path: location, number: 0, containerStart: offset.map { containerStart - $0 } ?? .zero)
            case .failure(let failure) where failure.stage == .open:
                throw .networkFailed(url: location, reason: failure.reason)
            case .failure(let failure):
                throw .corruptMedia(path: location, format: "subtitles", reason: failure.reason)
            }
        }
    }

    private static func subtitleCues(
        in input: MediaInput, path: String, number: Int, containerStart: MediaTime
    ) throws(PlayerError) -> SubtitleCues {
        let context = input.context
        let subtitles = (0..<Int(context.pointee.nb_streams)).filter {
            context.pointee.streams[$0]?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
        }
        guard subtitles.indices.contains(number), let stream = context.pointee.streams[subtitles[number]] else {
            throw .itemNotReady("subtitle track \(number + 1) of \(path)")
        }
        for index in 0..<Int(context.pointee.nb_streams) where index != subtitles[number] {
            context.pointee.streams[index]?.pointee.discard = AVDISCARD_ALL
        }
        let parameters = stream.pointee.codecpar!
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw .unsupportedCodec(
                "no subtitle decoder for \(String(cString: avcodec_get_name(parameters.pointee.codec_id)))")
        }
        var codec = avcodec_alloc_context3(decoder)
        defer { avcodec_free_context(&codec) }
        guard let codec, avcodec_parameters_to_context(codec, parameters) >= 0 else {
            throw .unsupportedCodec("the subtitle decoder of \(path) cannot be set up")
        }
        codec.pointee.pkt_timebase = stream.pointee.time_base
        let openedCodec = avcodec_open2(codec, decoder, nil)
        guard openedCodec >= 0 else { throw .unsupportedCodec("subtitles: \(errorString(openedCodec))") }
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        guard let packet else { throw .pipelineConstruction("out of memory reading subtitles") }
        let base = stream.pointee.time_base
        var cues: [SubtitleCues.Cue] = []
        while av_read_frame(context, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == Int32(subtitles[number]) else { continue }
            var subtitle = AVSubtitle()
            var got: Int32 = 0
            guard avcodec_decode_subtitle2(codec, &subtitle, &got, packet) >= 0, got != 0 else { continue }
            defer { avsubtitle_free(&subtitle) }
            let start = time(packet.pointee.pts, numerator: base.num, denominator: base.den)
            guard start.isNumeric else { continue }
            let shownFor =
                packet.pointee.duration > 0
                ? time(packet.pointee.duration, numerator: base.num, denominator: base.den)
                : MediaTime(value: Int64(subtitle.end_display_time), timescale: 1000)
            let lines = textLines(of: subtitle)
            guard !lines.isEmpty, shownFor > .zero else { continue }
            cues.append(
                SubtitleCues.Cue(
                    start: start - containerStart, end: start - containerStart + shownFor,
                    text: lines.joined(separator: "\n")))
        }
        if input.deadline.hasPassed { throw .readTimedOut(path: path, after: subtitleReadTimeout) }
        return SubtitleCues(cues)
    }

    /// The text of each of a decoded subtitle's ASS rectangles, as Pango markup
    /// (`SubtitleCues.plainText`), empty ones left out: every text format libavcodec decodes,
    /// closed captions included, comes as ASS.
    static func textLines(of subtitle: AVSubtitle) -> [String] {
        (0..<Int(subtitle.num_rects)).compactMap { index in
            guard let rect = subtitle.rects[index], rect.pointee.type == SUBTITLE_ASS, let ass = rect.pointee.ass
            else { return nil }
            let text = SubtitleCues.plainText(fromASSDialogue: String(cString: ass))
            return text.isEmpty ? nil : text
        }
    }
}
