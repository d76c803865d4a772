import Foundation
import LockstepLocks
import LockstepTime
import Logging
import ShowControl
import WallProtocol
import WallTimeline

/// Carries out show-control commands as they arrive, one at a time, in order of arrival: each a
/// timeline edit sent to every node without waiting for the screens (the next button is not kept
/// waiting), each outcome a line. A queue of at most `depth` commands (`ShowQueue`): a sender
/// pressing faster than the wall takes edits loses the oldest presses, and is told; a cue still
/// waiting when the next cue arrives is overtaken, and dropped unsent.
public final class ShowRunner: Sendable {
    public let wall: Wall
    let lead: MediaTime
    let say: @Sendable (String) -> Void
    /// Where each command carried out or failed is recorded, if anywhere.
    let audit: AuditLog?
    private let waiting = Mutex(ShowQueue(depth: ShowRunner.depth))
    /// Wakes the runner when a command is queued.
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    public static let depth = 16

    public init(
        wall: Wall, lead: MediaTime = TimelineControl.minimumEditLead, audit: AuditLog? = nil,
        say: @escaping @Sendable (String) -> Void
    ) {
        self.wall = wall
        self.lead = lead
        self.audit = audit
        self.say = say
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues `request`, or says why not (a cue the config does not name): the input's handler.
    public func submit(_ request: ShowRequest) -> ShowControlError? {
        if case .cue(let name) = request.command, wall.config.cues[name] == nil {
            let known = wall.config.cues.keys.sorted().joined(separator: ", ")
            return .unknown("cue \(name): the config's cues are \(known.isEmpty ? "none" : known)")
        }
        if waiting.withLock({ $0.push(request) }) != nil {
            say("show control: more than \(Self.depth) commands waiting; the oldest was dropped")
        }
        wake.yield()
        return nil
    }

    /// Carries out what is queued until the task is cancelled.
    public func run() async {
        // The cues are resolved before the first press where the nodes answer: it would wait for
        // their round trips.
        let early = Task { try? await CueControl.prepare(wall) }
        defer { early.cancel() }
        // What the nodes hold in standby is asked for between presses, not at each.
        var watching = Task { await early.value?.watchStandby() }
        defer { watching.cancel() }
        var cues: CueControl?
        var realtime: Bool?
        var first = true
        for await _ in wakeups {
            while let (request, overtaken) = waiting.withLock({ $0.next() }) {
                guard !Task.isCancelled else { return }
                func note(version: UInt64? = nil, outcome: String, reason: String? = nil) {
                    audit?.record(
                        AuditRecord(
                            who: "show control", via: "\(request.via) \(request.sender)", action: "\(request.command)",
                            version: version, outcome: outcome, reason: reason))
                }
                for cue in overtaken {
                    say(
                        "show control: \(cue.command) from \(cue.sender) over \(cue.via): overtaken by "
                            + "\(request.command) before it was sent; dropped")
                }
                do {
                    if first { cues = await early.value }
                    first = false
                    if cues == nil {
                        let prepared = try await CueControl.prepare(wall)
                        cues = prepared
                        watching.cancel()
                        watching = Task { await prepared.watchStandby() }
                    }
                    var at: MediaTime?
                    if let tag = request.timeTagUnixNanoseconds {
                        if realtime == nil {
                            realtime = try await wall.waitForClocks().values.allSatisfy { $0.clock.realtime == true }
                        }
                        if realtime == true {
                            at = MediaTime(nanoseconds: tag)
                        } else {
                            say(
                                "show control: \(request.command): time tag ignored, the master does not serve real time"
                            )
                        }
                    }
                    let (timeline, held) = try await cues!.perform(
                        request.command, lead: lead, at: at, confirming: false)
                    note(version: timeline.version, outcome: "done")
                    let waited = LocalClock.monotonic.now() - request.arrival
                    say(
                        "show control: \(request.command) from \(request.sender) over \(request.via): version "
                            + "\(timeline.version), sent " + String(format: "%.1f ms", waited.seconds * 1000)
                            + " after it arrived"
                            + (held.map { String(format: ", held in standby (cut %.0f ms ahead)", $0.seconds * 1000) }
                                ?? ""))
                } catch {
                    say("show control: \(request.command) from \(request.sender) failed: \(error)")
                    note(outcome: "failed", reason: "\(error)")
                    // The nodes may have changed (a restart, new media): the cues are resolved again.
                    cues = nil
                    realtime = nil
                }
            }
        }
    }

    public func finish() { wake.finish() }
}

/// Show control where the config asks for it (`show-control:`): its inputs, and the runner that
/// carries out what they take, on the control daemon or on a node with `show-control: true`.
public final class ShowControlService: Sendable {
    /// Nil when the config has no `show-control:`.
    public let runner: ShowRunner?
    public let input: ShowInput?

    /// - Parameters:
    ///   - audit: where each command carried out or failed is recorded (the daemon's audit log).
    ///   - say: where each command's outcome goes (a line of the daemon's output, or the node's log).
    public init(
        wall config: WallConfig, logger: Logger = Logger(label: "lockstep.show"), audit: AuditLog? = nil,
        say: @escaping @Sendable (String) -> Void
    ) throws {
        guard let settings = config.showControl else {
            runner = nil
            input = nil
            return
        }
        let runner = ShowRunner(
            wall: try Wall(config: config, waitLimit: MediaTime(value: 10, timescale: 1), say: { _ in }), audit: audit,
            say: say)
        self.runner = runner
        input = ShowInput(settings: settings, logger: logger) { runner.submit($0) }
    }

    /// Binds every input, or throws a sentence naming the one that cannot listen.
    public func listen() async throws(ShowControlError) {
        try await input?.listen()
    }

    /// Listens and carries out what arrives until the task is cancelled; `ready` hears the ports.
    public func run(ready: @escaping @Sendable ([String: Int]) -> Void = { _ in }) async throws {
        guard let runner, let input else { return }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await runner.run() }
            group.addTask { try await input.run(ready: ready) }
            defer { group.cancelAll() }
            try await withTaskCancellationHandler {
                try await group.next()
            } onCancel: {
                runner.finish()
            }
        }
    }

    /// Closes the runner's connections to the nodes.
    public func shutdown() async throws {
        try await runner?.wall.shutdown()
    }
}
