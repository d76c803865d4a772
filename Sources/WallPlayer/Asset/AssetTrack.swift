import Foundation
import LockstepTime

/// The kind of data a track carries (`AVMediaType`).
public enum MediaType: String, Sendable, Hashable, Codable {
    case video, audio, subtitle, data, attachment, unknown
}

/// A size in pixels.
public struct PixelSize: Sendable, Hashable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
}

/// One track of an asset as the container describes it (`AVAssetTrack`).
public struct AssetTrack: Sendable, Hashable {
    /// The container's identifier of the track (`trackID`).
    public let trackID: Int32
    public let mediaType: MediaType
    /// The codec's short name as libavcodec knows it: "h264", "aac", "hevc", ...
    public let codec: String
    /// Video only: the stored picture size, with non-square pixels corrected.
    public let naturalSize: PixelSize?
    /// Video only: degrees clockwise the stored picture is turned to be shown upright (0, 90, 180
    /// or 270), from the container's display matrix: a phone video shot upright is stored
    /// sideways with 90 here (`preferredTransform`'s rotation). Players show it turned.
    public let preferredRotation: Int
    /// Video only: frames per second as the container states it; 0 when unknown.
    public let nominalFrameRate: Float
    /// Video only: whether the picture is progressive or interlaced (and which field comes first).
    /// Players deinterlace interlaced video.
    public let fieldOrder: FieldOrder
    /// Video only: the decoded pixel format as libavutil names it ("yuv420p", "yuv420p10le", ...).
    public let pixelFormat: String?
    /// Video only: bits per sample of the first component (8, 10, 12, ...); 0 when unknown.
    public let bitDepth: Int
    /// The time the track covers in the asset's timeline.
    public let timeRange: MediaTimeRange
    /// Audio only: samples per second; 0 otherwise.
    public let sampleRate: Int
    /// Audio only: channel count; 0 otherwise.
    public let channelCount: Int
    /// The track's language (ISO 639), when tagged.
    public let languageCode: String?
    /// The track's title as the container names it ("Director's commentary"), when it has one.
    public let title: String?
    /// Whether the container marks the track as the one of its kind to play by default.
    public let isDefault: Bool
    /// An HLS subtitle rendition's own media playlist: the track is not in the main stream but
    /// beside it (`EXT-X-MEDIA`); nil for every other track.
    public internal(set) var renditionPlaylist: URL? = nil

    /// Video only: the size the picture is shown at, `naturalSize` turned by `preferredRotation`.
    public var presentationSize: PixelSize? {
        guard let naturalSize else { return nil }
        return preferredRotation % 180 == 0
            ? naturalSize : PixelSize(width: naturalSize.height, height: naturalSize.width)
    }

    /// Whether the track is audio or video that a decoder may play.
    public var isPlayable: Bool { (mediaType == .video || mediaType == .audio) && codec != "none" }
}

/// How a video's lines are scanned, in display order.
public enum FieldOrder: String, Sendable, Hashable, Codable {
    case progressive
    case topFieldFirst
    case bottomFieldFirst
    /// Not stated by the container or the codec (not a video, or a stream that does not say).
    case unknown

    /// Whether the video is interlaced.
    public var isInterlaced: Bool { self == .topFieldFirst || self == .bottomFieldFirst }
}

/// A piece of descriptive metadata (`AVMetadataItem`), from the container's tags.
public struct MetadataItem: Sendable, Hashable {
    /// The tag as the container stores it, lower-cased: "title", "artist", "encoder", ...
    public let key: String
    /// The common key, for tags with a meaning across formats (`AVMetadataKey` common keys).
    public let commonKey: CommonKey?
    public let value: String

    /// The keys of `AVAsset.commonMetadata` that containers tag.
    public enum CommonKey: String, Sendable, Hashable {
        case title, creator, albumName, creationDate, description, copyright, software, language, publisher
    }

    init(key: String, value: String) {
        self.key = key.lowercased()
        self.value = value
        self.commonKey = Self.commonKeys[self.key]
    }

    private static let commonKeys: [String: CommonKey] = [
        "title": .title, "artist": .creator, "author": .creator, "album": .albumName, "date": .creationDate,
        "creation_time": .creationDate, "comment": .description, "description": .description,
        "copyright": .copyright, "encoder": .software, "language": .language, "publisher": .publisher,
    ]
}
