import ArgumentParser
import LockstepCLI
import LockstepNet
import Logging
import SyncClock

/// `wallctl clock serve`: a standalone master clock server.
struct ClockServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve this machine's clock as the wall's master clock.",
        discussion: """
            Answers Lockstep clients and stock GStreamer clients (GstNetClientClock) on the same port. \
            Runs until SIGINT or SIGTERM, then prints what it answered.
            """
    )

    @Option(
        name: .customLong("listen"),
        help: ArgumentHelp(
            "An address to listen on, ADDRESS:PORT or [IPV6]:PORT; repeat for several. Default: 0.0.0.0:5637 and [::]:5637.",
            valueName: "address:port"),
        transform: { try Endpoint(parsing: $0) })
    var listen: [Endpoint] = []

    @Flag(
        name: .customLong("realtime"),
        help:
            "Serve CLOCK_REALTIME instead of the process clock (CLOCK_MONOTONIC), so masters kept in step by NTP or PTP can stand in for one another."
    )
    var realtime = false

    @OptionGroup(title: "Test options")
    var simulatedClock: SimulatedClockOptions

    func run() async throws {
        let clock = try simulatedClock.apply()
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var configuration = SyncClockServer.Configuration(timescale: realtime ? .realtime : .localClock)
        if !listen.isEmpty { configuration.listen = listen }
        let server = SyncClockServer(configuration: configuration, clock: clock)
        let addresses = try server.start()
        let served = configuration.timescale == .realtime ? "CLOCK_REALTIME" : "the \(clock) clock"
        Output.line(
            "wallctl: serving \(served) on \(addresses.map(\.description).joined(separator: ", ")) "
                + "as \(server.masterIdentity)")
        _ = await Termination.wait(seconds: nil)
        server.stop()
        Output.line("wallctl: stopped; \(server.statistics)")
    }
}
