public import LockstepNet
public import LockstepTime

/// Why an impairment proxy cannot be configured or run.
public enum ImpairmentError: Error, Hashable, CustomStringConvertible {
    /// A percentage outside 0...100.
    case invalidPercentage(name: String, value: Double)
    /// A time that is negative or not a number.
    case invalidTime(name: String, value: MediaTime)
    /// A mean loss burst under one datagram.
    case invalidBurst(value: Double)
    /// The listen address cannot be resolved or bound.
    case cannotListen(endpoint: String, underlying: NetworkError)
    /// The forward address cannot be resolved.
    case cannotForward(endpoint: String, underlying: NetworkError)
    /// A socket or thread operation failed.
    case socketFailed(context: String, underlying: NetworkError)
    /// `start` or `run` was called twice.
    case alreadyRunning

    public var description: String {
        switch self {
        case .invalidPercentage(let name, let value):
            return "\(name) must be a percentage from 0 to 100, got \(value)"
        case .invalidTime(let name, let value):
            return "\(name) must be zero or more, got \(value)"
        case .invalidBurst(let value):
            return "the mean loss burst must be 1 datagram or more, got \(value)"
        case .cannotListen(let endpoint, let underlying):
            return "the impairment proxy cannot listen on \(endpoint): \(underlying)"
        case .cannotForward(let endpoint, let underlying):
            return "the impairment proxy cannot forward to \(endpoint): \(underlying)"
        case .socketFailed(let context, let underlying):
            return "\(context): \(underlying)"
        case .alreadyRunning:
            return "the impairment proxy is already running or has run; create a new one"
        }
    }
}
