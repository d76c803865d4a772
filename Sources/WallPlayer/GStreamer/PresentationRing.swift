import Dispatch
import Foundation
import LockstepLocks

/// Carries presented frames off the render thread without a lock.
///
/// The render thread runs at real-time priority and must never wait for a thread of normal
/// priority: a lock shared with one (an `AsyncStream`'s, a `Mutex`) lets a preempted holder delay
/// the next frame by a scheduler time slice. So the render thread only writes into this
/// single-producer ring, publishes with an atomic store and signals a semaphore (an atomic
/// increment, and a futex wake if the reader sleeps); a reader thread of its own drains the ring
/// and delivers the frames. A full ring (the reader stalled for its whole capacity) drops the
/// newest frame.
final class PresentationRing: @unchecked Sendable {
    private let capacity: Int
    private let slots: UnsafeMutablePointer<PresentedFrame>
    /// Frames written; only the render thread stores it.
    private let written = Atomic<Int>(0)
    /// Frames read; only the reader thread stores it.
    private let read = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the reader thread, which calls `deliver` with every frame, in order.
    init(capacity: Int = 1024, deliver: @escaping @Sendable (PresentedFrame) -> Void) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        let thread = Thread { [self] in
            drain(deliver)
            finished.signal()
        }
        thread.name = "presentation-ring"
        thread.start()
    }

    deinit {
        slots.deallocate()
    }

    /// Called on the render thread: never blocks.
    func push(_ frame: PresentedFrame) {
        let position = written.load(ordering: .relaxed)
        guard position - read.load(ordering: .acquiring) < capacity else { return }
        (slots + position % capacity).initialize(to: frame)
        written.store(position + 1, ordering: .releasing)
        wake.signal()
    }

    /// Stops the reader once it has delivered what was written.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        finished.wait()
    }

    private func drain(_ deliver: (PresentedFrame) -> Void) {
        while true {
            wake.wait()
            let available = written.load(ordering: .acquiring)
            var position = read.load(ordering: .relaxed)
            while position < available {
                let frame = (slots + position % capacity).move()
                position += 1
                read.store(position, ordering: .releasing)
                deliver(frame)
            }
            if !running.load(ordering: .acquiring) { return }
        }
    }
}
