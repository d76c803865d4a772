import Foundation
import LockstepLocks
import LockstepNet
import LockstepTime
import Logging
import NIOCore
import NIOPosix

/// Where a wall takes show-control messages, and from whom (`show-control:` in the config).
public struct ShowInputSettings: Sendable, Hashable {
    /// `HOST:PORT` for OSC over UDP.
    public var osc: String?
    /// `HOST:PORT` for plain strings over UDP, one command per datagram.
    public var udp: String?
    /// `HOST:PORT` for plain strings over TCP, one command per line; each is answered with a line.
    public var tcp: String?
    /// Who may send: none of these inputs takes a token, so only these addresses are heard.
    public var allow: [AddressRange]
    /// Commands a second from one sender, at most (a burst of as many is allowed).
    public var rate: Double

    public static let defaultAllow = [
        try! AddressRange(parsing: "127.0.0.0/8"), try! AddressRange(parsing: "::1"),
    ]
    public static let defaultRate = 10.0
    /// TCP connections held at once; a new one over this is closed at once.
    public static let mostConnections = 16

    public init(
        osc: String? = nil, udp: String? = nil, tcp: String? = nil, allow: [AddressRange] = Self.defaultAllow,
        rate: Double = Self.defaultRate
    ) {
        self.osc = osc
        self.udp = udp
        self.tcp = tcp
        self.allow = allow
        self.rate = rate
    }
}

/// One command as it arrived.
public struct ShowRequest: Sendable {
    public var command: ShowCommand
    /// Who sent it (`HOST:PORT`) and over what (`osc`, `udp`, `tcp`, `http`).
    public var sender: String
    public var via: String
    /// When it arrived, on this machine's monotonic clock.
    public var arrival: MediaTime
    /// The OSC bundle's time tag, as nanoseconds of UTC, when it named a time.
    public var timeTagUnixNanoseconds: Int64?

    public init(command: ShowCommand, sender: String, via: String, arrival: MediaTime, timeTagUnixNanoseconds: Int64? = nil) {
        self.command = command
        self.sender = sender
        self.via = via
        self.arrival = arrival
        self.timeTagUnixNanoseconds = timeTagUnixNanoseconds
    }
}

/// The show-control inputs: OSC over UDP, strings over UDP and over TCP. Each message is checked
/// (its sender in `allow`, within `rate`, well formed) and handed to `handler`, which queues it and
/// says whether it was taken; a refused one is a log line naming the sender and why (at most a few a
/// second, then a count), and nothing a sender does stops the input.
public final class ShowInput: Sendable {
    public typealias Handler = @Sendable (ShowRequest) -> ShowControlError?

    let settings: ShowInputSettings
    let handler: Handler
    let logger: Logger
    let limiter: RateLimiter
    let refusals: RefusalLog
    private let bound = Mutex<[String: Int]>([:])
    private let connections = Mutex(0)

    public init(settings: ShowInputSettings, logger: Logger, handler: @escaping Handler) {
        self.settings = settings
        self.handler = handler
        self.logger = logger
        limiter = RateLimiter(rate: settings.rate)
        refusals = RefusalLog(logger: logger)
    }

    /// Messages refused since the start, and commands taken.
    public var counts: (refused: Int, taken: Int) { refusals.counts }

    /// The port each input listens on (`osc`, `udp`, `tcp`), once it does.
    public var ports: [String: Int] { bound.withLock { $0 } }

