import HTTPTypes
import LockstepLocks
import NIOCore
import NIOHTTPTypes

/// Bounds what one client can hold of the control API: each request must arrive whole within
/// `requestDeadline` of the connection opening (or of the previous response), so idle and
/// slowloris connections are closed; and past `maximumConnections` open at once, the oldest
/// connection that is waiting for a request (idle, or sending one slowly) is closed to make room, so
/// a flood of idle connections never locks out a client with something to ask (the token's holder
/// among them). Only when every open connection is being served does a new one get a 503 saying so.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What every connection's guard shares: the limits and the open connections.
    final class Limits: Sendable {
        let maximumConnections: Int
        let requestDeadline: TimeAmount
        private let open = Mutex<Registry>(Registry())

        /// The open connections, in the order they opened, and whether each is waiting for a request.
        private struct Registry {
            var next: UInt64 = 0
            var connections: [ObjectIdentifier: (order: UInt64, channel: any Channel, waiting: Bool)] = [:]
        }

        init(maximumConnections: Int, requestDeadline: TimeAmount) {
            self.maximumConnections = maximumConnections
            self.requestDeadline = requestDeadline
        }

        /// Counts a connection in; whether it is admitted. At the limit the oldest connection waiting
        /// for a request is closed in its favour; with none waiting it is not admitted.
        fileprivate func opened(_ channel: any Channel) -> Bool {
            let evicted = open.withLock { registry -> (any Channel)?? in
                var evicted: (any Channel)?
                if registry.connections.count >= maximumConnections {
                    guard
                        let oldest = registry.connections.filter({ $0.value.waiting }).min(by: {
                            $0.value.order < $1.value.order
                        })
                    else { return .none }
                    registry.connections[oldest.key] = nil
                    evicted = oldest.value.channel
                }
                registry.next += 1
                registry.connections[ObjectIdentifier(channel)] = (registry.next, channel, true)
                return .some(evicted)
            }
            guard let evicted else { return false }
            evicted?.close(promise: nil)
            return true
        }

        fileprivate func waiting(_ channel: any Channel, _ waiting: Bool) {
            open.withLock { registry in
                registry.connections[ObjectIdentifier(channel)]?.waiting = waiting
            }
        }

        fileprivate func closed(_ channel: any Channel) {
            open.withLock { registry in registry.connections[ObjectIdentifier(channel)] = nil }
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
        admitted = limits.opened(context.channel)
        arm(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted { limits.closed(context.channel) }
        counted = false
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard admitted else {
            if case .head = part { refuse(context) }
            return
        }
        switch part {
        case .head: limits.waiting(context.channel, false)
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // Answered: until the next request arrives, the connection waits and may make room.
            limits.waiting(context.channel, true)
            arm(context)
        }
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
            #"{"ok":false,"error":"too many control connections are being served (at most \#(limits.maximumConnections)): try again"}"#
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
