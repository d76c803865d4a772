import LockstepLocks
import LockstepNet
import Logging
import NIOCore

/// The one guard every listening surface shares: who may connect (the allow list, checked when a
/// connection opens), how many connections are held in all and from one address, and how many
/// messages one address may send a second. Its handlers (`HTTPGuardHandler`, `LineGuardHandler`)
/// add the deadlines: how long a connection may wait and a message may take.
///
/// At a bound, a new connection takes the place of the oldest one that is waiting for a message
/// (idle, or sending one slowly), so a flood of idle connections never locks out a client with
/// something to ask; only when every connection is being served is a newcomer refused, with a
/// sentence. A refusal never leaves a connection half open: its handler closes it.
public final class ConnectionGuard: Sendable {
    public let policy: GuardPolicy
    /// What the surface is called in refusals ("control", "show-control tcp").
    public let surface: String
    public let refusals: RefusalLog
    private let state: Mutex<State>

    private struct Entry {
        let order: UInt64
        let channel: any Channel
        let source: String
        var waiting: Bool
    }

    private struct State {
        var next: UInt64 = 0
        var open: [ObjectIdentifier: Entry] = [:]
        var perSource: [String: Int] = [:]
        var rates: SourceRateLimiter?
    }

    /// Why a connection or a message was refused; each reads as a sentence.
    public enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        case notAllowed(sender: String, setting: String)
        case tooManyFromSource(sender: String, most: Int)
        case full(surface: String, most: Int)
        case rateLimited(sender: String, perSecond: Double, setting: String)
        case slowBody(sender: String, bytesPerSecond: Int)
        case slowMessage(sender: String, within: TimeAmount)
        case tooLong(sender: String, LineTooLong)

        public var description: String {
            switch self {
            case .notAllowed(let sender, let setting): return "\(sender) is not in \(setting)"
            case .tooManyFromSource(let sender, let most):
                return
                    "\(sender) holds \(most) connections, each being served (at most \(most) from one address): try again"
            case .full(let surface, let most):
                return "too many \(surface) connections are being served (at most \(most)): try again"
            case .rateLimited(let sender, let perSecond, let setting):
                return "\(sender) sends more than \(Self.format(perSecond)) messages a second (\(setting))"
            case .slowBody(let sender, let rate):
                return "\(sender) sent a request body slower than \(rate) bytes a second: connection closed"
            case .slowMessage(let sender, let within):
                return "\(sender) did not end a line within \(within.nanoseconds / 1_000_000_000) s: connection closed"
            case .tooLong(let sender, let error):
                return "\(sender) sent \(error): connection closed"
            }
        }

