import NIOCore

/// What a guard's handler keeps of its one connection: whether the guard counted it in (or why
/// it refused it), whether the connection is up, and its one deadline. Both handlers
/// (`HTTPGuardHandler`, `LineGuardHandler`) keep one and differ only in how they read messages.
struct GuardedConnection {
    let connections: ConnectionGuard
    /// Why the guard refused the connection; nil once counted in.
    private(set) var refusal: ConnectionGuard.Refusal?
    private var counted = false
    private var started = false
    private var timer: Scheduled<Void>?

    init(guard connections: ConnectionGuard) {
        self.connections = connections
    }

    /// The handler was added: asks the guard, and says whether the connection is up already (the
    /// handler then starts it at once, else on `channelActive`).
    mutating func added(_ context: ChannelHandlerContext, via: String) -> Bool {
        refusal = connections.open(context.channel, via: via, now: context.eventLoop.now)
        counted = refusal == nil
        return context.channel.isActive
    }

    /// Whether this is the connection's start (the first call once it is up).
    mutating func starts() -> Bool {
        defer { started = true }
        return !started
    }

    /// The handler was removed: the deadline goes, and the guard counts the connection out.
    mutating func removed(_ context: ChannelHandlerContext) {
        disarm()
        if counted { connections.closed(context.channel) }
        counted = false
    }

    /// Refuses the connection from now on (what it sent broke a bound).
    mutating func refuse(_ refusal: ConnectionGuard.Refusal) {
        self.refusal = refusal
    }

    /// Whether the connection waits for a message, and may make room.
    func waiting(_ context: ChannelHandlerContext, _ waiting: Bool) {
        guard refusal == nil else { return }
        connections.waiting(context.channel, waiting)
    }

    /// Runs `action` after `delay`, in place of the deadline armed before.
    mutating func arm(
        _ context: ChannelHandlerContext, in delay: TimeAmount, _ action: @escaping (ChannelHandlerContext) -> Void
    ) {
        timer?.cancel()
        let bound = NIOLoopBound((context, action), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: delay) { bound.value.1(bound.value.0) }
    }

    /// Closes the connection after `delay` unless re-armed.
    mutating func closeAfter(_ context: ChannelHandlerContext, _ delay: TimeAmount) {
        arm(context, in: delay) { context in context.close(promise: nil) }
    }

    mutating func disarm() {
        timer?.cancel()
        timer = nil
    }
}
