import NIOCore

/// A `ConnectionGuard` on one connection that carries lines of text (show control over TCP): it
/// counts the connection in when it opens, or answers a refused one with `ERR` and the reason and
/// closes it; it hands each line on (without its end) and closes the connection when a line grows
/// past the reader's bound, when a line begun is not ended within the message deadline, and when
/// nothing arrives for the idle deadline after the last answer.
public final class LineGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private var connection: GuardedConnection
    private var reader: LineReader
    /// When the line being received began.
    private var lineStart: NIODeadline?

    public init(guard connections: ConnectionGuard, longestLine: Int) {
        connection = GuardedConnection(guard: connections)
        reader = LineReader(longest: longestLine)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if connection.added(context, via: "tcp") { start(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        connection.removed(context)
    }

    /// Once the connection is up: answers a refused one and closes it, or times the first line.
    private func start(_ context: ChannelHandlerContext) {
        guard connection.starts() else { return }
        if let refusal = connection.refusal {
            end(context, saying: "ERR \(refusal)")
        } else {
            armIdle(context)
        }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard connection.refusal == nil else { return }
        let connections = connection.connections
        let lines: [[UInt8]]
        do {
            lines = try reader.feed(unwrapInboundIn(data).readableBytesView)
        } catch {
            let sender = ConnectionGuard.describe(context.channel.remoteAddress)
            connection.refuse(
                connections.refuse(.tooLong(sender: sender, error), via: "tcp", now: context.eventLoop.now))
            end(context, saying: "ERR line too long (at most \(error.longest) bytes)")
            return
        }
        for line in lines {
            connection.waiting(context, false)
            context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: line)))
        }
        if reader.hasPartialLine {
            // A line begun must end within the message deadline, however slowly it trickles in.
            if lineStart == nil {
                lineStart = context.eventLoop.now
                connection.arm(context, in: connections.policy.messageDeadline) { context in
                    let sender = ConnectionGuard.describe(context.channel.remoteAddress)
                    connections.refuse(
                        .slowMessage(sender: sender, within: connections.policy.messageDeadline), via: "tcp",
                        now: context.eventLoop.now)
                    context.close(promise: nil)
                }
            }
        } else {
            lineStart = nil
            armIdle(context)
        }
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if connection.refusal == nil {
            // Answered: until the next line, the connection waits and may make room.
            connection.waiting(context, true)
            if lineStart == nil { armIdle(context) }
        }
        context.write(data, promise: promise)
    }

    private func armIdle(_ context: ChannelHandlerContext) {
        connection.closeAfter(context, connection.connections.policy.idleDeadline)
    }

    /// Writes `line` and closes the connection once it is written.
    private func end(_ context: ChannelHandlerContext, saying line: String) {
        connection.disarm()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: line + "\n"))).whenComplete {
            _ in bound.value.close(promise: nil)
        }
    }
}
