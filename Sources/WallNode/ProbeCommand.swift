import ArgumentParser
import Foundation
import LockstepTime
import WallPlayer

extension WallNode {
    /// `wallnode probe FILE [--json]`: the asset as libavformat sees it.
    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a media file's duration, tracks and tags as libavformat reads them.")

        @Argument(help: "The media file to inspect, or an http(s) URL: a file or an HLS playlist.")
        var file: String

        @Flag(help: "Print one JSON object: duration in seconds, tracks, metadata.")
        var json = false

        func run() async throws {
            let asset = URLAsset(url: URLAsset.url(forLocation: file))
            do {
                let duration = try await asset.duration
                let tracks = try await asset.tracks
                let metadata = try await asset.metadata
                let format = try await asset.formatName
                if json {
                    try printJSON(format: format, duration: duration, tracks: tracks, metadata: metadata)
                } else {
                    printText(format: format, duration: duration, tracks: tracks, metadata: metadata)
                }
            } catch let error as PlayerError {
                throw CommandFailure(error.description)
            }
        }

        private func printJSON(format: String, duration: MediaTime, tracks: [AssetTrack], metadata: [MetadataItem])
            throws
        {
            let report = ProbeReport(
                file: file, format: format, durationNs: duration.nanoseconds,
                tracks: tracks.map(ProbeReport.Track.init),
                metadata: Dictionary(metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first }))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        }

        private func printText(format: String, duration: MediaTime, tracks: [AssetTrack], metadata: [MetadataItem]) {
            print("\(file): \(format), duration \(duration)")
            for track in tracks {
                var line = "  track \(track.trackID): \(track.mediaType.rawValue) \(track.codec)"
                if let size = track.naturalSize { line += " \(size)" }
                if track.preferredRotation != 0, let shown = track.presentationSize {
                    line += " turned \(track.preferredRotation)° clockwise (shown \(shown))"
                }
                if track.nominalFrameRate > 0 { line += " @ \(track.nominalFrameRate) fps" }
                if let format = track.pixelFormat { line += " \(format) \(track.bitDepth)-bit" }
                switch track.fieldOrder {
                case .topFieldFirst: line += " interlaced (top field first)"
                case .bottomFieldFirst: line += " interlaced (bottom field first)"
                case .progressive: line += " progressive"
                case .unknown: break
                }
                if track.sampleRate > 0 { line += " \(track.sampleRate) Hz \(track.channelCount) ch" }
                if let language = track.languageCode { line += " [\(language)]" }
                print(line)
            }
            for item in metadata { print("  \(item.key): \(item.value)") }
        }
    }
}

/// The JSON of `wallnode probe --json`; times in integer nanoseconds, as everywhere
/// (`NanosecondsCoded`).
struct ProbeReport: Encodable {
    struct Track: Encodable {
        let id: Int32
        let mediaType: String
        let codec: String
        let width: Int?
        let height: Int?
        let rotationDegrees: Int?
        let fieldOrder: String?
        let pixelFormat: String?
        let bitDepth: Int?
        let frameRate: Double?
        let sampleRate: Int?
        let channels: Int?
        let startNs: Int64?
        let durationNs: Int64?
        let language: String?

        init(_ track: AssetTrack) {
            id = track.trackID
            mediaType = track.mediaType.rawValue
            codec = track.codec
            width = track.naturalSize?.width
            height = track.naturalSize?.height
            let isVideo = track.mediaType == .video
            rotationDegrees = isVideo ? track.preferredRotation : nil
            fieldOrder = isVideo ? track.fieldOrder.rawValue : nil
            pixelFormat = track.pixelFormat
            bitDepth = track.bitDepth > 0 ? track.bitDepth : nil
            frameRate = track.nominalFrameRate > 0 ? Double(track.nominalFrameRate) : nil
            sampleRate = track.sampleRate > 0 ? track.sampleRate : nil
            channels = track.channelCount > 0 ? track.channelCount : nil
            startNs = track.timeRange.start.nanoseconds
            durationNs = track.timeRange.duration.nanoseconds
            language = track.languageCode
        }
    }

    let file: String
    let format: String
    let durationNs: Int64?
    let tracks: [Track]
    let metadata: [String: String]
}

/// A failure with a message for the user; exits non-zero.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
