import ArgumentParser
import LockstepTime
import WallControl
import WallProtocol

/// `wallctl resume`: start again from where the wall paused, in lockstep.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume a paused wall from where it stands, all nodes at one master-clock time.",
        discussion: "With a timeline (wallctl play), the resume is a timeline edit; --rate is then ignored (use wallctl rate).")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Option(help: "Playback rate.")
    var rate: Float = 1

    func run() async throws {
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            if try await control.hasTimeline() {
                return try await control.carryOut("resume", lead: edit.leadTime) { _, _ in .resume }
            }
            let positions = try await wall.everyNode { client throws(ControlError) in
                try await client.status().status.player.position
            }
            // After a synchronized pause every node stands at the same frame; the median guards
            // against one that did not.
            let sorted = positions.values.sorted()
            let position = sorted[sorted.count / 2]
            let starter = WallStart(wall: wall)
            let plan = try await starter.run(itemTime: position, rate: rate)
            Output.line("resume: from \(position) at host time \(plan.hostTime) (margin \(plan.margin.milliseconds))")
            try await confirmPlaying(wall, starter, hostTime: plan.hostTime)
        }
    }
}
