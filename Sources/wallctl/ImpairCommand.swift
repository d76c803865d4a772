import ArgumentParser
import LockstepCLI
import LockstepNet
import LockstepTime
import Logging
import NetImpair

/// `wallctl impair`: a UDP proxy that impairs traffic, for testing the wall on a bad network.
struct ImpairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "impair",
        abstract: "Relay UDP between clients and a server, delaying, dropping, reordering and duplicating datagrams.",
        discussion: """
            Clients send to --listen; datagrams go on to --forward and replies come back, both directions \
            impaired alike (netem semantics: each datagram is held for DELAY ± JITTER, uniform). Runs \
            until SIGINT or SIGTERM, then prints what it did and how precisely held datagrams left.
            """
    )

    @Option(
        help: ArgumentHelp("The address clients send to, ADDRESS:PORT or [IPV6]:PORT.", valueName: "address:port"),
        transform: { try Endpoint(parsing: $0) })
    var listen: Endpoint

    @Option(
        help: ArgumentHelp("The server datagrams are relayed to, HOST:PORT or [IPV6]:PORT.", valueName: "host:port"),
        transform: { try Endpoint(parsing: $0) })
    var forward: Endpoint

    @Option(parsing: .unconditional, help: ArgumentHelp("Hold every datagram this many milliseconds.", valueName: "ms"))
    var delay: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Vary the hold by up to ± this many milliseconds, uniformly.", valueName: "ms"))
    var jitter: Double = 0

    @Option(parsing: .unconditional, help: ArgumentHelp("Drop this percentage of datagrams.", valueName: "percent"))
    var loss: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Send this percentage at once, overtaking held ones.", valueName: "percent"))
    var reorder: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Send a second copy of this percentage of datagrams.", valueName: "percent"))
    var duplicate: Double = 0

    @Option(help: ArgumentHelp("Seed of the random decisions, to repeat a run exactly.", valueName: "n"))
    var seed: UInt64 = 1

    var impairment: Impairment {
        Impairment(
            delay: Self.milliseconds(delay), jitter: Self.milliseconds(jitter), lossPercent: loss,
            reorderPercent: reorder, duplicatePercent: duplicate)
    }

    func validate() throws {
        do {
            try impairment.validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let proxy = ImpairmentProxy(listen: listen, forward: forward, impairment: impairment, seed: seed)
        let bound = try proxy.start()
        Output.line("wallctl: relaying \(bound) → \(forward) with \(impairment)")
        _ = await Termination.wait(seconds: nil)
        proxy.stop()
        Output.line("wallctl: stopped; \(proxy.statistics)")
    }

    private static func milliseconds(_ value: Double) -> MediaTime {
        MediaTime(seconds: value / 1e3, preferredTimescale: MediaTime.nanosecondTimescale)
    }
}
