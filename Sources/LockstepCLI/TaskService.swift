import ServiceLifecycle

/// A long-running task as a service of a daemon's `ServiceGroup`: cancelled when the group shuts
/// down. Every daemon (`wallnode`, `wallctl serve`, `wallctl clock serve`) is one group of these.
public struct TaskService: Service {
    public let name: String
    let body: @Sendable () async throws -> Void

    public init(_ name: String, _ body: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.body = body
    }

    /// A body cancelled because the daemon is shutting down has done what was asked: that is no
    /// failure, and the daemon exits 0 on SIGTERM.
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await body() }
        } catch is CancellationError where Task.isShuttingDownGracefully {
            return
        }
    }

    /// Waits until the task is cancelled (the group shutting down): the body of a service whose
    /// work runs elsewhere and only has to be stopped at the end.
    public static func untilCancelled() async {
        let (never, _) = AsyncStream.makeStream(of: Void.self)
        for await _ in never {}
    }
}
