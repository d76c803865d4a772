import LockstepLocks
import LockstepTime

/// Keeps a node's content transfers, all of them together, under `bytesPerSecond`
/// (`content-bandwidth`): every piece received draws on one budget that fills at that rate and holds
/// at most `burst` bytes (a token bucket), and a transfer that overdraws it waits until it is even.
/// So bulk copies leave the link room for the clock's datagrams, however many run at once.
public final class TransferPacer: Sendable {
    public let bytesPerSecond: Double
    public let burst: Double
    private let bucket: Mutex<(tokens: Double, at: MediaTime)>

    /// - Parameter burst: bytes taken at once without waiting: by default 10 ms at the rate, at
    ///   least 64 KiB.
    public init(bytesPerSecond: Double, burst: Double? = nil, now: MediaTime = LocalClock.monotonic.now()) {
        let burst = burst ?? max(64 * 1024, bytesPerSecond / 100)
        self.bytesPerSecond = bytesPerSecond
        self.burst = burst
        bucket = Mutex((burst, now))
    }

    /// A pacer for `limit` bytes per second; nil for no limit (nil, zero or less).
    public convenience init?(limit: Double?) {
        guard let limit, limit > 0 else { return nil }
        self.init(bytesPerSecond: limit)
    }

    /// Takes `bytes` at `now`; returns how long the taker waits before it goes on (zero when the
    /// budget held them).
    public func take(_ bytes: Int, at now: MediaTime) -> MediaTime {
        bucket.withLock { bucket in
            let elapsed = max(0, (now - bucket.at).seconds)
            bucket.tokens = min(burst, bucket.tokens + elapsed * bytesPerSecond) - Double(bytes)
            bucket.at = MediaTime.maximum(bucket.at, now)
            guard bucket.tokens < 0 else { return .zero }
            return MediaTime(seconds: -bucket.tokens / bytesPerSecond, preferredTimescale: 1_000_000_000)
        }
    }
}
