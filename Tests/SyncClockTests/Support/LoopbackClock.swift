import LockstepNet
import LockstepTime
import XCTest

@testable import SyncClock

/// A master on a known simulated clock, so a client's true error is known: the master reads
/// `masterClock.localNanoseconds(atMonotonic:)` whenever the client's monotonic clock reads its argument.
enum LoopbackClock {
    static let masterClock = try! LocalClock(simulatedOffset: MediaTime(value: 3600, timescale: 1), driftPPM: 100)

    static func server(on host: String = "127.0.0.1", epoch: UInt64? = nil) -> SyncClockServer {
        SyncClockServer(
            configuration: SyncClockServer.Configuration(listen: [Endpoint(host: host, port: 0)], epoch: epoch),
            clock: masterClock)
    }

    /// The client's true error now, and its error bound now.
    static func error(of client: SyncClockClient, master: (Int64) -> Int64 = masterClock.localNanoseconds(atMonotonic:))
        -> (error: Int64, bound: Int64)
    {
        let status = client.status
        let now = LocalClock.monotonic.nowNanoseconds()
        let error = status.mapping.masterNanoseconds(atLocalNanoseconds: now) - master(now)
        let bound = status.errorBound(atLocal: MediaTime(nanoseconds: now)).nanoseconds ?? .max
        return (error, bound)
    }

    /// Runs `client` while `body` runs, then stops it.
    static func following(
        _ client: SyncClockClient, _ body: @Sendable @escaping () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            group.addTask {
                try await body()
                throw CancellationError()
            }
            do {
                while try await group.next() != nil {}
            } catch is CancellationError {
                group.cancelAll()
            }
        }
    }
}
