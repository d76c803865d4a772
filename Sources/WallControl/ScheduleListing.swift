import Foundation
import WallTimeline

/// How `wallctl` says what a schedule plays when.
public enum ScheduleListing {
    /// "Mon 2026-11-30 09:00 (UTC+01:00; 2026-11-30 08:00 UTC)  plays museum".
    public static func line(_ change: ScheduleChange) -> String {
        let weekday = change.localDate.weekday.rawValue.capitalized
        let seconds = change.instant / 1_000_000_000
        let utc = CivilClock(identifier: "UTC")!.local(seconds)
        let what: String
        switch change.show {
        case .playlist: what = "plays \(change.playlist ?? "?")"
        case .still(let image): what = "shows the still \(image)"
        case .stopped: what = "stopped (each screen's still)"
        default: what = "\(change.show)"
        }
        return "\(weekday) \(change.localDate) \(change.localTime) (\(change.utcOffset); \(utc.date) \(utc.time) UTC)  "
            + what
    }
}
