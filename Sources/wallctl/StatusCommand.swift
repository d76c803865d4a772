import ArgumentParser
import Foundation
import LockstepTime
import WallProtocol

/// `wallctl status`: a table of the nodes.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show every node's clock and player state as a table.")

    @OptionGroup var options: WallOptions

    @Flag(help: "Print the nodes' status as JSON instead.")
    var json = false

    func run() async throws {
        let wall = try options.wall()
        let results = await wall.eachNode { client throws(ControlError) in try await client.status().status }
            .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
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

    private func table(_ results: [(String, Result<NodeStatus, ControlError>)]) -> String {
        let header = [
            "node", "clock", "error bound", "offset", "player", "position", "frames", "late", "dropped",
            "render thread",
        ]
        var rows = [header]
        for (id, result) in results {
            switch result {
            case .success(let status):
                let clock = status.clock
                let player = status.player
                rows.append([
                    id, clock.state, clock.errorBound?.milliseconds ?? "-",
                    clock.offset.map { String(format: "%.6f s", $0.seconds) } ?? "-",
                    player.error == nil ? player.timeControlStatus : "failed",
                    String(format: "%.3f s", player.position.seconds),
                    "\(player.framesPresented)", "\(player.framesLate)", "\(player.framesDropped)", player.renderThread,
                ])
            case .failure(let error):
                rows.append([id, "unreachable: \(error)"])
            }
        }
        let widths = header.indices.map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
