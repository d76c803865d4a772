public import LockstepNet
public import LockstepTime
public import Logging

/// A master that comes back to a playing wall joins the wall's timeline instead of starting its own.
///
/// While the master was away, the relays went on serving its timeline (holdover), and every screen
/// follows it. A master that restarted on a new epoch, or on another clock, would otherwise pull the
/// wall onto a new timeline once the relays give the old one up: a jump on every screen. So before
/// it serves, a master with relays follows them for a while; if one answers with a timeline, the
/// master serves that timeline onwards as a boundary clock on its own address. Only when none
/// answers in time (the whole wall is starting, after a power cut) does it serve its own clock.
public struct ClockJoin: Sendable {
    /// A server relaying the joined timeline (not yet started), the sources feeding it, and the
    /// task that runs them.
    public let server: SyncClockServer
    public let sources: ClockSources
    public let running: Task<Void, any Error>
    let relay: ClockRelay
    let clock: LocalClock

    /// Follows `relays` until one locks, at most `timeout`.
    ///
    /// - Parameters:
    ///   - configuration: the master server's configuration: where it listens, its key, rate limit.
    ///   - onStatus: every combined status of the sources, as `ClockSources` gives it.
    /// - Returns: the joined timeline, or nil when no relay locked in time (everything started for
    ///   the attempt is stopped again).
    public static func join(
        relays: [Endpoint], configuration: SyncClockServer.Configuration, clock: LocalClock = .process,
        timeout: MediaTime, logger: Logger, onStatus: (@Sendable (ClockStatus) -> Void)? = nil
    ) async -> ClockJoin? {
        guard !relays.isEmpty else { return nil }
        let relay = ClockRelay()
        let server = SyncClockServer(configuration: configuration, clock: clock, relaying: relay, logger: logger)
        let sources = ClockSources(
            sources: relays, configuration: SyncClockClient.Configuration(key: configuration.key), clock: clock,
            ownRelay: server.identity, feeding: relay, logger: logger, onStatus: onStatus)
        let running = Task { try await sources.run() }
        guard (try? await sources.waitUntilLocked(timeout: timeout)) != nil else {
            running.cancel()
            _ = try? await running.value
            return nil
        }
        return ClockJoin(server: server, sources: sources, running: running, relay: relay, clock: clock)
    }

    /// Stops following the relays and serves the joined timeline as its master from then on, at
    /// stratum 0: the mapping it followed, frozen (this machine's clock at the rate it measured), its
    /// error from the old master's time fixed at what it was. Without this, the relays, whose first
    /// source is the master, would follow it while it follows them: a loop with no master in it,
    /// whose strata climb until no node takes any source, and a node restarted then never locks.
    /// Returns false when there was nothing to take over (the relays lost meanwhile).
    @discardableResult
    public func takeOver() async -> Bool {
        guard let followed = relay.timeline else { return false }
        running.cancel()
        _ = try? await running.value
        let now = clock.nowNanoseconds()
        relay.serve(
            ClockRelay.Timeline(
                mapping: followed.mapping, master: followed.master, stratum: 0, upstream: 0,
                errorBound: MediaTime(nanoseconds: Int64(followed.rootErrorBound(atLocal: now))),
                boundTime: MediaTime(nanoseconds: now), errorBoundGrowthPPM: 0))
        return true
    }

    /// Runs the sources until the calling task is cancelled, then stops them.
    public func run() async throws {
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            running.cancel()
        }
    }
}
