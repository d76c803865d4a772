import LockstepTime

/// Why a timeline or an edit cannot be what it asks; each case reads as a sentence.
public enum TimelineError: Error, Hashable, CustomStringConvertible {
    case emptyPlaylist
    case invalidEntry(index: Int, reason: String)
    case invalidRate(PlaybackRate)
    case reverseRate(PlaybackRate)
    case notNumeric(field: String)
    case noSuchEntry(index: Int, count: Int)
    case itemTimeOutsideEntry(index: Int, itemTime: MediaTime, entry: TimelineEntry)
    case outOfBounds(field: String, MediaTime)
    case invalidShow(String)
    case invalidName(field: String, reason: String)
    case tooMany(what: String, count: Int, limit: Int)
    case otherWall(expected: String, got: String)
    case notNewer(version: UInt64, current: UInt64)
    case versionJump(version: UInt64, current: UInt64, allowed: UInt64)
    case otherEpoch(UInt64, master: UInt64)
    case noMasterClock
    case versionOutOfBounds(UInt64)
    case versionsExhausted(UInt64)
    case playlistEnded
    case noSegments
    case segmentsOutOfOrder(at: MediaTime)
    case invalidSchedule(String)
    case scheduleNeedsRealTime

    public var description: String {
        switch self {
        case .emptyPlaylist:
            return "the playlist has no entries"
        case .invalidEntry(let index, let reason):
            return "playlist entry \(index): \(reason)"
        case .invalidRate(let rate):
            return "rate \(rate) is not one a wall plays at (1/16 to 16 in magnitude, not 0: to stop, pause)"
        case .reverseRate(let rate):
            return "rate \(rate) plays backwards: a wall's timeline runs its playlist forward only, at 1/16 to 16"
        case .notNumeric(let field):
            return "\(field) must be a number of seconds"
        case .noSuchEntry(let index, let count):
            return "there is no entry \(index): the playlist has \(count) (0 to \(count - 1))"
        case .itemTimeOutsideEntry(let index, let itemTime, let entry):
            return
                "item time \(itemTime.seconds) s is not within entry \(index), which plays \(entry.inPoint.seconds) s "
                + "to \(entry.outPoint.seconds) s of its media"
        case .outOfBounds(let field, let time):
            return
                "\(field) \(time.seconds) s is outside the host times a wall uses (±\(TimelineLimits.largestHostTime) ns)"
        case .invalidShow(let reason):
            return reason
        case .invalidName(let field, let reason):
            return "\(field) must be \(reason)"
        case .tooMany(let what, let count, let limit):
            return "\(count) \(what): at most \(limit)"
        case .versionJump(let version, let current, let allowed):
            return
                "timeline version \(version) jumps \(version - current) ahead of the version \(current) in force; this "
                + "node takes \(allowed) more now (\(TimelineAdmission.burst) at once, "
                + "\(Int(TimelineAdmission.versionsPerSecond)) a second), so that no run of edits walks the wall's "
                + "versions to their end"
        case .otherEpoch(let epoch, let master):
            return
                "the timeline is anchored on master epoch \(epoch), but this node's master clock runs epoch \(master): "
                + "it was made for another master, or before the master started over"
        case .noMasterClock:
            return
                "this node has no usable master clock yet, so it cannot check the timeline's epoch: try again once it locks"
        case .versionOutOfBounds(let version):
            return "timeline version \(version) is outside 1 to \(TimelineLimits.largestVersion)"
        case .versionsExhausted(let version):
            return
                "the wall's timeline is at version \(version), the last there is: start a new wall name, or delete "
                + "the nodes' state files"
        case .otherWall(let expected, let got):
            return "the timeline is for wall \"\(got)\", this is wall \"\(expected)\""
        case .notNewer(let version, let current):
            return "timeline version \(version) is not newer than the version \(current) in force"
        case .playlistEnded:
            return "the playlist has ended and does not loop: there is no next entry"
        case .noSegments:
            return "the timeline has no segments"
        case .invalidSchedule(let reason):
            return "the schedule is not one a wall can play: \(reason)"
        case .scheduleNeedsRealTime:
            return
                "a schedule needs a master serving disciplined real time (`wallctl clock serve --realtime` on a machine "
                + "synchronized by NTP or PTP): on this master's time its dates and hours mean nothing"
        case .segmentsOutOfOrder(let from):
            return "the timeline's segment from \(from.seconds) s is not after the one before it"
        }
    }
}
