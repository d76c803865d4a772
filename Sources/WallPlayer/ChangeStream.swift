import Synchronization

/// An observable value whose changes are delivered, in order, to any number of async subscribers:
/// WallPlayer's replacement for key-value observing.
///
/// Each subscriber's stream starts with the value current when it subscribed, then receives every
/// later change in the order the changes were made. Values are whole snapshots, so a subscriber
/// never sees a partial update.
public final class ChangeStream<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
        var nextID = 0
    }

    private let state: Mutex<State>

    init(_ initial: Value) {
        state = Mutex(State(value: initial))
    }

    /// The current value.
    public var value: Value { state.withLock { $0.value } }

    /// A stream of the current value followed by every change.
    public func values() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            continuation.yield(state.value)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sets the value and delivers it to every subscriber, under one lock so order is preserved.
    func send(_ value: Value) {
        state.withLock { state in
            state.value = value
            for continuation in state.subscribers.values { continuation.yield(value) }
        }
    }

    /// Sets the value only when it differs, returning whether it changed.
    @discardableResult
    func update(_ value: Value) -> Bool where Value: Equatable {
        state.withLock { state in
            guard state.value != value else { return false }
            state.value = value
            for continuation in state.subscribers.values { continuation.yield(value) }
            return true
        }
    }

    deinit {
        state.withLock { state in
            for continuation in state.subscribers.values { continuation.finish() }
        }
    }
}

/// A stream of events (not values): subscribers get the events sent after they subscribed.
public final class EventStream<Event: Sendable>: Sendable {
    private let subscribers = Mutex<(next: Int, all: [Int: AsyncStream<Event>.Continuation])>((0, [:]))
    private let bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy

    init(bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded) {
        self.bufferingPolicy = bufferingPolicy
    }

    /// A stream of the events sent from now on.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: bufferingPolicy)
        let id = subscribers.withLock { state in
            let id = state.next
            state.next += 1
            state.all[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.all.removeValue(forKey: id) }
        }
        return stream
    }

    func send(_ event: Event) {
        subscribers.withLock { state in
            for continuation in state.all.values { continuation.yield(event) }
        }
    }

    deinit {
        subscribers.withLock { state in
            for continuation in state.all.values { continuation.finish() }
        }
    }
}
