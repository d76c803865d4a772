internal import CFFmpeg
internal import CFFmpegShims
import LockstepTime

/// A camera's video file, decoded frame by frame to luma with libavcodec (any format and codec
/// Debian's FFmpeg reads: a phone's H.264 or HEVC, 8 or 10 bits). Frames come in presentation
/// order with their presentation times, as the camera stamped them (a phone's slow motion is
/// often not evenly spaced). The picture is the sensor's, before any display rotation the file
/// asks for: its rows are in the order the sensor read them, which is what a rolling shutter is
/// about.
public struct CameraVideo: Sendable {
    public let path: String

    /// Why a video could not be read.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(path: String) { self.path = path }

    /// Decodes every frame in turn and hands it to `body`, until the file ends or `body` returns
    /// false. Calls `avformat_open_input`, `avcodec_send_packet` and `avcodec_receive_frame`.
    public func forEachFrame(_ body: (GrayFrame) throws -> Bool) throws {
        var opening: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&opening, path, nil, nil)
        guard opened >= 0, let format = opening else {
            throw Failure(description: "\(path): cannot open it (\(Self.message(opened)))")
        }
        defer { avformat_close_input(&opening) }
        let info = avformat_find_stream_info(format, nil)
        guard info >= 0 else { throw Failure(description: "\(path): cannot read its streams (\(Self.message(info)))") }
        let index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = format.pointee.streams[Int(index)] else {
            throw Failure(description: "\(path): no video stream")
        }
        guard let decoder = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else {
            throw Failure(description: "\(path): no decoder for its video (\(Self.codecName(stream)))")
        }
        var codec = avcodec_alloc_context3(decoder)
        guard let context = codec else { throw Failure(description: "\(path): out of memory") }
        defer { avcodec_free_context(&codec) }
        avcodec_parameters_to_context(context, stream.pointee.codecpar)
        context.pointee.thread_count = 0
        let openedCodec = avcodec_open2(context, decoder, nil)
        guard openedCodec >= 0 else {
            throw Failure(description: "\(path): cannot open its decoder (\(Self.message(openedCodec)))")
        }
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            av_packet_free(&packet)
            av_frame_free(&frame)
        }
        guard let packet, let frame else { throw Failure(description: "\(path): out of memory") }
        let timeBase = stream.pointee.time_base
        var going = true
        /// Takes every frame the decoder has ready.
        func drain() throws {
            while going {
                let received = avcodec_receive_frame(context, frame)
                if received == lockstep_averror_eagain() || received == lockstep_averror_eof() { return }
                guard received >= 0 else {
                    throw Failure(description: "\(path): the video does not decode (\(Self.message(received)))")
                }
                defer { av_frame_unref(frame) }
                let stamp = frame.pointee.best_effort_timestamp
                guard stamp != lockstep_av_nopts_value() else { continue }
                let time = MediaTime(value: stamp * Int64(timeBase.num), timescale: timeBase.den)
                going = try body(try Self.luma(frame, time: time, path: path))
            }
        }
        while going {
            let read = av_read_frame(format, packet)
            if read < 0 { break }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == index else { continue }
            let sent = avcodec_send_packet(context, packet)
            guard sent >= 0 || sent == lockstep_averror_eagain() else {
                throw Failure(description: "\(path): the video does not decode (\(Self.message(sent)))")
            }
            try drain()
        }
        if going {
            avcodec_send_packet(context, nil)
            try drain()
        }
    }

    /// The luma plane of a decoded frame, 8 bits.
    static func luma(_ frame: UnsafeMutablePointer<AVFrame>, time: MediaTime, path: String) throws -> GrayFrame {
        let width = Int(frame.pointee.width)
        let height = Int(frame.pointee.height)
        guard width > 1, height > 1, let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)) else {
            throw Failure(description: "\(path): a frame without a picture")
        }
        let flags = descriptor.pointee.flags
        let component = descriptor.pointee.comp.0
        guard flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0, flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0,
            flags & UInt64(AV_PIX_FMT_FLAG_BE) == 0 || component.depth == 8,
            component.plane == 0, component.depth >= 8, component.depth <= 16, let data = frame.pointee.data.0
        else {
            let name = String(cString: descriptor.pointee.name)
            throw Failure(description: "\(path): its pictures are \(name); calibrate reads YUV or grey video")
        }
        let stride = Int(frame.pointee.linesize.0)
        let step = Int(component.step)
        let depth = Int(component.depth)
        let shift = Int(component.shift)
        var pixels = [UInt8](repeating: 0, count: width * height)
        pixels.withUnsafeMutableBufferPointer { out in
            for y in 0..<height {
                let row = data + y * stride + Int(component.offset)
                if depth == 8 {
                    for x in 0..<width { out[y * width + x] = row[x * step] }
                } else {
                    for x in 0..<width {
                        let low = UInt16(row[x * step])
                        let high = UInt16(row[x * step + 1])
                        let value = (high << 8 | low) >> UInt16(shift)
                        out[y * width + x] = UInt8(truncatingIfNeeded: value >> UInt16(depth - 8))
                    }
                }
            }
        }
        return GrayFrame(width: width, height: height, pixels: pixels, time: time)
    }

    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func codecName(_ stream: UnsafeMutablePointer<AVStream>) -> String {
        String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id))
    }
}
