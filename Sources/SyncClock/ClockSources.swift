import LockstepLocks
public import LockstepNet
public import LockstepTime
public import Logging

/// Follows the master's timeline through several clock sources in order of preference: the master,
/// then boundary clocks (nodes relaying it). One `SyncClockClient` per source; `ClockSourceSelector`
/// picks the one to follow and keeps one continuous mapping across changes, so a master that goes
/// silent is replaced by the next source without a step.
///
/// Sources other than Lockstep servers (`ClockSourceClient`: the system clock as linuxptp
/// disciplines it) can come first in that order; the selector treats them alike, so a node fails
/// over from PTP to the UDP master, and back, by slewing.
///
/// With a `ClockRelay`, every status is also served onwards (this process is then a boundary clock);
/// `ownRelay`, the identity of that server, keeps this process from following a source that follows
/// it.
public final class ClockSources: Sendable {
    /// The Lockstep clock servers among the sources, most preferred first.
    public let sources: [Endpoint]
    /// Every source's name, most preferred first: the other sources, then the servers.
    public let names: [String]
    /// The sources that are not Lockstep servers, first in order; their statuses are read on each tick.
    private let others: [any ClockSourceClient]
    /// The last status taken from each of `others`.
    private let othersTaken: Mutex<[MediaTime?]>
    private let clients: [SyncClockClient]
    private let clock: LocalClock
    private let logger: Logger
    private let relay: ClockRelay?
    private let onStatus: (@Sendable (ClockStatus) -> Void)?
    private let broadcast: StatusBroadcast
    private let selection: Mutex<Selection>

    private struct Selection {
        var selector: ClockSourceSelector
        var state: ClockState = .unsynced
        var selected: Int?
        var epoch: UInt64?
        /// Epochs of other timelines already reported, so the log says it once.
        var reportedOtherEpochs: Set<UInt64> = []
    }

    /// What one source is doing, for status reports.
    public struct SourceReport: Sendable, Hashable {
        /// The server's address, or the other source's name.
        public var source: String
        public var status: ClockStatus
        /// Whether it is followed, on standby, or which reason keeps it from being followed.
        public var kind: SourceStanding
        /// The same as a sentence: "followed", "standby", or why it is not followed.
        public var standing: String
    }

    /// - Parameters:
    ///   - sources: most preferred first; at least one.
    ///   - preferring: sources followed before any of `sources` while they qualify.
    ///   - ownRelay: the relay identity of this process's server, when it serves.
    ///   - relay: where each status is served onwards, when this process is a boundary clock.
    public init(
        preferring others: [any ClockSourceClient] = [], sources: [Endpoint],
        configuration: SyncClockClient.Configuration = .init(), clock: LocalClock = .process,
        ownRelay: UInt64? = nil, feeding relay: ClockRelay? = nil,
        logger: Logger = Logger(label: "lockstep.syncclock.sources"),
        onStatus: (@Sendable (ClockStatus) -> Void)? = nil
    ) {
        precondition(!sources.isEmpty, "a clock needs at least one source")
        self.sources = sources
        self.others = others
        othersTaken = Mutex(Array(repeating: nil, count: others.count))
        names = others.map(\.name) + sources.map(\.description)
        self.clock = clock
        self.logger = logger
        self.relay = relay
        self.onStatus = onStatus
        let selector = ClockSourceSelector(
            sources: others.count + sources.count,
            servo: (try? configuration.servoConfiguration()) ?? ClockServo.Configuration(),
            ownRelay: ownRelay)
        selection = Mutex(Selection(selector: selector))
        var clients: [SyncClockClient] = []
        let box = WeakSources()
        for (index, source) in sources.enumerated() {
            clients.append(
                SyncClockClient(server: source, configuration: configuration, clock: clock, logger: logger) { status in
                    box.sources?.take(status, from: others.count + index)
                })
        }
        self.clients = clients
        broadcast = StatusBroadcast(others.first?.status ?? clients[0].status)
        box.sources = self
    }

