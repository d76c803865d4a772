internal import CLockstepNetShims

#if canImport(Glibc)
    import Glibc
#endif

/// An operating-system thread running one closure, joined explicitly.
///
/// Network receive paths run on their own threads rather than on the Swift concurrency pool: a
/// cooperative pool thread can be busy with unrelated work exactly when a datagram arrives, and the
/// receive and send timestamps are only as good as the promptness of the thread taking them.
public final class DedicatedThread: Sendable {
    private let thread: pthread_t

    private final class Body {
        let run: @Sendable () -> Void
        let name: String
        init(run: @escaping @Sendable () -> Void, name: String) {
            self.run = run
            self.name = name
        }
    }

    /// Starts a thread named `name` (at most 15 characters are kept) running `body`.
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws(NetworkError) {
        let box = Unmanaged.passRetained(Body(run: body, name: name))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
                _ = lockstep_net_set_thread_name(body.name)
                body.run()
                return nil
            }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw .systemCall(call: "pthread_create", target: "thread \(name)", errno: result)
        }
        self.thread = thread
    }

    /// Waits for the closure to return. Call once.
    public func join() {
        pthread_join(thread, nil)
    }
}
