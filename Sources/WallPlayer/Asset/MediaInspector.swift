internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import LockstepTime

#if canImport(Glibc)
    import Glibc
#endif

/// What libavformat reads from a media file: the facts a `URLAsset` loads.
struct MediaInspection: Sendable, Hashable {
    let formatName: String
    let duration: MediaTime
    let tracks: [AssetTrack]
    let commonMetadata: [MetadataItem]
    /// The container's timestamp of item time zero: its start for MPEG streams, whose timestamps
    /// start anywhere; zero for the rest.
    var containerStart: MediaTime = .zero
    /// GStreamer's stream time at item time zero. Item time counts from the container's start, as
    /// libavformat's does; GStreamer's demuxers agree for every format but MPEG's (see
    /// `MPEGClockReference`).
    var streamTimeOrigin: MediaTime = .zero
    /// The date of item time zero, where an HLS playlist gives one (`EXT-X-PROGRAM-DATE-TIME`).
    var startDate: Date?
}

/// Reads a local media file's container with libavformat.
enum MediaInspector {
    /// How many bytes are read to decide whether an unreadable file is damaged media or no media.
    private static let probeSize = 64 * 1024

    /// How long libavformat may take to open a file and read its streams: a local file takes
    /// milliseconds, so past this the reads are interrupted and loading fails.
    static let readTimeout = MediaTime(value: 10, timescale: 1)

    /// The URL schemes read over the network (libavformat's http protocol; HLS playlists too).
    static let networkSchemes: Set<String> = ["http", "https"]

    /// Reads the media at `url`: a local file (`inspect(path:)`) or an http(s) file or HLS playlist.
    static func inspect(url: URL, timeout: MediaTime = readTimeout) throws(PlayerError) -> MediaInspection {
        if url.isFileURL { return try inspect(path: url.path, timeout: timeout) }
        guard networkSchemes.contains(url.scheme?.lowercased() ?? "") else {
            throw .unsupportedURL(url.absoluteString)
        }
        return try read(url.absoluteString, remote: true, timeout: timeout)
    }

    /// Opens `path`, reads its streams and tags, and closes it again.
    ///
    /// Calls `avformat_open_input` and `avformat_find_stream_info`. Failures become typed errors that
    /// tell a missing file from an unreadable one, no media from damaged media, and media without
    /// any audio or video. Only regular files are opened, and every read gives up at `timeout`.
    static func inspect(path: String, timeout: MediaTime = readTimeout) throws(PlayerError) -> MediaInspection {
        try checkRegularFile(path)
        return try read(path, remote: false, timeout: timeout)
    }

    private static func read(_ location: String, remote: Bool, timeout: MediaTime) throws(PlayerError)
        -> MediaInspection
    {
        av_log_set_level(AV_LOG_QUIET)
        // Over the network, each read or connect also gives up at the timeout on its own (the
        // interrupt callback is polled only between them).
        let options = remote ? [(key: "rw_timeout", value: "\(timeout.convertScale(1_000_000, method: .default).value)")] : []
        return try withInput(location, timeout: timeout, options: options) {
            (opening) throws(PlayerError) -> MediaInspection in
            switch opening {
            case .success(let input):
                return try inspection(of: input.context, location: location, remote: remote)
            case .failure(let failure):
                if failure.timedOut { throw .readTimedOut(path: location, after: timeout) }
                switch failure.stage {
                case .open:
                    if remote { throw .networkFailed(url: location, reason: failure.reason) }
                    throw classifyOpenFailure(path: location, reason: failure.reason)
                case .streamInfo:
                    throw .corruptMedia(path: location, format: failure.formatName ?? "unknown", reason: failure.reason)
                }
            }
        }
    }

