import LockstepNet
public import LockstepTime

/// What an impairment proxy has done, by direction.
public struct ImpairmentStatistics: Sendable, Hashable, CustomStringConvertible {
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// From clients to the forward address.
        case toServer
        /// From the forward address back to clients.
        case toClient
    }

    public var received: [Direction: Int] = [:]
    public var sent: [Direction: Int] = [:]
    public var lost: [Direction: Int] = [:]
    public var reordered: [Direction: Int] = [:]
    public var duplicated: [Direction: Int] = [:]
    public var sendFailures = 0
    public var droppedTooManyClients = 0
    /// How long the model held each datagram that was not lost or reordered.
    public var held: [Direction: Times] = [:]
    /// How late held datagrams actually left, after their deadline.
    public var lateness: [Direction: Times] = [:]
    /// Whether the proxy thread got real-time scheduling.
    public var realtimeScheduling = false

    public init() {}

    /// Times (holds, departure lateness) over the most recent datagrams.
    public struct Times: Sendable, Hashable {
        private var recent = RecentValues<Int64>(capacity: 100_000)

        public init() {}

        mutating func record(_ value: Int64) {
            recent.append(value)
        }

        /// The `fraction` quantile (0.5 for the median), or nil before any departure.
        public func quantile(_ fraction: Double) -> MediaTime? {
            recent.quantiles(fraction).map { MediaTime(nanoseconds: $0[0]) }
        }
    }

    public var description: String {
        func counts(_ direction: Direction) -> String {
            "\(received[direction, default: 0]) received, \(sent[direction, default: 0]) sent, "
                + "\(lost[direction, default: 0]) lost, \(reordered[direction, default: 0]) reordered, "
                + "\(duplicated[direction, default: 0]) duplicated"
        }
        func microseconds(_ time: MediaTime?) -> String {
            time.flatMap(\.nanoseconds).map { String(Double($0) / 1e3) + " µs" } ?? "-"
        }
        var text = "to server: \(counts(.toServer)); to client: \(counts(.toClient))"
        for direction in Direction.allCases {
            let hold = held[direction, default: Times()]
            text += "; \(direction.rawValue) held p50 \(microseconds(hold.quantile(0.5))), "
            text += "p99 \(microseconds(hold.quantile(0.99))), max \(microseconds(hold.quantile(1)))"
        }
        for direction in Direction.allCases {
            let late = lateness[direction, default: Times()]
            text += "; \(direction.rawValue) departure lateness p50 \(microseconds(late.quantile(0.5))), "
            text += "p99 \(microseconds(late.quantile(0.99))), max \(microseconds(late.quantile(1)))"
        }
        text += realtimeScheduling ? " (real-time thread)" : " (normal thread: no real-time scheduling allowed)"
        if sendFailures > 0 { text += "; \(sendFailures) send failures" }
        if droppedTooManyClients > 0 { text += "; \(droppedTooManyClients) dropped (too many clients)" }
        return text
    }
}