    /// Listens on every configured input until the task is cancelled; `ready` hears once all listen.
    public func run(ready: @escaping @Sendable ([String: Int]) -> Void = { _ in }) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        var datagrams: [(String, NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>)] = []
        for (kind, address) in [("osc", settings.osc), ("udp", settings.udp)] {
            guard let address else { continue }
            let endpoint = try Endpoint(parsing: address)
            let channel = try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: endpoint.host, port: Int(endpoint.port)) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(
                            wrappingChannelSynchronously: channel)
                    }
                }
            bound.withLock { $0[kind] = channel.channel.localAddress?.port ?? 0 }
            datagrams.append((kind, channel))
        }
        var server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>?
        if let address = settings.tcp {
            let endpoint = try Endpoint(parsing: address)
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 16)
                .bind(host: endpoint.host, port: Int(endpoint.port)) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            bound.withLock { $0["tcp"] = channel.channel.localAddress?.port ?? 0 }
            server = channel
        }
        ready(ports)
        try await withThrowingDiscardingTaskGroup { group in
            for (kind, channel) in datagrams {
                group.addTask { try await self.receive(kind, channel) }
            }
            if let server {
                group.addTask { try await self.accept(server) }
            }
        }
    }

    private func receive(
        _ kind: String, _ channel: NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>
    ) async throws {
        try await withTaskCancellationHandler {
            try await channel.executeThenClose { inbound, _ in
                for try await envelope in inbound {
                    let arrival = LocalClock.monotonic.now()
                    let bytes = Array(envelope.data.readableBytesView)
                    if kind == "osc" {
                        take(osc: bytes, from: envelope.remoteAddress, arrival: arrival)
                    } else {
                        _ = take(line: bytes, from: envelope.remoteAddress, via: "udp", arrival: arrival)
                    }
                }
            }
        } onCancel: {
            channel.channel.close(promise: nil)
        }
    }

    /// One OSC datagram: each message in it, in order.
    func take(osc bytes: [UInt8], from address: NIOCore.SocketAddress, arrival: MediaTime) {
        let sender = Self.describe(address)
        guard admit(address, sender: sender, via: "osc") else { return }
        let packet: OSCPacket
        do {
            packet = try OSCPacket(decoding: bytes)
        } catch {
            refusals.refuse("osc", sender, "\(error)")
            return
        }
        for (message, timeTag) in packet.messages {
            do {
                guard let command = try ShowCommand(osc: message) else { continue }
                hand(ShowRequest(
                    command: command, sender: sender, via: "osc", arrival: arrival,
                    timeTagUnixNanoseconds: timeTag?.unixNanoseconds))
            } catch {
                refusals.refuse("osc", sender, "\(error)")
            }
        }
    }

    /// One line (or datagram) of text: the answer for a TCP sender.
    func take(line bytes: [UInt8], from address: NIOCore.SocketAddress, via: String, arrival: MediaTime) -> String {
        let sender = Self.describe(address)
        guard admit(address, sender: sender, via: via) else { return "ERR refused" }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            refusals.refuse(via, sender, "\(ShowControlError.malformed("a line that is not UTF-8"))")
            return "ERR not UTF-8"
        }
        do {
            let command = try ShowCommand(line: Substring(text))
            if let refused = hand(ShowRequest(command: command, sender: sender, via: via, arrival: arrival)) {
                return "ERR \(refused)"
            }
            return "OK \(command)"
        } catch {
            refusals.refuse(via, sender, "\(error)")
            return "ERR \(error)"
        }
    }

    /// Whether `address` may send now (in `allow`, within `rate`); logs a refusal.
    private func admit(_ address: NIOCore.SocketAddress, sender: String, via: String) -> Bool {
        guard let host = address.ipAddress, let parsed = LockstepNet.SocketAddress(numericHost: host, port: 0),
            settings.allow.contains(where: { $0.contains(parsed) })
        else {
            refusals.refuse(via, sender, "\(ShowControlError.notAllowed(sender))")
            return false
        }
        guard limiter.admit(host, now: LocalClock.monotonic.now()) else {
            refusals.refuse(via, sender, "\(ShowControlError.rateLimited(sender))")
            return false
        }
        return true
    }

    @discardableResult
    private func hand(_ request: ShowRequest) -> ShowControlError? {
        if let refused = handler(request) {
            refusals.refuse(request.via, request.sender, "\(refused)")
            return refused
        }
        refusals.taken()
        logger.info(
            "show control: \(request.command)",
            metadata: ["show.sender": "\(request.sender)", "show.via": "\(request.via)"])
        return nil
    }

    private func accept(_ server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>) async throws {
        try await withTaskCancellationHandler {
            try await server.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        let admitted = connections.withLock { count in
                            guard count < ShowInputSettings.mostConnections else { return false }
                            count += 1
                            return true
                        }
                        guard admitted else {
                            refusals.refuse(
                                "tcp", connection.channel.remoteAddress.map(Self.describe) ?? "?",
                                "over \(ShowInputSettings.mostConnections) connections at once")
                            connection.channel.close(promise: nil)
                            continue
                        }
                        group.addTask {
                            defer { self.connections.withLock { $0 -= 1 } }
                            try? await self.serve(connection)
                        }
                    }
                }
            }
        } onCancel: {
            server.channel.close(promise: nil)
        }
    }

    /// Reads lines from one TCP sender and answers each; a line over 256 bytes ends the connection.
    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async throws {
        guard let address = connection.channel.remoteAddress else { return }
        try await connection.executeThenClose { inbound, outbound in
            var pending: [UInt8] = []
            for try await chunk in inbound {
                pending += chunk.readableBytesView
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(pending[..<end])
                    pending.removeSubrange(...end)
                    if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                    let answer = take(line: line, from: address, via: "tcp", arrival: LocalClock.monotonic.now())
                    try await outbound.write(ByteBuffer(string: answer + "\n"))
                }
                if pending.count > 256 {
                    refusals.refuse("tcp", Self.describe(address), "a line over 256 bytes: connection closed")
                    try await outbound.write(ByteBuffer(string: "ERR line too long\n"))
                    return
                }
            }
        }
    }

    static func describe(_ address: NIOCore.SocketAddress) -> String {
        guard let host = address.ipAddress, let port = address.port else { return "\(address)" }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// A token bucket per sender: `rate` commands a second, bursts of as many. It remembers a bounded
/// number of senders, forgetting those whose buckets are full again first.
final class RateLimiter: Sendable {
    let rate: Double
    static let mostSenders = 1024
    private let buckets = Mutex<[String: (tokens: Double, at: MediaTime)]>([:])

    init(rate: Double) { self.rate = rate }

    func admit(_ sender: String, now: MediaTime) -> Bool {
        buckets.withLock { buckets in
            let burst = max(rate, 1)
            var bucket = buckets[sender] ?? (burst, now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.at).seconds * rate)
            bucket.at = now
            let admitted = bucket.tokens >= 1
            if admitted { bucket.tokens -= 1 }
            if buckets[sender] == nil, buckets.count >= Self.mostSenders {
                buckets = buckets.filter { $0.value.tokens + (now - $0.value.at).seconds * rate < burst }
                if buckets.count >= Self.mostSenders { buckets.removeAll() }
            }
            buckets[sender] = bucket
            return admitted
        }
    }
}

