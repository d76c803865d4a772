import HTTPTypes
import LockstepNet
import NIOCore
import NIOHTTPTypes

#if canImport(Glibc)
    import Glibc
#endif

/// A `ConnectionGuard` on one HTTP/1.1 connection: counted in when it opens (closed at once when
/// its address is not allowed), closed when the next request's head has not arrived whole within
/// the idle deadline of the connection opening or of the previous response (idle and slowloris
/// connections), and closed when a request body falls below the minimum rate over a window. A
/// response being written has no deadline (the console's event stream lasts as long as the page).
/// A connection refused for want of room gets a 503 that says why, then is closed.
///
/// The answers to GET requests for a bulk path (content) leave marked as bulk traffic (DSCP CS1 and the
/// lowest socket priority), every other answer unmarked: a transfer never queues ahead of the
/// clock's datagrams or the control answers behind it.
public final class HTTPGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private var connection: GuardedConnection
    /// Body bytes received in the current window.
    private var bodyBytes = 0
    /// Whether a request is arriving (its head came, its end not yet), and whether its response
    /// is being written (a response may end before its request does: a refusal of an upload).
    private var requestOpen = false
    private var responseOpen = false

    /// The path prefixes whose answers are bulk traffic.
    private let bulkPaths: [String]
    /// The class the connection's socket is marked with now: nil, unmarked.
    private var marked: TrafficClass?

    public init(guard connections: ConnectionGuard, bulkPaths: [String] = []) {
        connection = GuardedConnection(guard: connections)
        self.bulkPaths = bulkPaths
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if connection.added(context, via: "http") { start(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        connection.removed(context)
    }

    /// Once the connection is up: closes one not allowed, and times the wait for the first request.
    private func start(_ context: ChannelHandlerContext) {
        guard connection.starts() else { return }
        if case .notAllowed = connection.refusal {
            context.close(promise: nil)
            return
        }
        connection.closeAfter(context, connection.connections.policy.idleDeadline)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if let refusal = connection.refusal {
            if case .head = part { refuse(context, refusal) }
            return
        }
        switch part {
        case .head(let request):
            let path = request.path ?? ""
            let bulk = request.method == .get && bulkPaths.contains { path.hasPrefix($0) }
            mark(context, bulk ? .bulk : nil)
            requestOpen = true
            responseOpen = true
            connection.waiting(context, false)
            bodyBytes = 0
            armBodyWindow(context)
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
        case .end:
            requestOpen = false
            // Being answered has no deadline; answered already, the connection waits for the next.
            if responseOpen {
                connection.disarm()
            } else {
                connection.closeAfter(context, connection.connections.policy.idleDeadline)
            }
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), connection.refusal == nil {
            // Answered: until the next request arrives, the connection waits and may make room. A
            // body still arriving keeps its rate's deadline.
            responseOpen = false
            connection.waiting(context, true)
            if !requestOpen { connection.closeAfter(context, connection.connections.policy.idleDeadline) }
        }
        context.write(data, promise: promise)
    }

    /// Marks what the socket sends from now on with `trafficClass` (nil: unmarked, priority 0).
    /// Marking is a preference to the network, not a condition of serving: a socket that refuses
    /// it sends unmarked.
    private func mark(_ context: ChannelHandlerContext, _ trafficClass: TrafficClass?) {
        guard trafficClass != marked, let options = context.channel.syncOptions else { return }
        marked = trafficClass
        let tos = SocketOptionValue(trafficClass.map { Int32($0.codePoint) << 2 } ?? 0)
        let priority = SocketOptionValue(trafficClass?.socketPriority ?? 0)
        let set = { (level: Int32, name: Int32, value: SocketOptionValue) in
            _ = try? options.setOption(
                ChannelOptions.Types.SocketOption(
                    level: NIOBSDSocket.OptionLevel(rawValue: level), name: NIOBSDSocket.Option(rawValue: name)),
                value: value)
        }
        // An IPv6 socket carries IPv4 peers too (mapped): both fields are set on it.
        if context.channel.localAddress?.protocol == .inet6 {
            set(Int32(IPPROTO_IPV6), IPV6_TCLASS, tos)
        }
        set(Int32(IPPROTO_IP), IP_TOS, tos)
        set(SOL_SOCKET, SO_PRIORITY, priority)
    }

    /// Closes the connection unless the body keeps up the minimum rate over each window.
    private func armBodyWindow(_ context: ChannelHandlerContext) {
        let connections = connection.connections
        let policy = connections.policy
        connection.arm(context, in: policy.messageDeadline) { [self] context in
            let least = Int64(policy.minimumBodyRate) * policy.messageDeadline.nanoseconds / 1_000_000_000
            guard Int64(bodyBytes) >= least else {
                connections.refuse(
                    .slowBody(
                        sender: ConnectionGuard.describe(context.channel.remoteAddress),
                        bytesPerSecond: policy.minimumBodyRate),
                    via: "http", now: context.eventLoop.now)
                context.close(promise: nil)
                return
            }
            bodyBytes = 0
            armBodyWindow(context)
        }
    }

    private func refuse(_ context: ChannelHandlerContext, _ refusal: ConnectionGuard.Refusal) {
        let text = #"{"ok":false,"error":"\#(refusal)"}"#
        var body = context.channel.allocator.buffer(capacity: text.utf8.count)
        body.writeString(text)
        var head = HTTPResponse(status: .serviceUnavailable)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = "\(body.readableBytes)"
        head.headerFields[.connection] = "close"
        head.headerFields[.retryAfter] = "1"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
