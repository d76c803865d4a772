import LockstepTime
import SyncClock
import WallPlayer

/// What a node cannot do, and why: each case reads as a sentence and maps to an HTTP status.
enum NodeError: Error, CustomStringConvertible {
    case unknownNode(id: String, known: [String])
    case invalidOption(option: String, reason: String)
    case clockNotLocked(state: String, waited: MediaTime)
    case nothingLoaded
    case mediaFailed(PlayerError)
    case prerollFailed(String)
    case startTooLate(hostTime: MediaTime, now: MediaTime)
    case playerRefused(PlayerError)
    case clockFailed(SyncClockError)
    case timedOut(what: String, after: MediaTime)

    var description: String {
        switch self {
        case .unknownNode(let id, let known):
            return "node \"\(id)\" is not in the config (its nodes are \(known.joined(separator: ", ")))"
        case .invalidOption(let option, let reason):
            return "--\(option): \(reason)"
        case .clockNotLocked(let state, let waited):
            return "the clock is not locked to the master (state \(state) after waiting \(waited.seconds) s)"
        case .nothingLoaded:
            return "no media is loaded: load first"
        case .mediaFailed(let error):
            return "the media cannot play: \(error)"
        case .prerollFailed(let reason):
            return "preroll did not finish: \(reason)"
        case .startTooLate(let hostTime, let now):
            return
                "the start time \(hostTime) has passed on this node's master clock (now \(now), late by \(now - hostTime))"
        case .playerRefused(let error):
            return "the player refused: \(error)"
        case .clockFailed(let error):
            return "the clock client failed: \(error)"
        case .timedOut(let what, let after):
            return "\(what) did not happen within \(after.seconds) s"
        }
    }

    /// The HTTP status of a command that failed this way.
    var httpStatus: Int {
        switch self {
        case .unknownNode, .invalidOption, .startTooLate: return 422
        case .clockNotLocked, .nothingLoaded: return 409
        case .mediaFailed, .playerRefused, .prerollFailed: return 422
        case .clockFailed, .timedOut: return 503
        }
    }
}
