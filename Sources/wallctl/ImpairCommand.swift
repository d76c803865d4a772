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
            Clients send to --listen; datagrams go on to --forward and replies come back, each direction \
            impaired on its own with the same settings (netem semantics): every datagram is held for the \
            base delay (--delay; --reply-delay for replies) plus a jitter term from --distribution, \
            correlated with the previous one by --correlation; with --stall-chance the path stops for \
            --stall and everything arriving meanwhile waits; --loss drops datagrams, in runs of \
            --loss-burst on average. Runs until SIGINT or SIGTERM, then prints what it did, the holds it \
            chose, and how precisely held datagrams left.

            A congested path (loaded Wi-Fi, a busy switch): --delay 1 --jitter 1 --distribution pareto \
            --correlation 50 --stall-chance 0.1 --stall 20. Under a clock client polling at 10 Hz for a \
            minute it held each direction 1.8 ms at the median, 6.7 ms at p99 and 20 ms at most.
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

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Hold every datagram at least this many milliseconds (the base delay).", valueName: "ms"))
    var delay: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The base delay of replies, server to client (default: --delay).", valueName: "ms"))
    var replyDelay: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The jitter: ± this for uniform, the standard deviation for normal, the mean excess for pareto.",
            valueName: "ms"))
    var jitter: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The jitter of replies, server to client (default: --jitter): a path that queues one way.",
            valueName: "ms"))
    var replyJitter: Double?

    @Option(
        help: ArgumentHelp(
            "The jitter's shape: \(Impairment.Distribution.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "name"),
        transform: { name in
            guard let distribution = Impairment.Distribution(rawValue: name) else {
                throw ValidationError(
                    "unknown distribution '\(name)'; expected "
                        + Impairment.Distribution.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return distribution
        })
    var distribution: Impairment.Distribution = .uniform

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Carry this percentage of each jitter term into the next one.", valueName: "percent"))
    var correlation: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The chance, per datagram, that the path stalls for --stall.", valueName: "percent"))
    var stallChance: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("How long a stall lasts; datagrams arriving meanwhile wait for it.", valueName: "ms"))
    var stall: Double = 0

    @Option(parsing: .unconditional, help: ArgumentHelp("Drop this percentage of datagrams.", valueName: "percent"))
    var loss: Double = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Lose datagrams in runs this long on average (1: independently).", valueName: "datagrams"))
    var lossBurst: Double = 1

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

    @OptionGroup(title: "Logging")
    var logging: LoggingOptions

    var impairment: Impairment {
        Impairment(
            delay: Self.milliseconds(delay), replyDelay: replyDelay.map(Self.milliseconds),
            jitter: Self.milliseconds(jitter), replyJitter: replyJitter.map(Self.milliseconds),
            distribution: distribution, correlationPercent: correlation,
            stallPercent: stallChance, stall: Self.milliseconds(stall), lossPercent: loss, lossBurst: lossBurst,
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
        logging.bootstrap(defaultLevel: .info, defaultFormat: .text)
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
