import ArgumentParser
import Foundation
import LockstepTime
import WallPlayer

extension WallNode {
    /// `wallnode thumbnails FILE --times 1,2.5,7 --out DIR`: images of a video at given times,
    /// made by `AssetImageGenerator` without a player.
    struct Thumbnails: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write PNG images of a video at given times (AVAssetImageGenerator, without a player).")

        @Argument(help: "The media file.")
        var file: String

        @Option(help: "Comma-separated item times in seconds, e.g. 1,2.5,7.")
        var times: String

        @Option(help: "The folder to write thumbnail-N.png into (made if missing).")
        var out: String

        @Flag(
            help:
                "The exact frame at each time, decoding from the keyframe before it; by default the keyframe at or before each time (fast)."
        )
        var exact = false

        @Option(name: .customLong("max-size"), help: "Scale down to fit WxH, keeping the aspect ratio (e.g. 320x180).")
        var maxSize: String?

        @Flag(help: "Keep the picture as stored, ignoring the video's rotation.")
        var storedOrientation = false

        func validate() throws {
            _ = try parsedTimes()
            _ = try parsedMaximumSize()
        }

        func run() async throws {
            let generator = AssetImageGenerator(asset: URLAsset(url: URL(fileURLWithPath: file)))
            if exact {
                generator.requestedTimeToleranceBefore = .zero
                generator.requestedTimeToleranceAfter = .zero
            }
            generator.maximumSize = try parsedMaximumSize()
            generator.appliesPreferredTrackTransform = !storedOrientation
            let folder = URL(fileURLWithPath: out)
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure("cannot make the folder \(out): \(error.localizedDescription)")
            }
            var failures = 0
            var index = 0
            for await result in generator.images(for: try parsedTimes()) {
                index += 1
                switch result {
                case .succeeded(let image):
                    let path = folder.appendingPathComponent("thumbnail-\(index).png")
                    do {
                        try image.frame.data.write(to: path)
                    } catch {
                        throw CommandFailure("cannot write \(path.path): \(error.localizedDescription)")
                    }
                    print(
                        "\(Self.seconds(image.requestedTime)) s: the frame at \(Self.seconds(image.actualTime)) s, "
                            + "\(image.frame.size), \(path.path)")
                case .failed(let time, let error):
                    failures += 1
                    print("\(Self.seconds(time)) s: no image: \(error)")
                case .cancelled(let time):
                    failures += 1
                    print("\(Self.seconds(time)) s: cancelled")
                }
            }
            if failures > 0 { throw CommandFailure("\(failures) of \(index) images could not be made") }
        }

        private func parsedTimes() throws -> [MediaTime] {
            let parts = times.split(separator: ",", omittingEmptySubsequences: false)
            return try parts.map { part in
                let text = part.trimmingCharacters(in: .whitespaces)
                guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                    throw ValidationError("--times takes seconds (zero or more) separated by commas; got \"\(text)\".")
                }
                return MediaTime(seconds: seconds, preferredTimescale: 1_000_000)
            }
        }

        private func parsedMaximumSize() throws -> PixelSize? {
            guard let maxSize else { return nil }
            let sides = maxSize.lowercased().split(separator: "x").map { Int($0) }
            guard sides.count == 2, let width = sides[0], let height = sides[1], width >= 0, height >= 0,
                width <= Player.maximumFrameSide, height <= Player.maximumFrameSide, width + height > 0
            else {
                throw ValidationError(
                    "--max-size takes WxH in pixels, each 0 (free) to \(Player.maximumFrameSide); got \"\(maxSize)\".")
            }
            return PixelSize(width: width, height: height)
        }

        private static func seconds(_ time: MediaTime) -> String { String(format: "%.3f", time.seconds) }
    }
}
