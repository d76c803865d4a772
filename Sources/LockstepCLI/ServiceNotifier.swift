import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// systemd's readiness and watchdog protocol (`sd_notify(3)`), without libsystemd: one datagram of
/// `KEY=VALUE` lines to the socket named by `$NOTIFY_SOCKET`.
///
/// A unit with `Type=notify` is started once the program says `READY=1`, so units ordered after it
/// (and `systemctl start`) wait until it really serves. With `WatchdogSec=`, systemd passes the
/// interval in `$WATCHDOG_USEC` and restarts the service when no `WATCHDOG=1` arrives within it: the
/// program pings only after checking that its own work still makes progress, so a wedged process is
/// restarted rather than left running dark.
///
/// Outside systemd (`$NOTIFY_SOCKET` unset) every call does nothing.
public struct ServiceNotifier: Sendable {
    /// The socket's address: a path, or an abstract name (written with a leading `@`).
    private let socketPath: String?
    /// How often to ping the watchdog: half its interval, as sd_watchdog_enabled(3) advises; nil
    /// when the supervisor asked for no watchdog.
    public let watchdogInterval: Duration?

    /// The notifier the supervisor asked for, through the environment.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        -> ServiceNotifier
    {
        ServiceNotifier(environment: environment, processID: getpid())
    }

    init(environment: [String: String], processID: pid_t) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path
        // WATCHDOG_PID, when set, names the process the watchdog is meant for: a child the service
        // started inherits the environment but must not ping on its behalf.
        let forThisProcess = environment["WATCHDOG_PID"].map { pid_t($0) == processID } ?? true
        if path != nil, forThisProcess, let microseconds = environment["WATCHDOG_USEC"].flatMap(UInt64.init),
            microseconds > 0
        {
            watchdogInterval = .microseconds(Int64(clamping: microseconds / 2))
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether a supervisor listens.
    public var isActive: Bool { socketPath != nil }

    /// The service is up and serving; `status` is shown by `systemctl status`.
    public func ready(status: String) { send("READY=1\nSTATUS=\(Self.singleLine(status))") }

    /// A line for `systemctl status`.
    public func status(_ text: String) { send("STATUS=\(Self.singleLine(text))") }

    /// The service checked itself and is alive.
    public func watchdog() { send("WATCHDOG=1") }

    /// The service is shutting down.
    public func stopping() { send("STOPPING=1") }

    /// Pings the watchdog every half interval for as long as `alive` returns true in time; returns
    /// at once when no watchdog was asked for, and when cancelled.
    ///
    /// - Parameter alive: a check that the program's own work still answers (an actor call, a
    ///   counter that moved). A check that hangs stops the pings, and systemd restarts the service.
    public func keepWatchdogFed(while alive: @escaping @Sendable () async -> Bool) async {
        guard let interval = watchdogInterval else { return }
        while !Task.isCancelled {
            guard await alive() else { return }
            watchdog()
            try? await Task.sleep(for: interval)
        }
    }

    private static func singleLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ")
    }

    /// Sends one datagram; failures are ignored, as sd_notify's callers ignore them: a supervisor
    /// that went away cannot be told anything.
    private func send(_ message: String) {
        guard let socketPath else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socketPath.utf8)
        // An abstract socket's name starts with a NUL byte where the environment shows '@'.
        if name.first == UInt8(ascii: "@") { name[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard name.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: name)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
    }
}
