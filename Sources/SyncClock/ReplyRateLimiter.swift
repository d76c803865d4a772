import LockstepNet

/// How many replies a clock server sends to one source address.
///
/// A reply is never larger than its request, but a server that answers every datagram still
/// reflects a spoofed flood at whoever's address it carries. Replies per source address are
/// therefore limited by a token bucket. The port is not part of the key: a spoofer picks ports
/// freely, and the replies land on the same host whatever the port.
public struct ReplyRateLimit: Sendable, Hashable, CustomStringConvertible {
    /// Replies per second each source address may have, sustained.
    public var repliesPerSecond: Double
    /// Replies a source address may have at once after a quiet spell.
    public var burst: Double
    /// Source addresses tracked at most. Beyond, addresses not in the table share one bucket, so
    /// a flood from spoofed random addresses gets `repliesPerSecond` in total, and memory stays
    /// bounded.
    public var tableCapacity: Int

    /// 1000 replies per second with a burst of 200 per address, 4096 addresses: one client polls
    /// at most 62.5 times a second (every 16 ms while locking, `ClockClientEngine`), so a machine
    /// can run 16 clients that all lock at once, and 100 clients polling at 10 Hz, before it is
    /// limited; a flood that drew 98,000 replies a second gets 1000.
    public static let `default` = ReplyRateLimit(repliesPerSecond: 1_000, burst: 200, tableCapacity: 4_096)

    public init(repliesPerSecond: Double, burst: Double, tableCapacity: Int = 4_096) {
        self.repliesPerSecond = repliesPerSecond
        self.burst = burst
        self.tableCapacity = tableCapacity
    }

    public var description: String {
        "\(repliesPerSecond.formatted) replies/s per source address, burst \(burst.formatted)"
    }
}

extension Double {
    fileprivate var formatted: String { self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self) }
}

/// A token bucket per source address, in a table of bounded size: the pure logic of the server's
/// rate limit, on times it is given.
///
/// Removing an address whose bucket has refilled loses nothing (a new entry starts full), but an
/// address still polling should keep its place, or a flood from spoofed random addresses would
/// push real clients into the shared overflow bucket. So when the table is full it is swept, at
/// most once per `sweepInterval`, of addresses silent for `idleTimeout` (longer than any client's
/// poll interval) whose buckets have refilled; if it is still full, the new address is served
/// from the overflow bucket.
struct ReplyRateLimiter: Sendable {
    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Int64
    }

    /// How often a full table may be swept, ns: a sweep is linear in the table's size.
    static let sweepInterval: Int64 = 100_000_000
    /// Silence after which an address may leave the table, ns: clients poll every 500 ms or faster
    /// by default, `GstNetClientClock` about once a second.
    static let idleTimeout: Int64 = 5_000_000_000

    let limit: ReplyRateLimit
    private var buckets: [SocketAddress: Bucket] = [:]
    private var overflow: Bucket
    private var lastSweep: Int64 = .min

    init(limit: ReplyRateLimit) {
        self.limit = limit
        overflow = Bucket(tokens: limit.burst, updated: .min)
        buckets.reserveCapacity(min(limit.tableCapacity, 1 << 16))
    }

    /// Addresses tracked now.
    var trackedAddresses: Int { buckets.count }

    /// Whether a reply to `source` may be sent at local time `now` (ns); takes a token if so.
    mutating func allows(_ source: SocketAddress, at now: Int64) -> Bool {
        let key = source.withPort(0)
        if var bucket = buckets[key] {
            let allowed = take(&bucket, at: now)
            buckets[key] = bucket
            return allowed
        }
        if buckets.count >= limit.tableCapacity { sweep(at: now) }
        guard buckets.count < limit.tableCapacity else { return take(&overflow, at: now) }
        var bucket = Bucket(tokens: limit.burst, updated: now)
        let allowed = take(&bucket, at: now)
        buckets[key] = bucket
        return allowed
    }

    private func refilled(_ bucket: Bucket, at now: Int64) -> Double {
        guard bucket.updated != .min else { return limit.burst }
        let elapsed = Double(max(0, now - bucket.updated)) / 1e9
        return min(limit.burst, bucket.tokens + elapsed * limit.repliesPerSecond)
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
            now - $0.value.updated < Self.idleTimeout || refilled($0.value, at: now) < limit.burst
        }
    }
}
