import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A `ConnectionGuard` on one HTTP/1.1 connection: counted in when it opens (closed at once when
/// its address is not allowed), closed when the next request's head has not arrived whole within
/// the idle deadline of the connection opening or of the previous response (idle and slowloris
/// connections), and closed when a request body falls below the minimum rate over a window. A
/// response being written has no deadline (the console's event stream lasts as long as the page).
/// A connection refused for want of room gets a 503 that says why, then is closed.
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

    public init(guard connections: ConnectionGuard) {
        connection = GuardedConnection(guard: connections)
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
        case .head:
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
