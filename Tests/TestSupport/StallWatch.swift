import Foundation
import LockstepLocks
import LockstepTime

/// Times when the test machine itself stalled: a thread that asks to wake every 2 ms and records
/// each wake-up that came much later than asked. A CI virtual machine is sometimes not scheduled
/// for tens of milliseconds; every node on it then misses the same frame, which is the machine, not
/// the wall. A test that judges frame gaps asks here whether the machine stalled during a gap it
/// found, and says so, rather than failing on a host that stopped or excusing a gap it did not.
public final class StallWatch: Sendable {
    /// A wake-up this much later than asked is a stall.
    public let threshold: MediaTime
    private let stalls = Mutex<[Range<MediaTime>]>([])
    private let stopped = Mutex(false)

    public init(threshold: MediaTime = MediaTime(value: 10, timescale: 1000)) {
        self.threshold = threshold
        let thread = Thread { [weak self] in self?.watch() }
        thread.name = "stall-watch"
        thread.start()
    }

    /// Ends the watch (the thread holds the watch until then).
    public func stop() { stopped.withLock { $0 = true } }

    private func watch() {
        let interval = MediaTime(value: 2, timescale: 1000)
        var asked = LocalClock.monotonic.now()
        while !stopped.withLock({ $0 }) {
            usleep(2000)
            let now = LocalClock.monotonic.now()
            if now - asked - interval > threshold {
                stalls.withLock { $0.append(asked..<now) }
            }
            asked = now
        }
    }

    /// The longest stall that overlaps `window`; zero when none did.
    public func longestStall(overlapping window: Range<MediaTime>) -> MediaTime {
        stalls.withLock { $0 }.filter { $0.overlaps(window) }.map { $0.upperBound - $0.lowerBound }.max() ?? .zero
    }

    /// Every stall so far, for a failure's message: "at 12.345 s for 48 ms".
    public func describe(since origin: MediaTime) -> String {
        let all = stalls.withLock { $0 }.filter { $0.upperBound > origin }
        guard !all.isEmpty else { return "the machine did not stall" }
        return "the machine stalled "
            + all.suffix(10).map {
                String(
                    format: "at %.3f s for %.0f ms", ($0.lowerBound - origin).seconds,
                    ($0.upperBound - $0.lowerBound).seconds * 1000)
            }.joined(separator: ", ")
    }
}
