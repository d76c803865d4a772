import ArgumentParser
import Foundation
import WallControl
import WallProtocol

/// `wallctl report plays`: the wall's proof of play.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Reports from the wall's records.",
        subcommands: [PlaysCommand.self])

    /// `wallctl report plays --from 24h --to now [--csv]`.
    struct PlaysCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "plays",
            abstract: "What every screen presented in a span of time: its proof of play.",
            discussion: """
                Each node records what its screen presented (a clip's pass, a still), from when to when \
                in UTC, how it ended, and the frames its sink presented in it; kept in its state folder \
                across restarts. Every play that overlaps the span is listed, the ones still on a screen \
                too ("playing"). Bounds: an ISO 8601 instant (2026-11-29T08:00:00Z), now, or a time ago \
                (90s, 30m, 24h, 7d). Exit status 1 when a node did not answer (its plays are missing).
                """)

        @OptionGroup var options: WallOptions

        @Option(help: "Start of the span: ISO 8601, now, or a time ago (24h).")
        var from: String = "24h"

        @Option(help: "End of the span: ISO 8601, now, or a time ago.")
        var to: String = "now"

        @Flag(help: "CSV (RFC 4180, a header line) instead of a line per play.")
        var csv = false

        @Flag(help: "The report as JSON instead of a line per play.")
        var json = false

        @Option(help: "Write the report to this file instead of standard output.")
        var output: String?

        func validate() throws {
            guard !(csv && json) else { throw ValidationError("--csv and --json: one of them") }
            _ = try span()
        }

        /// The span asked, in milliseconds since 1970.
        func span(now: Int64 = AuditRecord.now()) throws -> (Int64, Int64) {
            switch PlayRecord.span(from: from, to: to, nowUnixMs: now, named: ("--from", "--to")) {
            case .success(let span): return span
            case .failure(let error): throw ValidationError(error.description)
            }
        }

        func run() async throws {
            let (start, end) = try span()
            let report = try await options.withWall { wall in
                await PlayReport.gather(wall, fromUnixMs: start, toUnixMs: end)
            }
            let text: String
            if csv {
                text = report.csv
            } else if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                text = String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
            } else {
                let header = "plays from \(PlayRecord.utc(start)) to \(PlayRecord.utc(end)): \(report.plays.count)"
                text = ([header] + report.lines).joined(separator: "\n") + "\n"
            }
            try Output.write(Data(text.utf8), to: output ?? "-")
            if let output { Output.note("report: \(report.plays.count) plays written to \(output)") }
            for gap in report.gaps { Output.note("report: \(gap)") }
            if !report.unreachable.isEmpty { throw ExitCode(1) }
        }
    }
}
