import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT/SIGTERM into an awaitable event instead of killing the process, so commands can
/// stop their pipelines and exit cleanly. The sources are set once and only cancelled.
final class SignalWatcher: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>

    init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// The next signal received.
    func next() async -> Int32 {
        for await number in stream { return number }
        return 0
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
