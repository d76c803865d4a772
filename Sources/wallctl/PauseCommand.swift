import ArgumentParser
import LockstepTime
import WallControl
import WallProtocol

/// `wallctl pause`: every node pauses on the same frame.
struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause every node at one master-clock time, so they all hold the same frame.",
        discussion: "With a timeline (wallctl play), the pause is a timeline edit the nodes keep.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            if try await control.hasTimeline() {
                return try await control.carryOut("pause", lead: edit.leadTime) { _, _ in .pause }
            }
            let starter = WallStart(wall: wall)
            let (now, slowest) = try await starter.masterNow()
            let margin = MediaTime.maximum(wall.config.startMargin, slowest * 3 + WallStart.nodeLead + WallStart.safety)
            let hostTime = (now + margin).convertScale(MediaTime.nanosecondTimescale)
            _ = try await wall.everyNode { client throws(ControlError) in
                try await client.command(ControlPath.pause, PauseRequest(hostTime: hostTime))
            }
            try await starter.waitUntil(hostTime: hostTime, after: MediaTime(value: 100, timescale: 1000))
            let positions = try await wall.everyNode { client throws(ControlError) in
                try await client.status().status.player.position
            }
            Output.line("paused at host time \(hostTime):")
            for (id, position) in positions.sorted(by: { $0.key < $1.key }) { Output.line("  \(id): \(position)") }
        }
    }
}
