/// What went wrong talking to the wall.
public enum ControlError: Error, CustomStringConvertible {
    case config(String)
    case badAddress(node: String, reason: String)
    case unreachable(node: String, address: String, reason: String)
    case unauthorized(node: String, tokenSent: Bool)
    /// The node answering is another wall's: the config given is not this wall's, or its address is.
    case otherWall(node: String, wall: String, expected: String)
    case refused(node: String, command: String, reason: String)
    /// The node cannot play what the command names: outside its media roots, or no playable video.
    case unplayable(node: String, reason: String)
    case protocolViolation(node: String, detail: String)
    case unknownNodes([String])
    case notReady(nodes: [String: String])
    /// The wall's timeline cannot do what was asked.
    case timeline(String)

    public var description: String {
        switch self {
        case .config(let message):
            return message
        case .badAddress(let node, let reason):
            return "node \(node): bad control address: \(reason)"
        case .unreachable(let node, let address, let reason):
            return "node \(node) at \(address) does not answer: \(reason)"
        case .unauthorized(let node, true):
            return "node \(node) refused the control token: check control-token-file"
        case .unauthorized(let node, false):
            return "node \(node) requires a control token: set control-token-file in the config"
        case .otherWall(let node, let wall, let expected):
            return "node \(node) belongs to wall \"\(wall)\", not \"\(expected)\": it refuses this config's commands"
        case .refused(let node, let command, let reason):
            return "node \(node) refused \(command): \(reason)"
        case .unplayable(let node, let reason):
            return "node \(node) cannot play it: \(reason)"
        case .protocolViolation(let node, let detail):
            return "node \(node): \(detail)"
        case .unknownNodes(let ids):
            return "no such node in the config: \(ids.joined(separator: ", "))"
        case .notReady(let nodes):
            return "not ready: "
                + nodes.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: "; ")
        case .timeline(let message):
            return message
        }
    }

    /// The node this error is about, if one.
    public var node: String? {
        switch self {
        case .badAddress(let node, _), .unreachable(let node, _, _), .unauthorized(let node, _),
            .otherWall(let node, _, _),
            .refused(let node, _, _), .unplayable(let node, _), .protocolViolation(let node, _):
            return node
        case .config, .unknownNodes, .notReady, .timeline:
            return nil
        }
    }

    /// The HTTP status a daemon relaying this error answers with: the request's own fault (a
    /// file outside the media roots, an edit the timeline cannot take) is a 4xx, the nodes'
    /// (down, answering wrongly) a 5xx.
    public var httpStatus: Int {
        switch self {
        case .config, .unknownNodes, .unplayable, .timeline, .refused: return 422
        case .notReady, .badAddress, .unreachable, .unauthorized, .otherWall, .protocolViolation: return 502
        }
    }

    /// The HTTP status a daemon answers any error of a wall command with: a `ControlError`'s or a
    /// `WallFailure`'s own, 500 for anything else (the daemon's own trouble).
    public static func httpStatus(of error: any Error) -> Int {
        switch error {
        case let error as ControlError: return error.httpStatus
        case let error as WallFailure: return error.httpStatus
        default: return 500
        }
    }

    /// Whether waiting cannot help: the node answers, and what it answers will not change by itself
    /// (a wrong token, another wall, an address that does not parse, a config that cannot be used).
    public var isLasting: Bool {
        switch self {
        case .config, .badAddress, .unauthorized, .otherWall, .unknownNodes, .unplayable: return true
        case .unreachable, .refused, .protocolViolation, .notReady, .timeline: return false
        }
    }
}
