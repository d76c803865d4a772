import Dispatch
import Foundation
import LockstepLocks

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

extension Termination {
    /// The watchdog's signal sources, kept for the life of the process.
    private static let watchdog = Mutex<SignalSources?>(nil)
    private static let watchdogFired = Atomic<Bool>(false)

    /// Ends the process `seconds` after the first SIGINT or SIGTERM if it is still running then,
    /// whatever its graceful shutdown is waiting for.
    ///
    /// A daemon shuts down gracefully by letting work in flight finish, and work stuck in a C call
    /// (a read that never returns, a pipeline that never changes state) never does: the daemon
    /// would ignore SIGTERM until its supervisor resorts to SIGKILL. The signal is watched on a
    /// queue of its own and the time kept on a thread of its own, so a wedged Swift concurrency
    /// pool cannot hold the watchdog. The exit status is 128 + the signal, as if the signal had
    /// ended the process.
    public static func exitAfterSignal(within seconds: Double, program: String) {
        let sources = SignalSources(
            signals: [SIGINT, SIGTERM], queue: DispatchQueue(label: "lockstep.termination-watchdog")
        ) { number in
            guard !watchdogFired.exchange(true, ordering: .relaxed) else { return }
            let timer = Thread {
                Thread.sleep(forTimeInterval: seconds)
                let message = "\(program): still running \(seconds) s after signal \(number); exiting now\n"
                _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
                _exit(128 + number)
            }
            timer.name = "termination-watchdog"
            timer.start()
        }
        watchdog.withLock { $0 = sources }
    }
}

extension Termination {
    private static let hangup = Mutex<SignalSources?>(nil)

    /// Keeps SIGHUP from ending the process (its default action), and calls `noted` each time it
    /// arrives: a daemon says what a hangup does rather than dying of it with nothing logged.
    public static func onHangup(_ noted: @escaping @Sendable () -> Void) {
        let sources = SignalSources(signals: [SIGHUP], queue: DispatchQueue(label: "lockstep.hangup")) { _ in noted() }
        hangup.withLock { $0 = sources }
    }
}

/// Dispatch signal sources, with the default action (terminate) switched off while they live.
private final class SignalSources: @unchecked Sendable {
    // Dispatch sources are thread-safe; they are only created, resumed and cancelled here.
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], queue: DispatchQueue = .global(), handler: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
