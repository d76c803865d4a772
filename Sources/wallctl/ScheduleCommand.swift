import ArgumentParser
import Foundation
import LockstepTime
import WallControl
import WallProtocol
import WallTimeline

/// `wallctl schedule`: what the config's schedule plays when, for the coming days.
struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Show what the config's schedule plays when, for the coming days.",
        discussion: """
            Lists every change of the config's schedule: on the place's clocks (its time-zone, daylight saving \
            time included) and in UTC, from --from (an instant such as 2026-12-24T12:00:00Z; default now, by this \
            machine's clock) for --days days. Nodes are not asked: every node computes the same changes from the \
            schedule and the master's UTC, which `wallctl play` sends them. Then a warning for each day part that \
            does not play as written in those days: dates that fall on none of its days, dates that are over, the \
            hour the clocks skip, or another day part on over it throughout.
            """)

    @Option(help: "The wall's config file (YAML).")
    var config: String

    @Option(help: "How many days to list (1 to 366).")
    var days = 7

    @Option(help: "The instant to list from, ISO 8601 in UTC (default: now).")
    var from: String?

    func validate() throws {
        guard (1...366).contains(days) else { throw ValidationError("--days must be 1 to 366, got \(days)") }
    }

    func run() throws {
        let wall = try loadConfig(config)
        guard let config = wall.schedule else {
            throw ControlError.config("\(self.config) has no schedule: section")
        }
        let schedule = config.calendar
        let start: Date
        if let from {
            guard let parsed = ISO8601DateFormatter().date(from: from) else {
                throw ValidationError("--from must be an instant such as 2026-12-24T12:00:00Z, got \"\(from)\"")
            }
            start = parsed
        } else {
            start = Date()
        }
        let now = MediaTime(nanoseconds: Int64(start.timeIntervalSince1970) * 1_000_000_000)
        Output.line(
            "\(wall.name): schedule on \(config.timeZone), \(days) days from \(ISO8601DateFormatter().string(from: start))"
        )
        let changes = schedule.changes(from: now, days: days)
        if changes.isEmpty {
            Output.line("  no day part within a year either way: the screens show \(schedule.outside)")
        }
        for (index, change) in changes.enumerated() {
            Output.line(
                (index == 0 && change.instant <= now.nanoseconds! ? "  since " : "  ") + ScheduleListing.line(change))
        }
        for warning in schedule.warnings(from: now, days: days) { Output.line("warning: \(warning)") }
    }
}
