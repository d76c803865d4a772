import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Bounds what one client can hold of the control API: each request must arrive whole within
/// `requestDeadline` of the connection opening (or of the previous response), so idle and
/// slowloris connections are closed; and past `maximumConnections` open at once, a new connection
/// gets a 503 saying so and is closed, instead of a file descriptor for as long as it likes.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What every connection's guard shares: the limits and the count of open connections.
    final class Limits: Sendable {
        let maximumConnections: Int
        let requestDeadline: TimeAmount
        private let open = Atomic<Int>(0)

        init(maximumConnections: Int, requestDeadline: TimeAmount) {
            self.maximumConnections = maximumConnections
            self.requestDeadline = requestDeadline
        }

        /// Counts a connection in; whether it is within the limit.
        fileprivate func opened() -> Bool {
            open.add(1, ordering: .relaxed).newValue <= maximumConnections
        }

        fileprivate func closed() {
            open.subtract(1, ordering: .relaxed)
        }
    }

    private let limits: Limits
    private var admitted = false
    private var counted = false
    private var deadline: Scheduled<Void>?

    init(limits: Limits) {
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        admitted = limits.opened()
        arm(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted { limits.closed() }
        counted = false
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard admitted else {
            if case .head = part { refuse(context) }
            return
        }
        if case .end = part {
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { arm(context) }
        context.write(data, promise: promise)
    }

    /// Closes the connection unless the next request has arrived whole by the deadline.
    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: limits.requestDeadline) { bound.value.close(promise: nil) }
    }

    private func refuse(_ context: ChannelHandlerContext) {
        let text =
            #"{"ok":false,"error":"too many control connections are open (at most \#(limits.maximumConnections)): try again"}"#
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