    /// What an open input with its streams read holds.
    private static func inspection(
        of context: UnsafeMutablePointer<AVFormatContext>, location: String, remote: Bool
    ) throws(PlayerError) -> MediaInspection {
        let formatName = Self.formatName(of: context)
        let containerDuration = time(context.pointee.duration, numerator: 1, denominator: lockstep_av_time_base())
        let (containerStart, streamTimeOrigin) =
            remote
            ? remoteItemTimeZero(context, format: formatName)
            : itemTimeZero(context, format: formatName, path: location)
        let streamCount = Int(context.pointee.nb_streams)
        var tracks: [AssetTrack] = []
        for index in 0..<streamCount {
            guard let stream = context.pointee.streams[index] else { continue }
            tracks.append(track(from: stream, containerStart: containerStart, containerDuration: containerDuration))
        }
        guard tracks.contains(where: \.isPlayable) else {
            throw .noPlayableTrack(path: location, found: tracks.map { "\($0.mediaType.rawValue) (\($0.codec))" })
        }
        var startDate: Date?
        if remote, formatName == "hls", let master = URL(string: location) {
            tracks += subtitleRenditionTracks(of: master, timeRange: MediaTimeRange(start: .zero, duration: containerDuration))
            startDate = programDate(of: master)
        }
        // A live stream has no duration (libavformat's HLS demuxer leaves it unset without an
        // end to the playlist); its tracks' ranges, which count from the live edge, say nothing either.
        let duration =
            containerDuration.isNumeric
            ? containerDuration
            : remote ? .indefinite : tracks.map(\.timeRange.end).filter(\.isNumeric).max() ?? .indefinite
        return MediaInspection(
            formatName: formatName, duration: duration, tracks: tracks,
            commonMetadata: metadata(context.pointee.metadata), containerStart: containerStart,
            streamTimeOrigin: streamTimeOrigin, startDate: startDate)
    }

    /// The date of item time zero an HLS playlist at `url` gives (its first variant's, for a master).
    private static func programDate(of url: URL) -> Date? {
        guard var text = readText(url, timeout: readTimeout) else { return nil }
        if let variant = HLSProgramDates.firstVariant(inMaster: text, at: url) {
            guard let media = readText(variant, timeout: readTimeout) else { return nil }
            text = media
        }
        return HLSProgramDates.dateOfItemTimeZero(inMediaPlaylist: text)
    }

    /// The subtitle renditions of the HLS master playlist at `master`, as subtitle tracks beside
    /// the streams libavformat reads (`HLSRenditions`); none when the playlist lists none or
    /// cannot be read again.
    private static func subtitleRenditionTracks(of master: URL, timeRange: MediaTimeRange) -> [AssetTrack] {
        guard let text = readText(master, timeout: readTimeout) else { return [] }
        return HLSRenditions.subtitles(inMaster: text, at: master).enumerated().map { index, rendition in
            var track = AssetTrack(
                trackID: Int32(10_000 + index), mediaType: .subtitle, codec: "webvtt", naturalSize: nil,
                preferredRotation: 0, nominalFrameRate: 0, fieldOrder: .unknown, pixelFormat: nil, bitDepth: 0,
                timeRange: timeRange, sampleRate: 0, channelCount: 0, languageCode: rendition.language,
                title: rendition.name, isDefault: rendition.isDefault)
            track.renditionPlaylist = rendition.playlist
            return track
        }
    }

    /// Item time zero of a network stream. An HLS stream's item time counts from the playlist's
    /// start, and an MPEG-TS file's from its start, as a local one's: libavformat's timestamps
    /// start at the stream's clock there. GStreamer's stream time at that point is measured on the
    /// first frame (`PlayerItem.needsLearnedOrigin`): its first clock reference cannot be read
    /// ahead over the network as in a file (`MPEGClockReference`).
    private static func remoteItemTimeZero(_ context: UnsafeMutablePointer<AVFormatContext>, format: String)
        -> (containerStart: MediaTime, streamTime: MediaTime)
    {
        let start = time(context.pointee.start_time, numerator: 1, denominator: lockstep_av_time_base())
        guard format == "hls" || format == "mpegts", start.isNumeric else { return (.zero, .zero) }
        return (start, .zero)
    }

    /// Where item time zero lies: the container's timestamp of it, and GStreamer's stream time of
    /// it. Both zero but for MPEG streams, whose timestamps start anywhere: there item time starts
    /// at the container's start, and GStreamer's stream time at the first clock reference.
    private static func itemTimeZero(
        _ context: UnsafeMutablePointer<AVFormatContext>, format: String, path: String
    ) -> (containerStart: MediaTime, streamTime: MediaTime) {
        let start = time(context.pointee.start_time, numerator: 1, denominator: lockstep_av_time_base())
        guard start.isNumeric, let reference = MPEGClockReference.first(inFileAt: path, format: format) else {
            return (.zero, .zero)
        }
        return (start, start - reference)
    }

