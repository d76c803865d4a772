import LockstepTime
import SyncClock
import WallPlayer
import WallProtocol
import WallTimeline

/// What a node cannot do, and why: each case reads as a sentence and maps to an HTTP status.
public enum NodeError: Error, CustomStringConvertible {
    case unknownNode(id: String, known: [String])
    case invalidOption(option: String, reason: String)
    /// Something the config names cannot be used (a token file, a certificate).
    case config(String)
    /// The control API cannot listen on its address (in use, not this machine's, a privileged port).
    case cannotListen(address: String, reason: String)
    /// The node's window cannot be put on its display.
    case cannotShow(String)
    case clockNotLocked(state: String, waited: MediaTime)
    /// The player's error, and the name the operator knows the media by when it differs from the
    /// file played (content in the store is kept under its SHA-256).
    case mediaFailed(PlayerError, name: String? = nil)
    case noVideoTrack(path: String, found: [String])
    case rejected(RequestRejection)
    case clockFailed(SyncClockError)
    case timedOut(what: String, after: MediaTime)
    case timeline(TimelineError)
    case timelineNotStored(TimelineStoreError)
    case noTimeline
    /// A file the wall distributes, not (yet) in this node's content store.
    case contentMissing(name: String, id: ContentID)

    public var description: String {
        switch self {
        case .unknownNode(let id, let known):
            return "node \"\(id)\" is not in the config (its nodes are \(known.joined(separator: ", ")))"
        case .invalidOption(let option, let reason):
            return "--\(option): \(reason)"
        case .config(let reason):
            return reason
        case .cannotListen(let address, let reason):
            return "cannot listen for control requests on \(address): \(reason)"
        case .cannotShow(let reason):
            return "cannot show the picture: \(reason)"
        case .clockNotLocked(let state, let waited):
            return "the clock is not locked to the master (state \(state) after waiting \(waited.seconds) s)"
        case .mediaFailed(let error, let name):
            return name.map { "\($0) cannot play: \(error)" } ?? "the media cannot play: \(error)"
        case .noVideoTrack(let path, let found):
            return "the media has no video track: \(path) holds only \(found.joined(separator: ", ")), "
                + "and every wall node shows video"
        case .rejected(let rejection):
            return rejection.description
        case .clockFailed(let error):
            return "the clock client failed: \(error)"
        case .timeline(let error):
            return "timeline refused: \(error)"
        case .timelineNotStored(let error):
            return "\(error)"
        case .noTimeline:
            return "this node has no timeline yet: start one with wallctl play or wallctl start"
        case .timedOut(let what, let after):
            return "\(what) did not happen within \(after.seconds) s"
        case .contentMissing(let name, let id):
            return "\(name) (\(id)) is not in this node's content store yet"
        }
    }

    /// The HTTP status of a command that failed this way.
    public var httpStatus: Int {
        switch self {
        case .unknownNode, .invalidOption, .config, .rejected: return 422
        case .clockNotLocked: return 409
        case .mediaFailed, .noVideoTrack: return 422
        case .clockFailed, .timedOut, .cannotListen, .cannotShow: return 503
        case .timeline(.notNewer), .timeline(.otherWall), .timeline(.versionJump), .timeline(.otherEpoch),
            .timeline(.noMasterClock):
            return 409
        case .timeline: return 422
        case .timelineNotStored: return 500
        case .noTimeline: return 404
        case .contentMissing: return 409
        }
    }
}
