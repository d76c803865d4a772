import ArgumentParser
import Foundation
import LockstepCLI
import LockstepNet
import LockstepTime
import Logging
import SyncClock

/// `wallctl clock probe`: follows a clock server and prints every estimate.
struct ClockProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Follow a master clock server and print each estimate of its time.",
        discussion: """
            Prints one line per estimate and a summary at the end, or with --json one JSON object per \
            line: localNs (this process's clock), masterNs (the estimated master time at localNs), \
            errorBoundNs, roundTripNs, ratePPM, state and more. Exits non-zero if the clock never locked.
            """
    )

    @Argument(
        help: ArgumentHelp("The clock server, HOST:PORT or [IPV6]:PORT.", valueName: "host:port"),
        transform: { try Endpoint(parsing: $0) })
    var server: Endpoint

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Stop after this many seconds (default: run until SIGINT or SIGTERM).", valueName: "seconds")
    )
    var duration: Double?

    @Flag(help: "Speak GStreamer's 16-byte net time format, to probe a stock GstNetTimeProvider.")
    var gst = false

    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "A file holding the key shared with the server (raw bytes, or hex digits; at least 16 bytes): sign requests, and drop replies not signed with it.",
            valueName: "file"))
    var keyFile: String?

    @Flag(help: "Print one JSON object per line per estimate instead of text.")
    var json = false

    @Option(
        name: .customLong("sample-interval"), parsing: .unconditional,
        help: ArgumentHelp(
            "Also print the current mapping every this many milliseconds (\"kind\": \"sample\"), to measure the error between estimates.",
            valueName: "ms"))
    var sampleInterval: Double?

    @OptionGroup(title: "Logging")
    var logging: LoggingOptions

    @OptionGroup(title: "Test options")
    var simulatedClock: SimulatedClockOptions

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a positive number of seconds, got \(duration)")
        }
        if keyFile != nil, gst {
            throw ValidationError(
                "--key-file authenticates Lockstep's format; GStreamer's (--gst) has no room for a key")
        }
        if let sampleInterval, !(sampleInterval.isFinite && sampleInterval >= 1) {
            throw ValidationError("--sample-interval must be at least 1 millisecond, got \(sampleInterval)")
        }
    }

    func run() async throws {
        let clock = try simulatedClock.apply()
        let key = try keyFile.map { path throws(SyncClockError) in try ClockKey(contentsOfFile: path) }
        logging.bootstrap(defaultLevel: .notice, defaultFormat: .text)
        // The clock a node follows: the source's estimate through the one servo, as on a node.
        let client = ClockSources(
            sources: [server],
            configuration: SyncClockClient.Configuration(format: gst ? .gstreamer : .lockstep, key: key),
            clock: clock)
        let updates = client.statusUpdates(bufferingNewest: 100_000)
        let start = clock.nowNanoseconds()
        let json = json
        let sampleInterval = sampleInterval
        let everLocked = try await withThrowingTaskGroup(of: Bool?.self) { group in
            group.addTask {
                // The probe ends by cancelling the clock: that is no failure.
                do {
                    try await client.run()
                } catch is CancellationError {}
                return nil
            }
            group.addTask {
                var locked = false
                for await status in updates {
                    locked = locked || status.state == .locked
                    Output.line(json ? Self.json(status, start: start) : Self.text(status, start: start))
                }
                return locked
            }
            if let sampleInterval {
                group.addTask {
                    while true {
                        try? await Task.sleep(for: .nanoseconds(Int64(sampleInterval * 1e6)))
                        if Task.isCancelled { return nil }
                        let status = client.status.extrapolated(to: clock.nowNanoseconds())
                        Output.line(
                            json ? Self.json(status, start: start, kind: "sample") : Self.text(status, start: start))
                    }
                    return nil
                }
            }
            group.addTask {
                _ = await Termination.wait(seconds: duration)
                return nil
            }
            // The first task to finish is the timer or a signal (or `run` failing, which throws here).
            _ = try await group.next()
            group.cancelAll()
            var locked = false
            while let result = try await group.next() {
                if let result { locked = result }
            }
            return locked
        }
        if !json { Output.line(Self.summary(client.status)) }
        if !everLocked {
            throw ProbeFailure(message: "the clock never locked to \(server) (state: \(client.status.state))")
        }
    }

    /// An estimate as one JSON object.
    private static func json(_ status: ClockStatus, start: Int64, kind: String = "estimate") -> String {
        let record = ClockStatusRecord(status: status, start: start, kind: kind)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(record) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// An estimate as a line of text.
    private static func text(_ status: ClockStatus, start: Int64) -> String {
        let elapsed = Double((status.localTime.nanoseconds ?? start) - start) / 1e9
        return String(
            format: "%9.3f s  %-8@  offset %@  ±%@  rtt %@  rate %+.3f ppm", elapsed, status.state.rawValue,
            status.offset.description, microseconds(status.errorBound), microseconds(status.roundTrip.last),
            status.ratePPM)
    }

    private static func summary(_ status: ClockStatus) -> String {
        let counters = status.counters
        let trip = status.roundTrip
        return """
            state \(status.state), generation \(status.generation), \(status.master.map(\.description) ?? "GStreamer server")
            offset \(status.offset) ±\(microseconds(status.errorBound)), rate \(String(format: "%+.3f", status.ratePPM)) ppm
            round trip min \(microseconds(trip.minimum)) mean \(microseconds(trip.mean)) p99 \(microseconds(trip.p99)) over \(trip.count)
            requests \(counters.requestsSent), replies \(counters.repliesReceived), samples used \(counters.samplesUsed), \
            rejected \(counters.samplesRejected) (delay spikes \(counters.rejectedDelaySpikes), inconsistent \
            \(counters.rejectedInconsistent), invalid \(counters.rejectedInvalid), malformed \(counters.rejectedMalformed), \
            unmatched \(counters.unmatchedReplies), unauthenticated \(counters.unauthenticatedReplies), \
            new epoch held back \(counters.suspectEpochChanges)), lost \(counters.lostRequests), estimate restarts \
            \(counters.estimateRestarts), master changes \(counters.masterChanges)
            """
    }

    private static func microseconds(_ time: MediaTime) -> String {
        guard let nanoseconds = time.nanoseconds else { return time.description }
        return String(format: "%.1f µs", Double(nanoseconds) / 1e3)
    }
}

/// The probe ran but its clock never locked.
struct ProbeFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