/// Refusals as log lines: the first few of every 10 s each named, then how many more there were, so
/// a flood of bad messages cannot flood the log.
final class RefusalLog: Sendable {
    let logger: Logger
    static let linesPerWindow = 10
    static let window = MediaTime(value: 10, timescale: 1)
    private struct State {
        var windowStart = MediaTime.zero
        var inWindow = 0
        var refused = 0
        var taken = 0
    }
    private let state = Mutex(State())

    init(logger: Logger) { self.logger = logger }

    var counts: (refused: Int, taken: Int) { state.withLock { ($0.refused, $0.taken) } }

    func taken() { state.withLock { $0.taken += 1 } }

    func refuse(_ via: String, _ sender: String, _ reason: String) {
        let now = LocalClock.monotonic.now()
        let (log, unlogged) = state.withLock { state -> (Bool, Int) in
            state.refused += 1
            var unlogged = 0
            if now - state.windowStart >= Self.window {
                unlogged = max(0, state.inWindow - Self.linesPerWindow)
                state.windowStart = now
                state.inWindow = 0
            }
            state.inWindow += 1
            return (state.inWindow <= Self.linesPerWindow, unlogged)
        }
        if unlogged > 0 {
            logger.warning("show control: \(unlogged) more messages refused in the last \(Self.window.seconds) s")
        }
        if log {
            logger.warning(
                "show control: refused \(via) from \(sender): \(reason)",
                metadata: ["show.sender": "\(sender)", "show.via": "\(via)"])
        }
    }
}
