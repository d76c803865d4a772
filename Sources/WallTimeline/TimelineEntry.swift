import Foundation
import LockstepTime

/// One entry of a playlist: a stretch of one media file, played a number of times.
///
/// Its length is the timeline's (`outPoint - inPoint`), not the container's, so every node
/// changes entry at the same master time even when its own file is a few milliseconds longer or
/// its audio runs on past the video.
public struct TimelineEntry: Hashable, Sendable, Codable {
    /// How many times an entry plays before the next.
    public enum Repeat: Hashable, Sendable, Codable {
        case times(Int)
        case forever
    }

    /// The media file, for every node, or a template with `{id}` for pre-split tiles.
    public var media: String
    /// Where in the media the entry starts.
    public var inPoint: MediaTime
    /// Where it ends (exclusive): the next pass starts at `inPoint` exactly then.
    public var outPoint: MediaTime
    public var repeats: Repeat
    /// The file by what it holds, when the wall distributes it: every node plays its own copy of
    /// exactly this file, from its content store (`media` is then the name the operator knows it
    /// by). Nil for a file placed in the media roots by hand.
    public var content: ContentID?
    /// For a template with `{id}` (pre-split tiles): each node's own file, by node id. A node gets
    /// only its own.
    public var tileContent: [String: ContentID]?

    public init(
        media: String, inPoint: MediaTime = .zero, outPoint: MediaTime, repeats: Repeat = .times(1),
        content: ContentID? = nil
    ) {
        self.content = content
        self.media = media
        self.inPoint = TimelineLimits.nanoseconds(inPoint)
        self.outPoint = TimelineLimits.nanoseconds(outPoint)
        self.repeats = repeats
    }

    /// This entry naming its file by content: `ids` by node id, one ID for every node or each
    /// node's own (tiles).
    public mutating func distribute(_ ids: [String: ContentID]) {
        guard !ids.isEmpty else { return }
        if Set(ids.values).count == 1 {
            content = ids.values.first
            tileContent = nil
        } else {
            content = nil
            tileContent = ids
        }
    }

    /// The content `node` plays for this entry, if the wall distributes it.
    public func content(forNode node: String) -> ContentID? { tileContent?[node] ?? content }

    /// The media `node` plays for this entry.
    public func media(forNode node: String) -> String {
        media.replacingOccurrences(of: "{id}", with: node)
    }

    /// One pass, in media time.
    public var duration: MediaTime { outPoint - inPoint }

    var passLength: Rational { Rational(outPoint) - Rational(inPoint) }

    /// Passes as a count, nil for forever.
    var passCount: Int? {
        if case .times(let count) = repeats { return count }
        return nil
    }
}
