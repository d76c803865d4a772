import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Encodes grey pictures into an H.264 file through the `ffmpeg` command (Debian's `ffmpeg`
/// package): the calibration clip, and the tests' simulated camera videos.
public final class RawVideoEncoder {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    let width: Int
    let height: Int
    let path: String
    private let process = Process()
    private let input = Pipe()
    private let errors = Pipe()

    /// Starts ffmpeg writing `path` at `rate` frames a second (a fraction: 240000/1001). `keyframes`
    /// sets the distance between keyframes (nil: ffmpeg's choice).
    public init(path: String, width: Int, height: Int, rate: (numerator: Int, denominator: Int), quality: Int = 18,
        keyframes: Int? = nil) throws
    {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw Failure(description: "a picture of \(width)x\(height) cannot be encoded: both sides must be even")
        }
        (self.width, self.height, self.path) = (width, height, path)
        // A write to an ffmpeg that has quit must fail, not kill this process.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "gray",
                "-s", "\(width)x\(height)", "-r", "\(rate.numerator)/\(rate.denominator)", "-i", "-",
                "-c:v", "libx264", "-preset", "veryfast", "-crf", "\(quality)", "-bf", "0", "-pix_fmt", "yuv420p",
            ] + (keyframes.map { ["-g", "\($0)"] } ?? []) + [path]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot run ffmpeg (\(error)); install it: apt install ffmpeg")
        }
    }

    /// Adds one picture, `width` × `height` bytes of luma, row by row.
    public func write(_ pixels: [UInt8]) throws {
        precondition(pixels.count == width * height)
        do {
            try input.fileHandleForWriting.write(contentsOf: pixels)
        } catch {
            throw Failure(description: "ffmpeg stopped taking pictures for \(path): \(reason())")
        }
    }

    /// Ends the file and waits for ffmpeg.
    public func finish() throws {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let status = process.terminationStatus
            throw Failure(
                description: status == 127
                    ? "the ffmpeg command is not installed: apt install ffmpeg"
                    : "ffmpeg could not write \(path) (exit \(status)): \(reason())")
        }
    }

    private func reason() -> String {
        let text = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        return text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last.map(String.init) ?? "no reason given"
    }
}
