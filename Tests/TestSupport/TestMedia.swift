import Foundation
import LockstepLocks

/// Media generated at test time by `scripts/make-media.sh`, once per script version: nothing is
/// downloaded, and the files live in the system's temporary folder.
public enum TestMedia {
    /// The repository's root.
    public static var repositoryRoot: URL { ChildProcess.checkout }

    private static let cache = Mutex<[String: URL]>([:])

    /// A frame-code clip: 30 fps, keyframe every 30 frames, each frame's number in its colour.
    public static func frameCode(seconds: Int = 4, size: String = "160x90") throws -> URL {
        try generate(kind: "framecode", seconds: seconds, size: size)
    }

    /// A frame-code clip whose audio runs on past its video (`audioMilliseconds` in all): a
    /// container as long as its audio, as some encoders leave files.
    public static func frameCode(seconds: Int, size: String = "160x90", audioMilliseconds: Int) throws -> URL {
        let key = "framecode-\(seconds)s-\(size)-audio\(audioMilliseconds)ms"
        if let done = cache.withLock({ $0[key] }) { return done }
        let url = directory.appendingPathComponent("\(key).mp4")
        if !FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try run(
                script.path,
                [
                    "framecode", url.path, String(seconds), size,
                    String(format: "%.3f", Double(audioMilliseconds) / 1000),
                ])
        }
        cache.withLock { $0[key] = url }
        return url
    }

    /// A clip whose frame number is written in bars in each quarter of the picture
    /// (`make-media.sh barcode`), read back from screenshots by `BarCode`.
    public static func barCode(seconds: Int = 4, size: String = "640x360") throws -> URL {
        try generate(kind: "barcode", seconds: seconds, size: size)
    }

    /// An H.264 + AAC test pattern with a tone.
    public static func audioVideo(seconds: Int = 3, size: String = "160x90") throws -> URL {
        try generate(kind: "av", seconds: seconds, size: size)
    }

    /// The frame-code clip remuxed to MPEG-TS by ffmpeg: timestamps start at 1.4 s (video 21 ms
    /// after audio), the first PCR 0.7 s before them.
    public static func frameCodeTransportStream(seconds: Int = 6, size: String = "160x90") throws -> URL {
        try generate(kind: "framecode-ts", seconds: seconds, size: size, fileExtension: "ts")
    }

    /// The H.264 test pattern stored sideways (`size` as stored) with a display matrix that turns
    /// it 90° counterclockwise to show it: a phone video shot upright.
    public static func rotated(seconds: Int = 2, size: String = "320x180") throws -> URL {
        try generate(kind: "rotated", seconds: seconds, size: size)
    }

    /// The test pattern as HAP video in QuickTime: a codec GStreamer 1.22 cannot decode.
    public static func hap(seconds: Int = 1, size: String = "160x96") throws -> URL {
        try generate(kind: "hap", seconds: seconds, size: size, fileExtension: "mov")
    }

    /// Interlaced MPEG-2 in MPEG-TS, top field first, the fields of each frame 1/50 s apart.
    public static func interlaced(seconds: Int = 2, size: String = "320x180") throws -> URL {
        try generate(kind: "interlaced", seconds: seconds, size: size, fileExtension: "ts")
    }

    /// Black video with two audio languages and two subtitle tracks (`make-media.sh languages`):
    /// "English" (eng, 440 Hz, the default) and "Français" (fra, 1000 Hz); subtitles in eng and fra
    /// showing a white line the whole time, SubRip in Matroska (`mkv`), SSA/ASS in Matroska (`ass.mkv`) or
    /// mov_text in MP4 (`mp4`).
    public static func languages(seconds: Int = 6, fileExtension: String = "mkv") throws -> URL {
        try generate(kind: "languages", seconds: seconds, size: "320x180", fileExtension: fileExtension)
    }

    /// The frame-code video alone as AV1 (`make-media.sh framecode-av1`), a keyframe each second.
    public static func frameCodeAV1(seconds: Int = 2, size: String = "160x90") throws -> URL {
        try generate(kind: "framecode-av1", seconds: seconds, size: size)
    }

    /// Black H.264 with a CEA-608 closed caption in its SEI (`make-media.sh captions`): "CAPTION ON"
    /// from 1 s to `seconds` - 1 s.
    public static func captions(seconds: Int = 4) throws -> URL {
        try generate(kind: "captions", seconds: seconds, size: "320x180")
    }

    /// An AAC tone with no video at all: media a player plays but a wall node must refuse.
    /// Two alternate pictures of 4 s in one MP4 (`.visual`): track 1 "Main" (English, the default),
    /// frame codes 0–119; track 2 "Signed" (American Sign Language, `ase`), frame codes 300–419.
    public static func twoAngles() throws -> URL {
        let key = "two-angles.mp4"
        if let done = cache.withLock({ $0[key] }) { return done }
        let url = directory.appendingPathComponent(key)
        if !FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let long = try frameCode(seconds: 20)
            try run(
                "/usr/bin/ffmpeg",
                [
                    "-loglevel", "error", "-y", "-i", try frameCode(seconds: 4).path, "-ss", "10", "-t", "4", "-i",
                    long.path, "-map", "0:v", "-map", "1:v", "-c:v", "libx264", "-g", "30", "-pix_fmt", "yuv420p",
                    "-metadata:s:v:0", "language=eng", "-metadata:s:v:0", "title=Main", "-metadata:s:v:1",
                    "language=ase", "-metadata:s:v:1", "title=Signed", "-disposition:v:0", "default",
                    "-disposition:v:1", "0", url.path + ".partial.mp4",
                ])
            try FileManager.default.moveItem(atPath: url.path + ".partial.mp4", toPath: url.path)
        }
        cache.withLock { $0[key] = url }
        return url
    }

    public static func audioOnly(seconds: Int = 2) throws -> URL {
        let key = "audio-\(seconds)s"
        if let done = cache.withLock({ $0[key] }) { return done }
        let url = directory.appendingPathComponent("\(key).m4a")
        if !FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let partial = directory.appendingPathComponent(
                "\(key).tmp.\(ProcessInfo.processInfo.processIdentifier).m4a")
            try run(
                "/usr/bin/ffmpeg",
                [
                    "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-c:a", "aac", partial.path,
                ])
            // Another test process may have put the same file in place first.
            if (try? FileManager.default.moveItem(at: partial, to: url)) == nil {
                try? FileManager.default.removeItem(at: partial)
                guard FileManager.default.fileExists(atPath: url.path) else {
                    throw TestSupportError("cannot move \(partial.path) to \(url.path)")
                }
            }
        }
        cache.withLock { $0[key] = url }
        return url
    }

    /// A white image, `white.png` in `folder` (beside a wall's media, where its stills may come
    /// from): a flat picture, not black, whose luma is past every frame code's.
    public static func whiteImage(in folder: URL) throws -> URL {
        let raw = folder.appendingPathComponent("white.rgb")
        try Data([UInt8](repeating: 255, count: 64 * 36 * 3)).write(to: raw)
        defer { try? FileManager.default.removeItem(at: raw) }
        let white = folder.appendingPathComponent("white.png")
        _ = try run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "64x36", "-i",
                raw.path, "-frames:v", "1", white.path,
            ])
        return white
    }

    /// `count` bytes a push takes as media, for tests that move files and never play them: an MP4
    /// file-type box (what `wallctl push` looks for first), then random bytes.
    public static func payload(count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        let words = (0..<(count + 7) / 8).map { _ in generator.next() }
        var data = words.withUnsafeBytes { Data($0.prefix(count)) }
        let box: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        data.replaceSubrange(0..<min(box.count, count), with: box.prefix(count))
        return data
    }

    /// A file in a fresh scratch folder of the test run, for deliberately bad media.
    public static func scratchFile(named name: String, contents: Data) throws -> URL {
        let url = directory.appendingPathComponent("scratch-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let file = url.appendingPathComponent(name)
        try contents.write(to: file)
        return file
    }

    private static var script: URL { repositoryRoot.appendingPathComponent("scripts/make-media.sh") }

    /// The cache folder, named after the script's content so a changed script regenerates.
    private static var directory: URL {
        let content = (try? Data(contentsOf: script)) ?? Data()
        let hash = content.reduce(into: UInt64(1_469_598_103_934_665_603)) {
            $0 = ($0 ^ UInt64($1)) &* 1_099_511_628_211
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-media-\(String(hash, radix: 16))")
    }

    private static func generate(kind: String, seconds: Int, size: String, fileExtension: String = "mp4") throws -> URL
    {
        let key = "\(kind)-\(seconds)s-\(size).\(fileExtension)"
        if let done = cache.withLock({ $0[key] }) { return done }
        let url = directory.appendingPathComponent(key)
        if !FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try run(script.path, [kind, url.path, String(seconds), size])
        }
        cache.withLock { $0[key] = url }
        return url
    }

    /// A folder for `HTTPFileServer`: the 4 s frame-code clip as `clip.mp4` and as HLS `vod.m3u8`
    /// (1 s segments; `dated.m3u8` the same with program dates), a 20 s one with its index first, as files meant for progressive download
    /// are, as `long.mp4`, and HLS with alternate renditions (`makeRenditions`). Made once per test
    /// process.
    /// The date `dated.m3u8` gives its first segment.
    public static let programStart = Date(timeIntervalSince1970: 1_795_723_200)  // 2026-11-26T20:00:00Z

    public static func servedOverHTTP() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-http-\(getpid())")
        if let made = cache.withLock({ $0["http"] }) { return made }
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let clip = folder.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(at: frameCode(seconds: 4), to: clip)
        try run(
            "/usr/bin/ffmpeg",
            [
                "-loglevel", "error", "-y", "-i", clip.path, "-c:v", "libx264", "-g", "30", "-sc_threshold", "0",
                "-pix_fmt", "yuv420p", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
                "-hls_segment_filename", folder.appendingPathComponent("seg%03d.ts").path,
                folder.appendingPathComponent("vod.m3u8").path,
            ])
        try run(
            "/usr/bin/ffmpeg",
            [
                "-loglevel", "error", "-y", "-i", frameCode(seconds: 20).path, "-c", "copy", "-movflags", "+faststart",
                folder.appendingPathComponent("long.mp4").path,
            ])
        try makeRenditions(in: folder.appendingPathComponent("renditions"))
        // The same segments with the dates a broadcaster's packager writes: each segment's
        // EXT-X-PROGRAM-DATE-TIME, from 2026-11-26T20:00:00Z, as `dated.m3u8`.
        var dated: [String] = []
        var elapsed = 0.0
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in try String(contentsOf: folder.appendingPathComponent("vod.m3u8"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        {
            if line.hasPrefix("#EXTINF:") {
                dated.append(
                    "#EXT-X-PROGRAM-DATE-TIME:" + formatter.string(from: programStart.addingTimeInterval(elapsed)))
                elapsed += Double(line.dropFirst("#EXTINF:".count).prefix { $0 != "," }) ?? 0
            }
            dated.append(line)
        }
        try (dated.joined(separator: "\n") + "\n").write(
            to: folder.appendingPathComponent("dated.m3u8"), atomically: true, encoding: .utf8)
        cache.withLock { $0["http"] = folder }
        return folder
    }

    /// HLS with alternate renditions, from the 4 s languages clip, as `renditions/master.m3u8`:
    /// the video, two audio renditions ("English" eng 440 Hz, the default; "Français" fra 1000 Hz)
    /// and a WebVTT subtitle rendition ("English", eng), 1 s segments.
    private static func makeRenditions(in folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try run(
            "/usr/bin/ffmpeg",
            [
                "-loglevel", "error", "-y", "-i", languages(seconds: 4).path,
                "-map", "0:v", "-map", "0:a:0", "-map", "0:a:1", "-map", "0:s:0",
                "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", "30", "-sc_threshold", "0",
                "-c:a", "aac", "-b:a", "64k", "-c:s", "webvtt",
                "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", "-master_pl_name", "master.m3u8",
                "-var_stream_map",
                "v:0,s:0,agroup:aud,sgroup:sub a:0,agroup:aud,language:eng,default:yes a:1,agroup:aud,language:fra",
                "-hls_segment_filename", folder.appendingPathComponent("seg_%v_%03d.ts").path,
                folder.appendingPathComponent("stream_%v.m3u8").path,
            ])
        // ffmpeg names renditions by number and gives the subtitles no language; a packager would.
        // (It writes the variant only with every stream's bit rate known: the audio is encoded.)
        let master = folder.appendingPathComponent("master.m3u8")
        let text = try String(contentsOf: master, encoding: .utf8)
            .replacingOccurrences(of: #"NAME="audio_1""#, with: #"NAME="English""#)
            .replacingOccurrences(of: #"NAME="audio_2""#, with: #"NAME="Français""#)
            .replacingOccurrences(
                of: #"NAME="subtitle_0",DEFAULT=NO,"#, with: #"NAME="English",DEFAULT=NO,LANGUAGE="eng","#)
        try text.write(to: master, atomically: true, encoding: .utf8)
    }

    /// Runs a command to completion, throwing with its output when it fails.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(executable, arguments)
        guard result.status == 0 else {
            throw TestSupportError(
                "\(executable) \(arguments.joined(separator: " ")) failed: \(result.output)\n\(result.errors)")
        }
        return result.output
    }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
