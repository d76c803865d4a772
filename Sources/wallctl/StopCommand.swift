import ArgumentParser
import WallControl
import WallProtocol

/// `wallctl stop`: every node stops and unloads.
struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop every node and unload its media.")

    @OptionGroup var options: WallOptions

    private struct Empty: Encodable {}

    func run() async throws {
        try await options.withWall { wall in
            _ = try await wall.everyNode { client throws(ControlError) in
                try await client.command(ControlPath.stop, Empty())
            }
            Output.line("stopped: \(wall.clients.map(\.id).joined(separator: ", "))")
        }
    }
}
