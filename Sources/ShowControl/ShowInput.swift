import Foundation
import LockstepGuard
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
    /// How far ahead a cue every node holds in standby takes effect, fixed; nil (the default):
    /// measured from the cuts the nodes made (`CueControl`).
    public var cueLead: MediaTime?

    public static let defaultAllow = [
        try! AddressRange(parsing: "127.0.0.0/8"), try! AddressRange(parsing: "::1"),
    ]
    public static let defaultRate = 10.0
    /// TCP connections held at once, and from one address: past either, the oldest idle one makes
    /// room; a new one is refused only when every one is in the middle of a line.
    public static let mostConnections = 16
    public static let mostConnectionsPerSender = 4
    /// How long a TCP connection may stay silent: show-control senders (QLab, Companion) keep one
    /// open between cues and connect again when it closes.
    public static let idleDeadline = 300
    /// The longest line a TCP or UDP sender may send, in bytes.
    public static let longestLine = 256

    public init(
        osc: String? = nil, udp: String? = nil, tcp: String? = nil, allow: [AddressRange] = Self.defaultAllow,
        rate: Double = Self.defaultRate, cueLead: MediaTime? = nil
    ) {
        self.osc = osc
        self.udp = udp
        self.tcp = tcp
        self.allow = allow
        self.rate = rate
        self.cueLead = cueLead
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

    public init(
        command: ShowCommand, sender: String, via: String, arrival: MediaTime, timeTagUnixNanoseconds: Int64? = nil
    ) {
        self.command = command
        self.sender = sender
        self.via = via
        self.arrival = arrival
        self.timeTagUnixNanoseconds = timeTagUnixNanoseconds
    }
}

/// The show-control inputs: OSC over UDP, strings over UDP and over TCP. One `ConnectionGuard`
/// guards them all: a sender outside `allow` is refused when it connects (and for each datagram),
/// every message counts against `rate` (each message of an OSC bundle too), and TCP connections
/// are bounded in all and per sender, closed when idle, when a line takes too long or grows too
/// long. What passes is checked (well formed) and handed to `handler`, which queues it and says
/// whether it was taken; a refused one is a log line naming the sender and why (at most a few a
/// second, then a count), and nothing a sender does stops the input.
public final class ShowInput: Sendable {
    public typealias Handler = @Sendable (ShowRequest) -> ShowControlError?

    let settings: ShowInputSettings
    let handler: Handler
    let logger: Logger
    /// The guard of every input, and of the daemon's HTTP show-control routes.
    public let connections: ConnectionGuard
    private let bound = Mutex<[String: Int]>([:])
    private let channels = Mutex<[any Channel]>([])

    public init(settings: ShowInputSettings, logger: Logger, handler: @escaping Handler) {
        self.settings = settings
        self.handler = handler
        self.logger = logger
        connections = ConnectionGuard(
            surface: "show control",
            policy: GuardPolicy(
                allow: settings.allow, maximumConnections: ShowInputSettings.mostConnections,
                maximumPerSource: ShowInputSettings.mostConnectionsPerSender,
                idleDeadline: .seconds(Int64(ShowInputSettings.idleDeadline)), messageDeadline: .seconds(10),
                messageRate: settings.rate, allowSetting: "show-control.allow", rateSetting: "show-control.rate"),
            logger: logger)
    }

    /// Messages refused since the start, and commands taken.
    public var counts: (refused: Int, taken: Int) { connections.refusals.counts }

    /// The port each input listens on (`osc`, `udp`, `tcp`), once it does.
    public var ports: [String: Int] { bound.withLock { $0 } }

