import ArgumentParser
import LockstepTime
import WallControl
import WallProtocol

/// `wallctl start`: the wall starts in lockstep.
struct StartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Load and preroll every node, then start them all at one master-clock time.",
        discussion: """
            Every node must have its clock locked to the master and its first frame prerolled; those \
            that do not within --timeout are named. The host time is the master's time now plus a \
            margin derived from the measured control round trips and clock error bounds (never less \
            than the config's start-margin). Exits 0 when every node confirmed the start and is playing.
            """)

    @OptionGroup var options: WallOptions

    @Option(help: "Item time to start at, in seconds.")
    var at: Double = 0

    @Option(help: "Playback rate.")
    var rate: Float = 1

    func validate() throws {
        guard at.isFinite, at >= 0 else { throw ValidationError("--at must be zero or more seconds, got \(at)") }
        guard rate.isFinite, rate != 0 else { throw ValidationError("--rate must be a non-zero number, got \(rate)") }
    }

    func run() async throws {
        try await options.withWall { wall in
            let starter = WallStart(wall: wall)
            let plan = try await starter.run(
                itemTime: MediaTime(seconds: at, preferredTimescale: 1_000_000), rate: rate)
            Output.line(
                "start: \(wall.clients.count) nodes prerolled in \(plan.prerolledIn.milliseconds); host time \(plan.hostTime) "
                    + "(margin \(plan.margin.milliseconds): round trip \(plan.slowestRoundTrip.milliseconds), "
                    + "clock error bound \(plan.largestErrorBound.milliseconds), "
                    + "display latency \(plan.largestDisplayLatency.milliseconds))")
            try await confirmPlaying(wall, starter, hostTime: plan.hostTime)
        }
    }
}

/// After a start: every node must be playing shortly after the host time.
func confirmPlaying(_ wall: Wall, _ starter: WallStart, hostTime: MediaTime) async throws {
    try await starter.waitUntil(hostTime: hostTime, after: MediaTime(value: 200, timescale: 1000))
    let statuses = try await wall.everyNode { client throws(ControlError) in try await client.status().status }
    let stalled = statuses.filter { $0.value.player.timeControlStatus != "playing" }
    guard stalled.isEmpty else {
        throw ControlError.notReady(
            nodes: stalled.mapValues { "\($0.player.timeControlStatus)" + ($0.player.error.map { ": \($0)" } ?? "") })
    }
    Output.line("playing: \(statuses.keys.sorted().joined(separator: ", "))")
}
