import LockstepLocks
import Logging
import NIOCore

/// Refusals as log lines: the first few of every 10 s each named, then how many more there were,
/// so a flood of bad connections or messages cannot flood the log.
public final class RefusalLog: Sendable {
    let logger: Logger
    /// What refused, first on every line ("show control", "control API").
    let surface: String
    static let linesPerWindow = 10
    static let window = TimeAmount.seconds(10)
    private struct State {
        var windowStart: NIODeadline?
        var inWindow = 0
        var refused = 0
        var taken = 0
    }
    private let state = Mutex(State())

    public init(surface: String, logger: Logger) {
        self.surface = surface
        self.logger = logger
    }

    /// What was refused since the start, and what was taken.
    public var counts: (refused: Int, taken: Int) { state.withLock { ($0.refused, $0.taken) } }

    public func taken() { state.withLock { $0.taken += 1 } }

    /// Counts a refusal of what `sender` sent over `via`, and logs it unless the window's lines
    /// are spent.
    public func refuse(_ via: String, _ sender: String, _ reason: String, now: NIODeadline = .now()) {
        let (log, unlogged) = state.withLock { state -> (Bool, Int) in
            state.refused += 1
            var unlogged = 0
            if state.windowStart.map({ now - $0 >= Self.window }) ?? true {
                unlogged = max(0, state.inWindow - Self.linesPerWindow)
                state.windowStart = now
                state.inWindow = 0
            }
            state.inWindow += 1
            return (state.inWindow <= Self.linesPerWindow, unlogged)
        }
        if unlogged > 0 {
            logger.warning(
                "\(surface): \(unlogged) more refused in the last \(Self.window.nanoseconds / 1_000_000_000) s")
        }
        if log {
            logger.warning(
                "\(surface): refused \(via) from \(sender): \(reason)",
                metadata: ["guard.sender": "\(sender)", "guard.via": "\(via)"])
        }
    }
}