    /// Binds every configured input, or throws a sentence naming the one that cannot listen (and
    /// closes those already bound). Returns the ports.
    @discardableResult
    public func listen() async throws(ShowControlError) -> [String: Int] {
        if !channels.withLock({ $0.isEmpty }) { return ports }
        let group = MultiThreadedEventLoopGroup.singleton
        let inputs: [(String, String?)] = [("osc", settings.osc), ("udp", settings.udp), ("tcp", settings.tcp)]
        for (kind, address) in inputs {
            guard let address else { continue }
            do {
                let endpoint = try Endpoint(parsing: address)
                let channel: any Channel
                if kind == "tcp" {
                    channel = try await ServerBootstrap(group: group)
                        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                        .serverChannelOption(.backlog, value: Int32(ShowInputSettings.mostConnections))
                        .childChannelInitializer { [self] channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandlers(
                                    LineGuardHandler(guard: connections, longestLine: ShowInputSettings.longestLine),
                                    LineInput(input: self))
                            }
                        }
                        .bind(host: endpoint.host, port: Int(endpoint.port)).get()
                } else {
                    channel = try await DatagramBootstrap(group: group)
                        .channelOption(.socketOption(.so_reuseaddr), value: 1)
                        // Whole datagrams up to past the largest OSC packet taken (NIO reads 2 KiB by
                        // default and would cut a larger bundle, which then reads as malformed).
                        .channelOption(
                            .recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: OSCPacket.largestSize + 1)
                        )
                        .channelInitializer { [self] channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(DatagramInput(input: self, kind: kind))
                            }
                        }
                        .bind(host: endpoint.host, port: Int(endpoint.port)).get()
                }
                channels.withLock { $0.append(channel) }
                bound.withLock { $0[kind] = channel.localAddress?.port ?? 0 }
            } catch {
                close()
                throw .cannotListen(input: "show-control.\(kind)", address: address, reason: Self.reason(error))
            }
        }
        return ports
    }

    /// Listens on every configured input (if `listen` has not) until the task is cancelled;
    /// `ready` hears once all listen.
    public func run(ready: @escaping @Sendable ([String: Int]) -> Void = { _ in }) async throws {
        ready(try await listen())
        defer { close() }
        let (cancelled, stop) = AsyncStream.makeStream(of: Void.self)
        await withTaskCancellationHandler {
            for await _ in cancelled {}
        } onCancel: {
            stop.finish()
        }
    }

    /// Closes every input.
    func close() {
        for channel in channels.withLock({ channels in
            defer { channels.removeAll() }; return channels
        }) {
            channel.close(promise: nil)
        }
    }

    /// One OSC datagram: each message in it, in order, each counted against the rate.
    func take(osc bytes: [UInt8], from address: NIOCore.SocketAddress, arrival: MediaTime) {
        let sender = ConnectionGuard.describe(address)
        guard connections.allows(address) else {
            connections.refuse(.notAllowed(sender: sender, setting: connections.policy.allowSetting), via: "osc")
            return
        }
        let packet: OSCPacket
        do {
            packet = try OSCPacket(decoding: bytes)
        } catch {
            connections.refusals.refuse("osc", sender, "\(error)")
            return
        }
        for (message, timeTag) in packet.messages {
            guard connections.admitMessage(from: address, via: "osc") == nil else { continue }
            do {
                guard let command = try ShowCommand(osc: message) else { continue }
                hand(
                    ShowRequest(
                        command: command, sender: sender, via: "osc", arrival: arrival,
                        timeTagUnixNanoseconds: timeTag?.unixNanoseconds))
            } catch {
                connections.refusals.refuse("osc", sender, "\(error)")
            }
        }
    }

    /// One line (or datagram) of text: the answer for a TCP sender.
    func take(line bytes: [UInt8], from address: NIOCore.SocketAddress?, via: String, arrival: MediaTime) -> String {
        let sender = ConnectionGuard.describe(address)
        if let refusal = connections.admitMessage(from: address, via: via) { return "ERR \(refusal)" }
        guard bytes.count <= ShowInputSettings.longestLine else {
            let error = ShowControlError.malformed("a line over \(ShowInputSettings.longestLine) bytes")
            connections.refusals.refuse(via, sender, "\(error)")
            return "ERR \(error)"
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            connections.refusals.refuse(via, sender, "\(ShowControlError.malformed("a line that is not UTF-8"))")
            return "ERR not UTF-8"
        }
        do {
            let command = try ShowCommand(line: Substring(text))
            if let refused = hand(ShowRequest(command: command, sender: sender, via: via, arrival: arrival)) {
                return "ERR \(refused)"
            }
            return "OK \(command)"
        } catch {
            connections.refusals.refuse(via, sender, "\(error)")
            return "ERR \(error)"
        }
    }

    @discardableResult
    private func hand(_ request: ShowRequest) -> ShowControlError? {
        if let refused = handler(request) {
            connections.refusals.refuse(request.via, request.sender, "\(refused)")
            return refused
        }
        connections.refusals.taken()
        logger.info(
            "show control: \(request.command)",
            metadata: ["show.sender": "\(request.sender)", "show.via": "\(request.via)"])
        return nil
    }

    /// What a failed bind says, without NIO's wording ("bind(descriptor:ptr:bytes:): Address
    /// already in use (errno: 98)").
    static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}

/// A datagram input's handler: each datagram to its input.
private final class DatagramInput: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let input: ShowInput
    let kind: String

    init(input: ShowInput, kind: String) {
        self.input = input
        self.kind = kind
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let arrival = LocalClock.monotonic.now()
        let bytes = Array(envelope.data.readableBytesView)
        if kind == "osc" {
            input.take(osc: bytes, from: envelope.remoteAddress, arrival: arrival)
        } else {
            _ = input.take(line: bytes, from: envelope.remoteAddress, via: "udp", arrival: arrival)
        }
    }

    /// A datagram socket's errors (an ICMP refusal echoed back) end nothing.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}
}

/// A TCP connection's handler, behind its `LineGuardHandler`: each line answered with a line.
private final class LineInput: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let input: ShowInput

    init(input: ShowInput) {
        self.input = input
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = Array(unwrapInboundIn(data).readableBytesView)
        let answer = input.take(
            line: line, from: context.channel.remoteAddress, via: "tcp", arrival: LocalClock.monotonic.now())
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer + "\n")), promise: nil)
    }

    /// A peer that resets its connection ends only that connection.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
