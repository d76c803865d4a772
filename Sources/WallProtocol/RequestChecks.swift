import LockstepTime

/// A control request asking for something a node must not do: the field and why.
public struct RequestRejection: Error, Hashable, CustomStringConvertible {
    /// The request field (or query parameter) at fault, as the request spells it.
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field): \(reason)" }
}

/// The bounds every control request is held to before it acts: plain rules, the same on every node,
/// so a request either does what it says or is refused naming the field.
public enum RequestChecks {
    /// Rates beyond these magnitudes are no playback a wall shows (and GStreamer cannot decode in
    /// time); rate 0 is a pause, which has its own command.
    public static let rateMagnitudes: ClosedRange<Float> = 1.0 / 16.0...16
    /// The most frame records one `GET /frames` returns.
    public static let maximumFramesLimit: UInt64 = 4096
    /// The largest snapshot any node makes unless its screen is larger: 4K UHD.
    public static let snapshotCap = (width: 3840, height: 2160)

    /// A rate a start may ask for: finite, non-zero, within `rateMagnitudes`, and one the item can
    /// play (`canPlay`, the player's canPlay* rules).
    public static func rate(_ rate: Float, field: String = "rate", canPlay: (Float) -> Bool)
        throws(RequestRejection)
    {
        guard rate.isFinite else {
            throw RequestRejection(field: field, reason: "must be a finite number, got \(rate)")
        }
        guard rate != 0 else {
            throw RequestRejection(field: field, reason: "must not be 0: to stop the picture, pause")
        }
        guard rateMagnitudes.contains(abs(rate)) else {
            throw RequestRejection(
                field: field,
                reason: "must lie between \(rateMagnitudes.lowerBound) and \(rateMagnitudes.upperBound) in magnitude, "
                    + "got \(rate)")
        }
        guard canPlay(rate) else {
            throw RequestRejection(field: field, reason: "the loaded item cannot play at rate \(rate)")
        }
    }

    /// An item time: numeric, not negative, and before the item's end when its duration is known.
    public static func itemTime(_ time: MediaTime, field: String = "itemTimeNs", duration: MediaTime?)
        throws(RequestRejection)
    {
        try numeric(time, field: field)
        guard time >= .zero else {
            throw RequestRejection(field: field, reason: "must not be negative, got \(time.seconds) s")
        }
        if let duration, duration.isNumeric, time >= duration {
            throw RequestRejection(
                field: field,
                reason: "\(time.seconds) s is not within the item, which lasts \(duration.seconds) s")
        }
    }

    /// A master-clock host time for something scheduled: numeric, at least `minimumLead` after
    /// `now`, and no further ahead than `horizon`.
    public static func hostTime(
        _ time: MediaTime, field: String = "hostTimeNs", now: MediaTime, minimumLead: MediaTime, horizon: MediaTime
    ) throws(RequestRejection) {
        try numeric(time, field: field)
        guard time >= now + minimumLead else {
            throw RequestRejection(
                field: field,
                reason: "\(time.seconds) s has passed on this node's master clock, or is too close to act on "
                    + "(now \(now.seconds) s; at least \(minimumLead.seconds) s ahead is needed)")
        }
        guard time <= now + horizon else {
            throw RequestRejection(
                field: field,
                reason: "\(time.seconds) s is \((time - now).seconds) s ahead of the master clock's now; "
                    + "the wall's start-horizon allows \(horizon.seconds) s")
        }
    }

    /// How long a test card may stay up: long enough to walk along a wall, short enough that a
    /// forgotten one ends by itself.
    public static let identifyDurations = MediaTime(value: 1, timescale: 1)...MediaTime(value: 600, timescale: 1)

    /// The duration of `POST /identify`.
    public static func identifyDuration(_ duration: MediaTime, field: String = "durationNs") throws(RequestRejection) {
        try numeric(duration, field: field)
        guard identifyDurations.contains(duration) else {
            throw RequestRejection(
                field: field,
                reason: "must be 1 s to 600 s, got \(duration.seconds) s")
        }
    }

    /// A `limit` query parameter of `GET /frames`.
    public static func framesLimit(_ limit: UInt64, field: String = "limit") throws(RequestRejection) {
        try self.limit(limit, atMost: maximumFramesLimit, field: field)
    }

    /// A `limit` query parameter: how many records an answer may hold, 1 to `most`.
    public static func limit(_ limit: UInt64, atMost most: UInt64, field: String = "limit") throws(RequestRejection) {
        guard (1...most).contains(limit) else {
            throw RequestRejection(field: field, reason: "must be 1 to \(most), got \(limit)")
        }
    }

    /// A span of time asked for, `from` before `to` (milliseconds since 1970, as `GET /plays` takes
    /// them).
    public static func span(fromUnixMs from: Int64, toUnixMs to: Int64) throws(RequestRejection) {
        guard from < to else {
            throw RequestRejection(field: "fromUnixMs", reason: "must come before toUnixMs (\(to)), got \(from)")
        }
    }

    /// A snapshot size: both dimensions or neither, each at least 1 and at most the larger of the
    /// screen (`output`) and `snapshotCap`.
    public static func snapshotSize(width: UInt64?, height: UInt64?, output: CanvasSize?) throws(RequestRejection)
        -> (width: Int, height: Int)?
    {
        switch (width, height) {
        case (nil, nil):
            return nil
        case (let width?, let height?):
            let maximumWidth = max(snapshotCap.width, output?.width ?? 0)
            let maximumHeight = max(snapshotCap.height, output?.height ?? 0)
            guard (1...UInt64(maximumWidth)).contains(width) else {
                throw RequestRejection(field: "width", reason: "must be 1 to \(maximumWidth), got \(width)")
            }
            guard (1...UInt64(maximumHeight)).contains(height) else {
                throw RequestRejection(field: "height", reason: "must be 1 to \(maximumHeight), got \(height)")
            }
            return (Int(width), Int(height))
        case (nil, _?):
            throw RequestRejection(field: "width", reason: "is required with height")
        case (_?, nil):
            throw RequestRejection(field: "height", reason: "is required with width")
        }
    }

    private static func numeric(_ time: MediaTime, field: String) throws(RequestRejection) {
        guard time.isNumeric else {
            throw RequestRejection(field: field, reason: "must be a whole number of nanoseconds, got \(time)")
        }
    }
}
