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
