/// A range of time given by a start and a duration, with the semantics of `CMTimeRange`.
///
/// A range contains its start and excludes its end: `[start, start + duration)`.
public struct MediaTimeRange: Sendable, Hashable, Codable, CustomStringConvertible {
    public let start: MediaTime
    public let duration: MediaTime

    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    /// The range from `start` up to `end` (`CMTimeRangeFromTimeToTime`).
    public init(start: MediaTime, end: MediaTime) {
        self.init(start: start, duration: end - start)
    }

    public static let zero = MediaTimeRange(start: .zero, duration: .zero)
    public static let invalid = MediaTimeRange(start: .invalid, duration: .invalid)

    /// Valid when both times are valid and the duration is not negative (`CMTIMERANGE_IS_VALID`).
    public var isValid: Bool {
        start.isValid && duration.isValid && !duration.isNegativeInfinity && duration >= .zero
    }

    public var isEmpty: Bool { isValid && duration == .zero }

    /// The first time after the range (`CMTimeRangeGetEnd`).
    public var end: MediaTime { start + duration }

    /// Whether `time` lies in `[start, end)`.
    public func contains(_ time: MediaTime) -> Bool {
        isValid && time.isValid && time >= start && time < end
    }

    /// Whether `other` lies wholly within this range.
    public func contains(_ other: MediaTimeRange) -> Bool {
        isValid && other.isValid && other.start >= start && other.end <= end
    }

    /// The overlap of two ranges; an empty range when they do not meet.
    public func intersection(_ other: MediaTimeRange) -> MediaTimeRange {
        guard isValid, other.isValid else { return .invalid }
        let lower = MediaTime.maximum(start, other.start)
        let upper = MediaTime.minimum(end, other.end)
        return upper > lower ? MediaTimeRange(start: lower, end: upper) : MediaTimeRange(start: lower, duration: .zero)
    }

    /// The smallest range covering both.
    public func union(_ other: MediaTimeRange) -> MediaTimeRange {
        guard isValid, other.isValid else { return .invalid }
        return MediaTimeRange(start: .minimum(start, other.start), end: .maximum(end, other.end))
    }

    /// `time` clamped into the range: the start if before it, the end if after (`CMTimeClampToRange`).
    public func clamp(_ time: MediaTime) -> MediaTime {
        guard isValid, time.isValid else { return .invalid }
        return .minimum(.maximum(time, start), end)
    }

    public var description: String { "[\(start), \(end))" }
}