        private static func format(_ value: Double) -> String {
            value == value.rounded() && value.magnitude < 1e9 ? String(Int64(value)) : String(value)
        }
    }

    public init(surface: String, policy: GuardPolicy, logger: Logger) {
        self.surface = surface
        self.policy = policy
        refusals = RefusalLog(surface: surface, logger: logger)
        state = Mutex(State(rates: policy.messageRate.map { SourceRateLimiter(perSecond: $0, burst: max($0, 1)) }))
    }

    /// Connections held now.
    public var openConnections: Int { state.withLock { $0.open.count } }

    /// Whether `address` may connect or send at all (the allow list).
    public func allows(_ address: NIOCore.SocketAddress?) -> Bool {
        guard let allow = policy.allow else { return true }
        guard let host = address?.ipAddress, let parsed = LockstepNet.SocketAddress(numericHost: host, port: 0) else {
            return false
        }
        return allow.contains { $0.contains(parsed) }
    }

    /// Whether one more message from `address` may be taken now: in the allow list, within the
    /// rate. A refusal is counted and logged; `via` names the input in the log.
    public func admitMessage(
        from address: NIOCore.SocketAddress?, via: String, now: NIODeadline = .now()
    ) -> Refusal? {
        let sender = Self.describe(address)
        guard allows(address) else {
            return refuse(.notAllowed(sender: sender, setting: policy.allowSetting), via: via, now: now)
        }
        let key = address?.ipAddress.flatMap { LockstepNet.SocketAddress(numericHost: $0, port: 0) }
        return withinRate(key ?? .ipv4Loopback(port: 0), sender: sender, via: via, now: now)
    }

    /// Whether one more message from a sender that proved who it is (a token holder over HTTP,
    /// which the allow list does not concern) may be taken now: every such sender shares one
    /// bucket of the rate.
    public func admitAuthenticatedMessage(via: String, now: NIODeadline = .now()) -> Refusal? {
        withinRate(.ipv4Any(port: 0), sender: "a token holder over \(via)", via: via, now: now)
    }

    private func withinRate(
        _ key: LockstepNet.SocketAddress, sender: String, via: String, now: NIODeadline
    ) -> Refusal? {
        let admitted = state.withLock { state -> Bool in
            guard state.rates != nil else { return true }
            return state.rates!.allows(key, at: Int64(now.uptimeNanoseconds))
        }
        guard admitted else {
            return refuse(
                .rateLimited(sender: sender, perSecond: policy.messageRate ?? 0, setting: policy.rateSetting), via: via,
                now: now)
        }
        return nil
    }

    /// Counts and logs `refusal`; returns it.
    @discardableResult
    public func refuse(_ refusal: Refusal, via: String, now: NIODeadline = .now()) -> Refusal {
        let sender: String
        switch refusal {
        case .notAllowed(let who, _), .tooManyFromSource(let who, _), .rateLimited(let who, _, _),
            .slowBody(let who, _),
            .slowMessage(let who, _), .tooLong(let who, _):
            sender = who
        case .full: sender = "a new connection"
        }
        refusals.refuse(via, sender, refusal.description, now: now)
        return refusal
    }

    /// Counts `channel` in, or says why not (its handler then refuses it). At a bound the oldest
    /// waiting connection (of the same address, at that address's bound) is closed in its favour.
    func open(_ channel: any Channel, via: String, now: NIODeadline) -> Refusal? {
        let address = channel.remoteAddress
        let sender = Self.describe(address)
        guard allows(address) else {
            return refuse(.notAllowed(sender: sender, setting: policy.allowSetting), via: via, now: now)
        }
        let source = address?.ipAddress ?? "local"
        let outcome = state.withLock { state -> Result<(any Channel)?, Refusal> in
            var evicted: Entry?
            let full = state.open.count >= policy.maximumConnections
            if state.perSource[source, default: 0] >= policy.maximumPerSource {
                guard let oldest = Self.oldestWaiting(in: state, from: source) else {
                    return .failure(
                        full
                            ? .full(surface: surface, most: policy.maximumConnections)
                            : .tooManyFromSource(sender: sender, most: policy.maximumPerSource))
                }
                evicted = Self.remove(oldest, from: &state)
            } else if full {
                guard let oldest = Self.oldestWaiting(in: state, from: nil) else {
                    return .failure(.full(surface: surface, most: policy.maximumConnections))
                }
                evicted = Self.remove(oldest, from: &state)
            }
            state.next += 1
            state.open[ObjectIdentifier(channel)] = Entry(
                order: state.next, channel: channel, source: source, waiting: true)
            state.perSource[source, default: 0] += 1
            return .success(evicted?.channel)
        }
        switch outcome {
        case .success(let evicted):
            evicted?.close(promise: nil)
            return nil
        case .failure(let refusal):
            return refuse(refusal, via: via, now: now)
        }
    }

    /// Whether `channel` waits for a message (and may make room for a newcomer).
    func waiting(_ channel: any Channel, _ waiting: Bool) {
        state.withLock { $0.open[ObjectIdentifier(channel)]?.waiting = waiting }
    }

    /// Counts `channel` out (once, whether it closed or was closed to make room).
    func closed(_ channel: any Channel) {
        state.withLock { state in
            guard let entry = state.open[ObjectIdentifier(channel)] else { return }
            _ = Self.remove(ObjectIdentifier(channel), entry, from: &state)
        }
    }

    private static func oldestWaiting(in state: State, from source: String?) -> (ObjectIdentifier, Entry)? {
        state.open.filter { $0.value.waiting && (source == nil || $0.value.source == source) }
            .min { $0.value.order < $1.value.order }.map { ($0.key, $0.value) }
    }

    private static func remove(_ found: (ObjectIdentifier, Entry), from state: inout State) -> Entry {
        remove(found.0, found.1, from: &state)
    }

    private static func remove(_ key: ObjectIdentifier, _ entry: Entry, from state: inout State) -> Entry {
        state.open[key] = nil
        let left = state.perSource[entry.source, default: 1] - 1
        state.perSource[entry.source] = left > 0 ? left : nil
        return entry
    }

    /// `HOST:PORT` (`[HOST]:PORT` for IPv6) of a sender, as refusals name it.
    public static func describe(_ address: NIOCore.SocketAddress?) -> String {
        guard let address else { return "an unknown sender" }
        guard let host = address.ipAddress, let port = address.port else { return "\(address)" }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
