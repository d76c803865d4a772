import Foundation
import LockstepLocks
import LockstepNet
import LockstepTime
import Logging
import SyncClock
import WallProtocol

/// The node's system clock as linuxptp disciplines it, as a clock source (`ClockSourceClient`):
/// ptp4l (and phc2sys with hardware timestamps) keep `CLOCK_REALTIME` on the venue's PTP
/// grandmaster; this reads ptp4l's state with pmc on its management socket every half second and
/// serves the real-time clock with the bounds ptp4l's measurements give (`LinuxPTPTracker`).
/// Nothing here adjusts any clock.
final class LinuxPTPSource: ClockSourceClient {
    let name: String
    private let config: PTPConfig
    private let udsAddress: String
    /// pmc's own socket, where ptp4l answers: one per node process.
    private let clientAddress: String
    private let tracker: Mutex<LinuxPTPTracker>
    private let logger: Logger

    /// How long pmc may take to answer before it is stopped.
    static let answerLimit = Duration.seconds(2)

    init(config: PTPConfig, node: String, logger: Logger) {
        self.config = config
        udsAddress = config.udsAddress(forNode: node)
        name = "ptp4l at \(udsAddress)"
        // Under the runtime folder systemd gives the service, else /tmp; short, for sun_path.
        let folder = ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        clientAddress = "\(folder)/lockstep-pmc.\(getpid())"
        let local = LocalClock.process.nowNanoseconds()
        tracker = Mutex(LinuxPTPTracker(local: local))
        self.logger = logger
    }

    var status: ClockStatus { tracker.withLock { $0.status } }

    private var pollInterval: Int64 { tracker.withLock { $0.configuration.pollInterval.nanoseconds } ?? 500_000_000 }

    func run() async throws {
        defer { unlink(clientAddress) }
        var logged: (locked: Bool, problem: String?) = (false, nil)
        while !Task.isCancelled {
            let (state, failure) = await read()
            let clocks = Self.realtimeLessLocal()
            let (locked, problem) = tracker.withLock { tracker in
                let status = tracker.take(
                    state, failure: failure, realtimeLessLocal: clocks.difference, readError: clocks.error,
                    local: clocks.local)
                return (status.state == .locked, tracker.problem)
            }
            // Once per change: a lock, and each new reason not to follow PTP.
            if locked, !logged.locked {
                logger.notice("PTP locked", metadata: ["clock.source": "\(name)"])
            } else if let problem, problem != logged.problem {
                logger.warning("PTP not followed", metadata: ["clock.source": "\(name)", "clock.reason": "\(problem)"])
            }
            logged = (locked, problem)
            try await Task.sleep(for: .nanoseconds(pollInterval))
        }
    }

    /// One pmc reading: ptp4l's state, or why there is none.
    private func read() async -> (LinuxPTPState?, String?) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: config.pmc)
        process.arguments = [
            "-u", "-b", "0", "-d", "\(config.domain)", "-s", udsAddress, "-i", clientAddress,
            "GET CURRENT_DATA_SET", "GET PORT_DATA_SET", "GET TIME_STATUS_NP",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let finished = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in finished.continuation.finish() }
        do {
            try process.run()
        } catch {
            return (nil, "cannot run \(config.pmc): \(error.localizedDescription)")
        }
        let timer = Task {
            try await Task.sleep(for: Self.answerLimit)
            // SIGKILL: a child started from a concurrency thread may inherit a blocked SIGTERM.
            kill(process.processIdentifier, SIGKILL)
        }
        // Read before waiting: pmc's output never fills the pipe, but a reader that waits first could.
        let data = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
        for await _ in finished.stream {}
        timer.cancel()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationReason == .exit else {
            return (nil, "pmc gave no answer within \(Self.answerLimit) from ptp4l at \(udsAddress)")
        }
        let state = LinuxPTPState.parse(pmcOutput: text)
        guard !state.portStates.isEmpty || state.offsetFromMaster != nil else {
            return (nil, "no answer from ptp4l at \(udsAddress) (is it running, with this uds_address and domain?)")
        }
        return (state, nil)
    }

    /// The real-time clock less the process's local one, from the tightest of five readings.
    static func realtimeLessLocal() -> (difference: Int64, error: Int64, local: Int64) {
        let pair = ClockPair.read(tries: 5)
        let local = LocalClock.process.localNanoseconds(atMonotonic: pair.monotonic)
        return (pair.realtime - local, pair.halfSpan, local)
    }
}