    private final class FailureCount: Sendable {
        let count = Mutex(0)
    }

    /// Lets each client's callback reach the sources without a reference cycle.
    private final class WeakSources: @unchecked Sendable {
        weak var sources: ClockSources?
    }

    /// The combined status: the followed source's estimate on the one continuous mapping.
    public var status: ClockStatus { broadcast.status }

    /// The Lockstep server followed now; nil in holdover, before lock, or while another source is.
    public var selectedSource: Endpoint? {
        selection.withLock { $0.selected.flatMap { $0 >= others.count ? sources[$0 - others.count] : nil } }
    }

    /// The name of the source followed now; nil in holdover or before lock.
    public var selectedSourceName: String? { selection.withLock { $0.selected.map { names[$0] } } }

    /// Every source, its client's status, and how it stands.
    public func reports() -> [SourceReport] {
        let now = clock.nowNanoseconds()
        let standings = selection.withLock { selection in
            names.indices.map { selection.selector.standing(of: $0, at: now) }
        }
        let statuses = others.map(\.status) + clients.map(\.status)
        return names.indices.map { index in
            SourceReport(
                source: names[index], status: statuses[index], kind: standings[index].kind,
                standing: Self.describe(standings[index]))
        }
    }

    /// Every new combined status; the stream ends when `run` returns.
    public func statusUpdates(bufferingNewest limit: Int = 64) -> AsyncStream<ClockStatus> {
        broadcast.updates(bufferingNewest: limit)
    }

    /// Waits until a source is followed, and returns that status.
    public func waitUntilLocked(timeout: MediaTime) async throws(SyncClockError) -> ClockStatus {
        try await broadcast.waitUntilLocked(timeout: timeout)
    }