    /// The item times of the video keyframes nearest item time `time`: the last at or before it
    /// and the first at or after it (nil where there is none, or the file has no video).
    /// `containerStart` is the inspection's: the container's timestamp of item time zero.
    ///
    /// Calls `av_seek_frame` on the video stream and reads the keyframe packet it lands on: one
    /// seek and a packet or two per question, whatever the file's size.
    static func keyframes(
        around time: MediaTime, containerStart zero: MediaTime, path: String
    ) -> (before: MediaTime?, after: MediaTime?) {
        guard (try? checkRegularFile(path)) != nil else { return (nil, nil) }
        return withInput(path, timeout: readTimeout) { opening in
            guard case .success(let input) = opening else { return (nil, nil) }
            return keyframes(in: input.context, around: time, containerStart: zero)
        }
    }

    private static func keyframes(
        in context: UnsafeMutablePointer<AVFormatContext>, around time: MediaTime, containerStart zero: MediaTime
    ) -> (before: MediaTime?, after: MediaTime?) {
        let index = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = context.pointee.streams[Int(index)] else { return (nil, nil) }
        let base = stream.pointee.time_base
        guard base.num > 0, base.den > 0 else { return (nil, nil) }
        func ticks(_ time: MediaTime) -> Int64 {
            time.multiplied(byRatio: Int64(base.den), Int64(base.num)).convertScale(1, method: .towardNegativeInfinity)
                .value
        }
        /// The keyframe that `av_seek_frame` lands on from `timestamp`: (pts, dts) in stream ticks.
        func keyframe(from timestamp: Int64, backward: Bool) -> (pts: Int64, dts: Int64)? {
            guard av_seek_frame(context, index, timestamp, backward ? AVSEEK_FLAG_BACKWARD : 0) >= 0,
                let packet = av_packet_alloc()
            else { return nil }
            var owned: UnsafeMutablePointer<AVPacket>? = packet
            defer { av_packet_free(&owned) }
            for _ in 0..<64 {
                guard av_read_frame(context, packet) >= 0 else { return nil }
                defer { av_packet_unref(packet) }
                guard packet.pointee.stream_index == index, packet.pointee.flags & AV_PKT_FLAG_KEY != 0 else {
                    continue
                }
                let nopts = lockstep_av_nopts_value()
                let dts = packet.pointee.dts != nopts ? packet.pointee.dts : packet.pointee.pts
                return (packet.pointee.pts != nopts ? packet.pointee.pts : dts, dts)
            }
            return nil
        }
        // Containers seek by decode time: a keyframe found backward from the target may still be
        // presented after it (B-frames). Then it is the one after, and the one before lies
        // further back.
        func seconds(_ ticks: Int64) -> MediaTime {
            Self.time(ticks, numerator: base.num, denominator: base.den) - zero
        }
        let target = ticks(time + zero)
        guard let found = keyframe(from: target, backward: true) else { return (nil, nil) }
        if found.pts <= target {
            let next = keyframe(from: target + 1, backward: false)
            return (seconds(found.pts), next.map { seconds($0.pts) })
        }
        // MPEG-TS seeks by bisecting on timestamps and may land past a keyframe: step back
        // further, a second more each time, doubling.
        var previous: (pts: Int64, dts: Int64)?
        var from = found.dts - 1
        var step = ticks(MediaTime(value: 1, timescale: 1))
        for _ in 0..<6 where step > 0 {
            if let candidate = keyframe(from: from, backward: true), candidate.pts <= target {
                previous = candidate
                break
            }
            from -= step
            step *= 2
        }
        return (previous.map { seconds($0.pts) }, seconds(found.pts))
    }

