internal import CLockstepNetShims

#if canImport(Glibc)
    import Glibc
#endif

/// Waits until one of a set of descriptors is readable, a timeout passes, or another thread wakes it.
///
/// Each dedicated network thread owns one: it waits here instead of blocking in `recv`, so `wake()`
/// from any thread ends the wait at once (an eventfd is always in the set).
public final class Poller: Sendable {
    private let wakeDescriptor: Int32

    public init() throws(NetworkError) {
        let descriptor = lockstep_net_eventfd()
        guard descriptor >= 0 else { throw .systemCall(call: "eventfd", target: "a thread wake-up", errno: errno) }
        wakeDescriptor = descriptor
    }

    deinit {
        close(wakeDescriptor)
    }

    /// Ends the current or next `wait`. Safe from any thread, any number of times.
    public func wake() {
        _ = lockstep_net_eventfd_signal(wakeDescriptor)
    }

    /// The result of a wait.
    public struct Readiness: Sendable {
        /// Whether `wake()` was called.
        public let woken: Bool
        /// For each descriptor passed in, whether it is readable (or in error, which a read reports).
        public let readable: [Bool]
    }

    /// Waits for any of `descriptors` to become readable, for at most `timeoutNanoseconds` (nil: no
    /// limit), or until `wake()`. A wake-up is consumed by the wait that reports it.
    public func wait(for descriptors: [Int32], timeoutNanoseconds: Int64?) throws(NetworkError) -> Readiness {
        var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        fds.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
        let timeout = timeoutNanoseconds.map { max(0, $0) } ?? -1
        let result = lockstep_net_wait(&fds, nfds_t(fds.count), timeout)
        guard result >= 0 else {
            throw .systemCall(call: "ppoll", target: "\(descriptors.count) sockets", errno: errno)
        }
        let woken = fds[fds.count - 1].revents != 0
        if woken { lockstep_net_eventfd_drain(wakeDescriptor) }
        let ready = Int16(POLLIN | POLLERR | POLLHUP | POLLNVAL)
        return Readiness(woken: woken, readable: fds.dropLast().map { $0.revents & ready != 0 })
    }
}

/// A one-shot timer on `CLOCK_MONOTONIC` that a `Poller` can wait on like a socket.
///
/// It is armed with an absolute deadline (`TFD_TIMER_ABSTIME`): the kernel's high-resolution timer
/// fires at that instant with no timer slack, the precision `clock_nanosleep(TIMER_ABSTIME)` gives, and
/// unlike a sleep the wait also ends when a datagram arrives.
public final class DeadlineTimer: Sendable {
    public let descriptor: Int32

    public init() throws(NetworkError) {
        let descriptor = lockstep_net_timerfd()
        guard descriptor >= 0 else { throw .systemCall(call: "timerfd_create", target: "a timer", errno: errno) }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Fires when `CLOCK_MONOTONIC` reaches `monotonicNanoseconds`; nil disarms.
    public func arm(at monotonicNanoseconds: Int64?) {
        // The shim disarms on 0; a deadline at or before it is already past and fires at 1 ns.
        _ = lockstep_net_timerfd_arm(descriptor, monotonicNanoseconds.map { max(1, $0) } ?? 0)
    }

    /// Clears a firing so the descriptor stops being readable.
    public func acknowledge() {
        lockstep_net_timerfd_drain(descriptor)
    }
}

/// Thread tuning for the dedicated network threads.
public enum ThreadTuning {
    /// Sets the calling thread's timer slack to 1 ns: by default Linux lets a normal thread's sleeps
    /// and poll timeouts end up to 50 µs late to batch wake-ups, which would show up as clock noise.
    public static func minimizeTimerSlack() {
        _ = lockstep_net_set_timer_slack(1)
    }

    /// Asks for `SCHED_FIFO` at a low real-time priority for the calling thread, so ordinary work on
    /// the machine (compilers, decoders) cannot delay it. Granted to root or with `CAP_SYS_NICE`;
    /// otherwise the thread keeps normal scheduling.
    ///
    /// - Returns: whether real-time scheduling was granted.
    @discardableResult
    public static func requestRealtimePriority(_ priority: Int32 = 10) -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = priority
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
    }
}