    /// Follows every source until the calling task is cancelled.
    ///
    /// - Throws: when every client has failed (addresses that do not resolve, socket errors); one
    ///   failing alone is logged and the others go on.
    public func run() async throws {
        defer {
            relay?.serve(nil)
            broadcast.finish()
        }
        let failures = FailureCount()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for other in others {
                group.addTask { [self] in
                    do {
                        try await other.run()
                    } catch {
                        // Cancelled with the rest at shutdown; anything else leaves the servers to follow.
                        guard !Task.isCancelled else { return }
                        logger.error(
                            "clock source unusable",
                            metadata: ["clock.source": "\(other.name)", "clock.error": "\(error)"])
                    }
                }
            }
            for client in clients {
                group.addTask { [self] in
                    do {
                        try await client.run()
                    } catch {
                        // One source that cannot be reached must not stop the others.
                        let all = failures.count.withLock { count in
                            count += 1
                            return count == clients.count
                        }
                        logger.error(
                            "clock source unusable",
                            metadata: ["clock.source": "\(client.server)", "clock.error": "\(error)"])
                        if all { throw error }
                    }
                }
            }
            group.addTask { [self] in
                while !Task.isCancelled {
                    try await Task.sleep(for: .milliseconds(50))
                    tick()
                }
            }
            // The ticker runs until cancelled, and a client only ends early by failing; when all
            // have failed the last one throws, and that ends the group.
            while try await group.next() != nil {}
            group.cancelAll()
        }
    }

    private func tick() {
        // The other sources' new statuses, then time passing.
        for (index, other) in others.enumerated() {
            let status = other.status
            let fresh = othersTaken.withLock { taken in
                defer { taken[index] = status.localTime }
                return taken[index] != status.localTime
            }
            if fresh { take(status, from: index) }
        }
        let now = clock.nowNanoseconds()
        update(at: now) { $0.advance(to: now) }
    }

    private func take(_ status: ClockStatus, from index: Int) {
        let now = clock.nowNanoseconds()
        update(at: now) { $0.update(source: index, status: status, now: now) }
    }

    /// Runs `change` on the selector; when it changed the combined status, publishes it (to the
    /// callback and the relay in order, under the lock) and logs what moved.
    private func update(at now: Int64, _ change: (inout ClockSourceSelector) -> Bool) {
        let published = selection.withLock { selection -> ClockStatus? in
            let changed = change(&selection.selector)
            guard let status = selection.selector.status(at: now) else { return nil }
            guard changed else {
                broadcast.refresh(status)
                return nil
            }
            note(status, in: &selection, at: now)
            onStatus?(status)
            serveOnwards(status)
            broadcast.refresh(status)
            return status
        }
        if let published { broadcast.publish(published) }
    }

    private func serveOnwards(_ status: ClockStatus) {
        guard let relay else { return }
        guard status.state == .locked || status.state == .holdover else { return relay.serve(nil) }
        let master = status.master ?? MasterIdentity(identity: 0, epoch: 0, isRealtime: false, isSimulated: false)
        relay.serve(
            ClockRelay.Timeline(
                mapping: status.mapping, master: master, stratum: (status.path?.stratum ?? 0) + 1,
                upstream: status.path?.relay ?? 0, errorBound: status.errorBound, boundTime: status.localTime,
                errorBoundGrowthPPM: status.errorBoundGrowthPPM))
    }

    private func note(_ status: ClockStatus, in selection: inout Selection, at now: Int64) {
        let selected = selection.selector.selected
        if selected != selection.selected {
            let from = selection.selected.map { names[$0] } ?? "none"
            let to = selected.map { names[$0] } ?? "none"
            if selected == nil {
                logger.warning(
                    "no clock source to follow: holding the master's time",
                    metadata: ["clock.source": "\(from)", "clock.error_bound_ns": .nanoseconds(status.errorBound)])
            } else {
                logger.info(
                    "clock source changed",
                    metadata: [
                        "clock.source": "\(to)", "clock.previous_source": "\(from)",
                        "clock.path": "\(status.path?.description ?? "GStreamer server")",
                        "clock.error_bound_ns": .nanoseconds(status.errorBound),
                    ])
            }
            selection.selected = selected
        }
        if let epoch = selection.selector.epoch, epoch != selection.epoch {
            if selection.epoch != nil {
                logger.warning(
                    "the wall's clock moved to another epoch: no source served the one it followed",
                    metadata: ["clock.epoch": "\(hex(epoch))", "clock.previous_epoch": "\(hex(selection.epoch ?? 0))"])
            }
            selection.epoch = epoch
        }
        for index in names.indices {
            if case .otherEpoch(let epoch) = selection.selector.standing(of: index, at: now),
                selection.reportedOtherEpochs.insert(epoch).inserted
            {
                logger.warning(
                    "a clock source serves another epoch: not followed while the wall's epoch is served",
                    metadata: [
                        "clock.source": "\(names[index])", "clock.epoch": "\(hex(epoch))",
                        "clock.wall_epoch": "\(hex(selection.epoch ?? 0))",
                    ])
            }
        }
        if status.state != selection.state {
            logger.info(
                "clock state changed",
                metadata: [
                    "clock.state": "\(status.state)", "clock.previous": "\(selection.state)",
                    "clock.source": "\(selected.map { names[$0] } ?? "none")",
                    "clock.error_bound_ns": .nanoseconds(status.errorBound),
                ])
            selection.state = status.state
        }
    }

    static func describe(_ standing: ClockSourceSelector.Standing) -> String {
        switch standing {
        case .followed: return "followed"
        case .qualified: return "standby"
        case .notLocked(let state): return "not locked (\(state))"
        case .otherEpoch(let epoch): return "serves another epoch (\(hex(epoch)))"
        case .loop: return "follows this node (a loop)"
        case .tooManyRelays(let stratum):
            return "\(stratum) relays from the master: a loop of relays, or too long a chain"
        case .errorBoundTooLarge(let bound): return "error bound \(bound) too large"
        }
    }
}
