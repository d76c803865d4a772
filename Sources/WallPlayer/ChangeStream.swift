import LockstepLocks

/// An observable value whose changes are delivered, in order, to any number of async subscribers:
/// WallPlayer's replacement for key-value observing.
///
/// Each subscriber's stream starts with the value current when it subscribed, then receives every
/// later change in the order the changes were made. Values are whole snapshots, so a subscriber
/// never sees a partial update.
public final class ChangeStream<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var subscribers = Subscribers<Value>()
        /// A value set by `stage` and not yet delivered.
        var staged = false
    }

    private let state: Mutex<State>

    init(_ initial: Value) {
        state = Mutex(State(value: initial))
    }

    /// The current value.
    public var value: Value { state.withLock { $0.value } }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// A stream of the current value followed by every change.
    public func values() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .unbounded)
        state.withLock { state in
            state.subscribers.add(continuation)
            continuation.yield(state.value)
        }
        return stream
    }

    /// Sets the value and delivers it to every subscriber, under one lock so order is preserved.
    func send(_ value: Value) {
        state.withLock { state in
            state.value = value
            state.subscribers.yield(value)
        }
    }

    /// Sets the value only when it differs, returning whether it changed.
    @discardableResult
    func update(_ value: Value) -> Bool where Value: Equatable {
        state.withLock { state in
            guard state.value != value else { return false }
            state.value = value
            state.staged = false
            state.subscribers.yield(value)
            return true
        }
    }

    /// Sets the value, when it differs, without telling subscribers yet: `deliverStaged()` does.
    /// For values that change together (a player's rate and its time control status), so that all
    /// are in place before any subscriber hears of one.
    func stage(_ value: Value) where Value: Equatable {
        state.withLock { state in
            guard state.value != value else { return }
            state.value = value
            state.staged = true
        }
    }

    /// Delivers the value `stage` set, if no later `update` delivered one since.
    func deliverStaged() {
        state.withLock { state in
            guard state.staged else { return }
            state.staged = false
            state.subscribers.yield(state.value)
        }
    }

    deinit {
        state.withLock { $0.subscribers.finishAll() }
    }
}

/// A stream of events (not values): subscribers get the events sent after they subscribed.
public final class EventStream<Event: Sendable>: Sendable {
    private let subscribers = Mutex(Subscribers<Event>())
    private let bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy

    init(bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded) {
        self.bufferingPolicy = bufferingPolicy
    }

    var subscriberCount: Int { subscribers.withLock { $0.count } }

    /// A stream of the events sent from now on.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: bufferingPolicy)
        subscribers.withLock { $0.add(continuation) }
        return stream
    }

    func send(_ event: Event) {
        subscribers.withLock { $0.yield(event) }
    }

    deinit {
        subscribers.withLock { $0.finishAll() }
    }
}

/// The continuations of one stream's subscribers, kept under its owner's lock.
///
/// Delivering under that lock keeps every subscriber's order, but then nothing the Swift runtime
/// calls while it holds a task's own lock may take it: the runtime resumes a waiting subscriber
/// (taking that task's status lock) inside `yield`, and calls `onTermination` with the status lock
/// held when the task is cancelled. So a subscriber that ends only raises its flag, without a lock,
/// and is dropped at the next add or delivery.
private struct Subscribers<Element: Sendable> {
    private var all: [(continuation: AsyncStream<Element>.Continuation, ended: EndFlag)] = []

    var count: Int { all.count }

    mutating func add(_ continuation: AsyncStream<Element>.Continuation) {
        dropEnded()
        let ended = EndFlag()
        continuation.onTermination = { _ in ended.raise() }
        all.append((continuation, ended))
    }

    mutating func yield(_ element: Element) {
        dropEnded()
        for subscriber in all { subscriber.continuation.yield(element) }
    }

    func finishAll() {
        for subscriber in all { subscriber.continuation.finish() }
    }

    private mutating func dropEnded() {
        all.removeAll { $0.ended.isRaised }
    }
}

/// Raised once, from any thread, without a lock.
private final class EndFlag: Sendable {
    private let raised = Atomic(false)

    func raise() { raised.store(true, ordering: .releasing) }
    var isRaised: Bool { raised.load(ordering: .acquiring) }
}
