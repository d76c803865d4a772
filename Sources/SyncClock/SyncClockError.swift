public import LockstepNet
public import LockstepTime

/// Why a clock server or client could not start or keep running.
public enum SyncClockError: Error, Hashable, CustomStringConvertible {
    /// A listen address could not be resolved or bound.
    case cannotListen(endpoint: String, underlying: NetworkError)
    /// The server configuration lists no address to listen on.
    case nothingToListenOn
    /// The server's address could not be resolved, or no socket could be opened towards it.
    case cannotReachServer(server: Endpoint, underlying: NetworkError)
    /// A socket or thread operation failed while running.
    case socketFailed(context: String, underlying: NetworkError)
    /// `run()` or `start()` was called on an object that is already running or has run.
    case alreadyRunning(what: String)
    /// The client did not reach the locked state in time.
    case notLocked(timeout: MediaTime, state: ClockState)
    /// A configuration value is out of range; the text names it.
    case invalidConfiguration(String)
    /// A clock key (or its file) is unusable; the text says why, never what the key is.
    case invalidKey(String)

    public var description: String {
        switch self {
        case .cannotListen(let endpoint, let underlying):
            return "the clock server cannot listen on \(endpoint): \(underlying)"
        case .nothingToListenOn:
            return "the clock server has no address to listen on"
        case .cannotReachServer(let server, let underlying):
            return "the clock client cannot use server \(server): \(underlying)"
        case .socketFailed(let context, let underlying):
            return "\(context): \(underlying)"
        case .alreadyRunning(let what):
            return "\(what) is already running or has run; create a new one"
        case .notLocked(let timeout, let state):
            return "the clock did not lock to its master within \(timeout) (state: \(state))"
        case .invalidConfiguration(let text):
            return "invalid clock configuration: \(text)"
        case .invalidKey(let text):
            return "invalid clock key: \(text)"
        }
    }
}
