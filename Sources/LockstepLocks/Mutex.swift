// Lockstep's locks: the standard library's, seen by ThreadSanitizer.
//
// On Linux, Synchronization's Mutex waits on futexes inside the (uninstrumented) standard library,
// so ThreadSanitizer sees none of its ordering and reports every access it guards as a race.
// Built with `-DLOCKSTEP_TSAN` (scripts/sanitize.sh thread), this module declares a Mutex with the
// same interface over a pthread mutex, which ThreadSanitizer intercepts; it shadows
// Synchronization's for every file that imports this module. Every other build uses
// Synchronization's own.
@_exported import Synchronization

#if LOCKSTEP_TSAN
    import Glibc

    /// A pthread mutex at a fixed address (one that moves is undefined behaviour).
    public final class PthreadMutexStorage: @unchecked Sendable {
        fileprivate let raw: UnsafeMutablePointer<pthread_mutex_t>

        init() {
            raw = .allocate(capacity: 1)
            raw.initialize(to: pthread_mutex_t())
            pthread_mutex_init(raw, nil)
        }

        deinit {
            pthread_mutex_destroy(raw)
            raw.deallocate()
        }
    }

    /// Synchronization's `Mutex` interface over a pthread mutex, for ThreadSanitizer builds.
    public struct Mutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
        private let storage = PthreadMutexStorage()
        private let value: UnsafeMutablePointer<Value>

        public init(_ initialValue: consuming sending Value) {
            value = .allocate(capacity: 1)
            value.initialize(to: initialValue)
        }

        deinit {
            value.deinitialize(count: 1)
            value.deallocate()
        }

        public borrowing func withLock<Result: ~Copyable, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result {
            pthread_mutex_lock(storage.raw)
            defer { pthread_mutex_unlock(storage.raw) }
            return try body(&value.pointee)
        }

        public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result? {
            guard pthread_mutex_trylock(storage.raw) == 0 else { return nil }
            defer { pthread_mutex_unlock(storage.raw) }
            return try body(&value.pointee)
        }
    }
#endif
