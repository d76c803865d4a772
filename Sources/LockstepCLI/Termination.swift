import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM as an asynchronous event, so commands can stop cleanly and print what they
/// measured instead of being killed.
public enum Termination {
    /// Returns the signal number once SIGINT or SIGTERM arrives.
    public static func signal() async -> Int32 {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        let sources = SignalSources(signals: [SIGINT, SIGTERM]) { continuation.yield($0) }
        defer { sources.cancel() }
        for await number in stream { return number }
        return SIGTERM
    }

    /// Waits for SIGINT or SIGTERM, or until `seconds` pass when given.
    ///
    /// - Returns: true if a signal ended the wait.
    public static func wait(seconds: Double?) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = await signal()
                return true
            }
            if let seconds {
                group.addTask {
                    try? await Task.sleep(for: .nanoseconds(Int64(seconds * 1e9)))
                    return false
                }
            }
            let signalled = await group.next() ?? false
            group.cancelAll()
            return signalled
        }
    }
}

/// Dispatch signal sources, with the default action (terminate) switched off while they live.
private final class SignalSources: @unchecked Sendable {
    // Dispatch sources are thread-safe; they are only created, resumed and cancelled here.
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