    /// Where a seek to `target` within the tolerances goes: the exact target for zero tolerances;
    /// otherwise the video keyframe the tolerances allow that is nearest the target (the one at or
    /// before it when both are unbounded, as `seek(to:)` promises), found in the container.
    /// Decoding then starts at that keyframe, which is what makes a tolerant seek fast; the exact
    /// target when none qualifies.
    static func seekDestination(
        for target: MediaTime, toleranceBefore before: MediaTime, toleranceAfter after: MediaTime,
        in inspection: MediaInspection, path: String
    ) -> MediaTime {
        guard before != .zero || after != .zero else { return target }
        let keyframes = keyframes(around: target, containerStart: inspection.containerStart, path: path)
        if before.isPositiveInfinity, after.isPositiveInfinity, let previous = keyframes.before {
            return previous
        }
        let allowed = [keyframes.before, keyframes.after].compactMap { $0 }.filter {
            $0 >= target - before && $0 <= target + after
        }
        return allowed.min { ($0 - target).magnitude < ($1 - target).magnitude } ?? target
    }

    /// A compressed packet of a media file, as its container stores it.
    struct Packet: Sendable, Equatable {
        /// The presentation time in the track's own timeline (edit lists not applied).
        let timestamp: MediaTime
        let duration: MediaTime
        let data: [UInt8]
    }

    /// The packets of the file's `ordinal`-th audio track whose presentation times, in the track's
    /// own timeline (edit lists not applied, as GStreamer's demuxer stamps them), lie in `range`.
    ///
    /// Calls `av_seek_frame` a second before the range and reads on from there: a few packets
    /// whatever the file's size. Empty when the file cannot be read.
    static func audioPackets(path: String, ordinal: Int, in range: Range<MediaTime>, limit: Int = 64) -> [Packet] {
        guard (try? checkRegularFile(path)) != nil else { return [] }
        return withInput(path, timeout: readTimeout, options: [(key: "ignore_editlist", value: "1")], readingStreams: false) {
            opening in
            guard case .success(let input) = opening else { return [] }
            return audioPackets(in: input.context, ordinal: ordinal, in: range, limit: limit)
        }
    }

