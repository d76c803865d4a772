/// A token bucket per source address, in a table of bounded size: the pure logic of every
/// per-sender rate limit (the clock server's replies, show-control messages), on times it is given.
///
/// Removing an address whose bucket has refilled loses nothing (a new entry starts full), but an
/// address still polling should keep its place, or a flood from spoofed random addresses would
/// push real clients into the shared overflow bucket. So when the table is full it is swept, at
/// most once per `sweepInterval`, of addresses silent for `idleTimeout` (longer than any client's
/// poll interval) whose buckets have refilled; if it is still full, the new address is served
/// from the overflow bucket.
public struct SourceRateLimiter: Sendable {
    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Int64
    }

    /// How often a full table may be swept, ns: a sweep is linear in the table's size.
    static let sweepInterval: Int64 = 100_000_000
    /// Silence after which an address may leave the table, ns: clients poll every 500 ms or faster
    /// by default, `GstNetClientClock` about once a second.
    static let idleTimeout: Int64 = 5_000_000_000

    /// Messages a second each address may send, sustained.
    public let perSecond: Double
    /// Messages an address may send at once after a quiet spell.
    public let burst: Double
    /// Addresses tracked at most; beyond, new addresses share one bucket.
    public let tableCapacity: Int
    private var buckets: [SocketAddress: Bucket] = [:]
    private var overflow: Bucket
    private var lastSweep: Int64 = .min

    public init(perSecond: Double, burst: Double, tableCapacity: Int = 4_096) {
        self.perSecond = perSecond
        self.burst = burst
        self.tableCapacity = tableCapacity
        overflow = Bucket(tokens: burst, updated: .min)
        buckets.reserveCapacity(min(tableCapacity, 1 << 16))
    }

    /// Addresses tracked now.
    public var trackedAddresses: Int { buckets.count }

    /// Whether `source` may have one more (a reply, a message) at local time `now` (ns); takes a token if so.
    public mutating func allows(_ source: SocketAddress, at now: Int64) -> Bool {
        let key = source.withPort(0)
        if var bucket = buckets[key] {
            let allowed = take(&bucket, at: now)
            buckets[key] = bucket
            return allowed
        }
        if buckets.count >= tableCapacity { sweep(at: now) }
        guard buckets.count < tableCapacity else { return take(&overflow, at: now) }
        var bucket = Bucket(tokens: burst, updated: now)
        let allowed = take(&bucket, at: now)
        buckets[key] = bucket
        return allowed
    }

    private func refilled(_ bucket: Bucket, at now: Int64) -> Double {
        guard bucket.updated != .min else { return burst }
        let elapsed = Double(max(0, now - bucket.updated)) / 1e9
        return min(burst, bucket.tokens + elapsed * perSecond)
    }

    private func take(_ bucket: inout Bucket, at now: Int64) -> Bool {
        bucket.tokens = refilled(bucket, at: now)
        bucket.updated = max(bucket.updated, now)
        guard bucket.tokens >= 1 else { return false }
        bucket.tokens -= 1
        return true
    }

    private mutating func sweep(at now: Int64) {
        guard lastSweep == .min || now - lastSweep >= Self.sweepInterval else { return }
        lastSweep = now
        buckets = buckets.filter {
            now - $0.value.updated < Self.idleTimeout || refilled($0.value, at: now) < burst
        }
    }
}
