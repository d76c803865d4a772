import LockstepLocks
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The times a process stood still, from the beats of a thread that sleeps `beatInterval` at a
/// time: a beat that comes more than `threshold` after the one before says the process (or the
/// machine under it) was not running meanwhile: stopped by SIGSTOP, a debugger or a paused
/// virtual machine, or starved of the CPU for as long. Time passes on the monotonic clock all the
/// same, so whatever measures a duration on it (a watchdog, how long a preparation took) counts
/// that time as its own unless it asks here.
///
/// Pure: the beats and readings come with their times, so every case is a unit test.
public struct StandStillLedger: Sendable, Hashable {
    /// How long the beating thread sleeps between beats.
    public let beatInterval: MediaTime
    /// A gap between beats longer than this is a stand-still.
    public let threshold: MediaTime
    private var lastBeat: MediaTime
    private var recorded: MediaTime = .zero
    /// How many stand-stills were recorded.
    public private(set) var stands = 0

    public init(
        beatInterval: MediaTime = MediaTime(value: 50, timescale: 1000),
        threshold: MediaTime = MediaTime(value: 500, timescale: 1000), startingAt start: MediaTime
    ) {
        self.beatInterval = beatInterval
        self.threshold = threshold
        lastBeat = start
    }

    /// A beat at `now`; the time stood still since the beat before, if it was a stand-still.
    public mutating func beat(at now: MediaTime) -> MediaTime? {
        let still = stoodStill(inGap: now - lastBeat)
        lastBeat = MediaTime.maximum(lastBeat, now)
        guard let still else { return nil }
        recorded = recorded + still
        stands += 1
        return still
    }

    /// All the time stood still up to `now`, one in progress included: a reader woken by the end of
    /// a stand-still may run before the beating thread does, and still sees it. Never decreases.
    public func total(at now: MediaTime) -> MediaTime {
        recorded + (stoodStill(inGap: now - lastBeat) ?? .zero)
    }

    /// The part of a gap between beats that was not the beating thread's own sleep.
    private func stoodStill(inGap gap: MediaTime) -> MediaTime? {
        gap > threshold ? gap - beatInterval : nil
    }
}

/// The process's record of the times it stood still (`StandStillLedger`), kept by a thread of its
/// own from first use on.
///
/// A node stopped for seconds during a preparation found, on waking, its preroll watchdog expired
/// (the pipeline rebuilt as stalled) and its preparation seconds late (the next anchor 4 s ahead):
/// 4 s out of step after a stop that cost nothing otherwise (docs/BENCHMARKS.md, the stop run).
/// Both now ask here how much of the time that passed was the process standing still.
public final class StandStillMonitor: Sendable {
    /// The process's monitor, started the first time it is asked.
    public static let process = StandStillMonitor(logger: Logger(label: "lockstep.time"))

    private let ledger: Mutex<StandStillLedger>
    private let logger: Logger

    private init(logger: Logger) {
        let ledger = StandStillLedger(startingAt: LocalClock.monotonic.now())
        self.ledger = Mutex(ledger)
        self.logger = logger
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<StandStillMonitor>.fromOpaque(context).takeRetainedValue().beatForever()
                return nil
            }, context)
        if created == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<StandStillMonitor>.fromOpaque(context).release()
            logger.error(
                "no thread to watch for the process standing still: a stop will count as time spent",
                metadata: ["errno": .value(created)])
        }
    }

    /// All the time the process stood still since the monitor started, on the monotonic clock.
    /// (Beats and readings take their time under the lock: in that order, a reading never exceeds
    /// the next, which a beat taken just before a reading but recorded after it could make it.)
    public func total() -> MediaTime {
        ledger.withLock { $0.total(at: LocalClock.monotonic.now()) }
    }

    private func beatForever() -> Never {
        let interval = ledger.withLock { $0.beatInterval }
        var pause = timespec(tv_sec: 0, tv_nsec: Int(interval.nanoseconds ?? 50_000_000))
        while true {
            nanosleep(&pause, nil)
            if let still = ledger.withLock({ $0.beat(at: LocalClock.monotonic.now()) }) {
                logger.notice(
                    "the process stood still (stopped, paused or starved of the CPU)",
                    metadata: ["time.stood_still_ns": .nanoseconds(still)])
            }
        }
    }
}