    private static func audioPackets(
        in context: UnsafeMutablePointer<AVFormatContext>, ordinal: Int, in range: Range<MediaTime>, limit: Int
    ) -> [Packet] {
        let audio = (0..<Int(context.pointee.nb_streams)).filter {
            context.pointee.streams[$0]?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        }
        guard audio.indices.contains(ordinal), let stream = context.pointee.streams[audio[ordinal]] else { return [] }
        let index = Int32(audio[ordinal])
        let base = stream.pointee.time_base
        guard base.num > 0, base.den > 0, let packet = av_packet_alloc() else { return [] }
        var owned: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&owned) }
        let from = (range.lowerBound - MediaTime(value: 1, timescale: 1))
            .multiplied(byRatio: Int64(base.den), Int64(base.num)).convertScale(1, method: .towardNegativeInfinity)
            .value
        _ = av_seek_frame(context, index, max(0, from), AVSEEK_FLAG_BACKWARD)
        var found: [Packet] = []
        let nopts = lockstep_av_nopts_value()
        while found.count < limit, av_read_frame(context, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == index, packet.pointee.pts != nopts else { continue }
            let timestamp = time(packet.pointee.pts, numerator: base.num, denominator: base.den)
            if timestamp >= range.upperBound { break }
            guard timestamp >= range.lowerBound, let bytes = packet.pointee.data else { continue }
            found.append(
                Packet(
                    timestamp: timestamp,
                    duration: time(packet.pointee.duration, numerator: base.num, denominator: base.den),
                    data: Array(UnsafeBufferPointer(start: bytes, count: Int(packet.pointee.size)))))
        }
        return found
    }

    /// Refuses anything but a readable regular file, before anything opens it for reading.
    ///
    /// Opening a FIFO blocks until a writer comes, and reading a character device such as
    /// /dev/kmsg blocks until it has something to say: either would hold the thread that opens it,
    /// and whoever waits for that thread, forever. So the path is `stat`ed first (opening a device
    /// can have effects of its own), then opened with `O_NONBLOCK` and checked again on the open
    /// descriptor, which also tells a file that cannot be read.
    static func checkRegularFile(_ path: String) throws(PlayerError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw openError(path: path, code: errno) }
        try requireRegular(path: path, mode: info.st_mode)
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw openError(path: path, code: errno) }
        defer { close(descriptor) }
        guard fstat(descriptor, &info) == 0 else { throw openError(path: path, code: errno) }
        try requireRegular(path: path, mode: info.st_mode)
    }

    private static func requireRegular(path: String, mode: mode_t) throws(PlayerError) {
        switch mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: throw .unreadableFile(path: path, reason: "it is a directory")
        case S_IFIFO: throw .notARegularFile(path: path, kind: "a FIFO")
        case S_IFCHR: throw .notARegularFile(path: path, kind: "a character device")
        case S_IFBLK: throw .notARegularFile(path: path, kind: "a block device")
        case S_IFSOCK: throw .notARegularFile(path: path, kind: "a socket")
        default: throw .notARegularFile(path: path, kind: "of an unknown kind")
        }
    }

    private static func openError(path: String, code: Int32) -> PlayerError {
        switch code {
        case ENOENT, ENOTDIR: return .fileNotFound(path: path)
        case EACCES, EPERM: return .unreadableFile(path: path, reason: "permission denied")
        default: return .unreadableFile(path: path, reason: String(cString: strerror(code)))
        }
    }

    /// A file libavformat cannot open is "damaged media" when a demuxer still recognizes its first
    /// bytes with some confidence, and "not media" otherwise.
    private static func classifyOpenFailure(path: String, reason: String) -> PlayerError {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return .unreadableFile(path: path, reason: reason)
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: probeSize)) ?? Data()
        if head.isEmpty { return .notAMediaFile(path: path, reason: "the file is empty") }
        var buffer = [UInt8](head)
        buffer.append(contentsOf: [UInt8](repeating: 0, count: Int(lockstep_avprobe_padding_size())))
        var score: Int32 = 0
        let format = path.withCString { filename in
            buffer.withUnsafeMutableBufferPointer { bytes in
                var probe = AVProbeData(
                    filename: filename, buf: bytes.baseAddress, buf_size: Int32(head.count), mime_type: nil)
                return av_probe_input_format3(&probe, 1, &score)
            }
        }
        if let format, score >= lockstep_avprobe_score_max() / 4 {
            let name = format.pointee.long_name.map { String(cString: $0) } ?? String(cString: format.pointee.name)
            return .corruptMedia(path: path, format: name, reason: reason)
        }
        return .notAMediaFile(path: path, reason: reason)
    }

    private static func track(
        from stream: UnsafeMutablePointer<AVStream>, containerStart: MediaTime, containerDuration: MediaTime
    ) -> AssetTrack {
        let parameters = stream.pointee.codecpar.pointee
        let mediaType: MediaType
        switch parameters.codec_type {
        case AVMEDIA_TYPE_VIDEO: mediaType = .video
        case AVMEDIA_TYPE_AUDIO: mediaType = .audio
        case AVMEDIA_TYPE_SUBTITLE: mediaType = .subtitle
        case AVMEDIA_TYPE_DATA: mediaType = .data
        case AVMEDIA_TYPE_ATTACHMENT: mediaType = .attachment
        default: mediaType = .unknown
        }
        let timeBase = stream.pointee.time_base
        let start = time(stream.pointee.start_time, numerator: timeBase.num, denominator: timeBase.den)
        let length = time(stream.pointee.duration, numerator: timeBase.num, denominator: timeBase.den)
        let startTime = start.isNumeric ? start - containerStart : .zero
        let timeRange = MediaTimeRange(
            start: startTime, duration: length.isNumeric ? length : containerDuration - startTime)

        var naturalSize: PixelSize?
        var frameRate: Float = 0
        var rotation = 0
        var fieldOrder = FieldOrder.unknown
        var pixelFormat: String?
        var bitDepth = 0
        if mediaType == .video {
            rotation = Self.rotation(of: stream)
            fieldOrder = Self.fieldOrder(parameters.field_order)
            if let descriptor = av_pix_fmt_desc_get(AVPixelFormat(rawValue: parameters.format)) {
                pixelFormat = String(cString: descriptor.pointee.name)
                bitDepth = Int(descriptor.pointee.comp.0.depth)
            }
            let aspect = parameters.sample_aspect_ratio
            var width = Int(parameters.width)
            if aspect.num > 0, aspect.den > 0, aspect.num != aspect.den {
                width = Int((Double(width) * Double(aspect.num) / Double(aspect.den)).rounded())
            }
            naturalSize = PixelSize(width: width, height: Int(parameters.height))
            let rate =
                stream.pointee.avg_frame_rate.den > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
            if rate.den > 0 { frameRate = Float(rate.num) / Float(rate.den) }
        }
        let language = av_dict_get(stream.pointee.metadata, "language", nil, 0).map {
            String(cString: $0.pointee.value)
        }
        return AssetTrack(
            trackID: stream.pointee.id == 0 ? stream.pointee.index + 1 : stream.pointee.id,
            mediaType: mediaType,
            codec: String(cString: avcodec_get_name(parameters.codec_id)),
            naturalSize: naturalSize,
            preferredRotation: rotation,
            nominalFrameRate: frameRate,
            fieldOrder: fieldOrder,
            pixelFormat: pixelFormat,
            bitDepth: bitDepth,
            timeRange: timeRange,
            sampleRate: mediaType == .audio ? Int(parameters.sample_rate) : 0,
            channelCount: mediaType == .audio ? Int(parameters.ch_layout.nb_channels) : 0,
            languageCode: language.flatMap { $0 == "und" ? nil : $0 },
            title: av_dict_get(stream.pointee.metadata, "title", nil, 0).map { String(cString: $0.pointee.value) },
            isDefault: stream.pointee.disposition & AV_DISPOSITION_DEFAULT != 0)
    }

    /// Degrees clockwise the stream's display matrix turns the stored picture, to the nearest
    /// quarter turn: 0 without a matrix.
    private static func rotation(of stream: UnsafeMutablePointer<AVStream>) -> Int {
        var size = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size),
            size >= 9 * MemoryLayout<Int32>.size
        else { return 0 }
        let counterclockwise = data.withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
        guard counterclockwise.isFinite else { return 0 }
        let quarterTurns = Int((-counterclockwise / 90).rounded())
        return ((quarterTurns % 4) + 4) % 4 * 90
    }

    /// libavcodec's field order, in display order: "coded top first, bottom displayed first" is
    /// bottom first.
    private static func fieldOrder(_ order: AVFieldOrder) -> FieldOrder {
        switch order {
        case AV_FIELD_PROGRESSIVE: return .progressive
        case AV_FIELD_TT, AV_FIELD_BT: return .topFieldFirst
        case AV_FIELD_BB, AV_FIELD_TB: return .bottomFieldFirst
        default: return .unknown
        }
    }

    private static func metadata(_ dictionary: OpaquePointer?) -> [MetadataItem] {
        var items: [MetadataItem] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
            items.append(
                MetadataItem(key: String(cString: next.pointee.key), value: String(cString: next.pointee.value)))
            entry = next
        }
        return items
    }

    /// A libav timestamp in `numerator/denominator` seconds; `AV_NOPTS_VALUE` is indefinite.
    static func time(_ value: Int64, numerator: Int32, denominator: Int32) -> MediaTime {
        guard value != lockstep_av_nopts_value(), numerator > 0, denominator > 0 else { return .indefinite }
        return MediaTime(value: value, timescale: denominator).multiplied(byRatio: Int64(numerator), 1)
    }

    static func errorString(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A deadline for libavformat's blocking calls (`AVIOInterruptCB`): every read and every step of
/// `avformat_find_stream_info` asks it whether to give up.
final class InputDeadline {
    private let deadline: UnsafeMutablePointer<Int64>

    init(after timeout: MediaTime) {
        deadline = .allocate(capacity: 1)
        deadline.initialize(to: LocalClock.monotonicNanoseconds() + (timeout.nanoseconds ?? 0))
    }

    deinit {
        deadline.deallocate()
    }

    /// The callback for `AVFormatContext.interrupt_callback`; valid while this object lives, so the
    /// context must be closed first.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: interruptAtDeadline, opaque: UnsafeMutableRawPointer(deadline))
    }

    var hasPassed: Bool { LocalClock.monotonicNanoseconds() >= deadline.pointee }
}

private let interruptAtDeadline: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
    guard let opaque else { return 0 }
    return LocalClock.monotonicNanoseconds() >= opaque.load(as: Int64.self) ? 1 : 0
}
