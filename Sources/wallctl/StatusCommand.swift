import ArgumentParser
import Foundation
import LockstepTime
import WallControl
import WallProtocol

/// `wallctl status`: a table of the nodes.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show every node's clock and player state as a table.")

    @OptionGroup var options: WallOptions

    @Flag(help: "Print the nodes' status as JSON instead.")
    var json = false

    @Flag(
        help: ArgumentHelp(
            "First wait (up to --timeout) until every node carries out the wall's newest timeline version, in step: "
                + "after a restart or a power cut, the wall is back when this returns 0."))
    var wait = false

    func run() async throws {
        let results = try await options.withWall { wall in
            if wait {
                let timelines = try await wall.waitFor("every node answering") { client throws(ControlError) in
                    (try await client.timeline(), nil)
                }
                guard let newest = timelines.values.compactMap({ $0 }).map(\.version).max() else {
                    throw ControlError.timeline("no node holds a timeline of wall \"\(wall.config.name)\"")
                }
                _ = try await TimelineControl(wall: wall).waitForScreens(on: newest)
            }
            return await wall.eachNode { client throws(ControlError) in try await client.status().status }
        }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let statuses = results.compactMap { try? $0.1.get() }
            Output.line(String(decoding: try encoder.encode(statuses), as: UTF8.self))
        } else {
            Output.line(table(results))
        }
        let unreachable = results.filter { if case .failure = $0.1 { return true } else { return false } }
        if !unreachable.isEmpty { throw ExitCode(1) }
    }

    /// "v3 playing e1 p0 in step", or what keeps the node off its timeline.
    private func timeline(_ report: TimelineReport?) -> String {
        guard let report else { return "-" }
        let step = report.inStep.map { $0 ? "in step" : "off" } ?? "judging"
        let rejoins = report.rejoins > 0 ? ", \(report.rejoins) rejoins" : ""
        return "v\(report.version) \(report.state) e\(report.entry) p\(report.pass) \(step)\(rejoins)"
            + (report.problem.map { ": \($0)" } ?? "")
    }

    /// The source a node follows, with its distance from the master when it is a relay; in
    /// holdover it follows none, and the one it followed last is named as such.
    private func source(_ clock: ClockReport) -> String {
        if clock.state == .holdover { return "none (last \(clock.server))" }
        let stratum = clock.stratum.flatMap { $0 > 0 ? " (relay, stratum \($0))" : nil } ?? ""
        return clock.server + stratum + (clock.relaying.map { ", relays on \($0)" } ?? "")
    }

    private func table(_ results: [(String, Result<NodeStatus, ControlError>)]) -> String {
        let header = [
            "node", "clock", "source", "error bound", "offset", "player", "position", "frames", "late", "dropped",
            "render thread", "timeline",
        ]
        var rows = [header]
        for (id, result) in results {
            switch result {
            case .success(let status):
                let clock = status.clock
                let player = status.player
                rows.append([
                    id, clock.state.rawValue, source(clock), clock.errorBound?.milliseconds ?? "-",
                    clock.offset.map { String(format: "%.6f s", $0.seconds) } ?? "-",
                    player.error == nil ? player.timeControlStatus : "failed",
                    String(format: "%.3f s", player.position.seconds),
                    "\(player.framesPresented)", "\(player.framesLate)", "\(player.framesDropped)", player.renderThread,
                    timeline(status.timeline),
                ])
            case .failure(let error):
                rows.append([id, error.description])
            }
        }
        // A failed node's row ends in one sentence, which would otherwise widen the clock column.
        let widths = header.indices.map { column in
            rows.map { row in
                column < row.count && (row.count == header.count || column < row.count - 1) ? row[column].count : 0
            }
            .max() ?? 0
        }
        return rows.map { row in
            row.enumerated().map { column, text in
                column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
