import Foundation
import LockstepNet
import LockstepTime
import WallProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Talks to one node's control API.
struct NodeClient: Sendable {
    let id: String
    let base: URL
    let session: URLSession
    let timeout: MediaTime

    init(node: NodeConfig, session: URLSession, timeout: MediaTime) throws(ControlError) {
        let endpoint: Endpoint
        do {
            endpoint = try Endpoint(parsing: node.control)
        } catch {
            throw .badAddress(node: node.id, reason: error.description)
        }
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        guard let url = URL(string: "http://\(host):\(endpoint.port)") else {
            throw .badAddress(node: node.id, reason: "\(node.control) does not make a URL")
        }
        id = node.id
        base = url
        self.session = session
        self.timeout = timeout
    }

    /// `GET /status`, with the round trip it took on this machine's monotonic clock.
    func status() async throws(ControlError) -> (status: NodeStatus, roundTrip: MediaTime, receivedAt: MediaTime) {
        let sent = LocalClock.monotonic.now()
        let status: NodeStatus = try await get(ControlPath.status)
        let received = LocalClock.monotonic.now()
        return (status, received - sent, received)
    }

    /// `GET /status`, retried while the node does not answer (it may still be starting) until
    /// `deadline` on this machine's monotonic clock.
    func statusWhenUp(by deadline: MediaTime) async throws(ControlError) -> NodeStatus {
        while true {
            do {
                return try await status().status
            } catch {
                guard case .unreachable = error, LocalClock.monotonic.now() < deadline else { throw error }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// Posts a command and returns the node's status after it.
    @discardableResult
    func command(_ path: String, _ body: some Encodable) async throws(ControlError) -> NodeStatus {
        let data: Data
        do {
            data = try JSONEncoder().encode(body)
        } catch {
            throw .protocolViolation(node: id, detail: "cannot encode the request: \(error)")
        }
        let (replyData, code) = try await send("POST", path, body: data)
        let reply: ControlReply = try decode(replyData, path: path, code: code)
        guard reply.ok, let status = reply.status else {
            throw .refused(node: id, command: path, reason: reply.error ?? "HTTP \(code)")
        }
        return status
    }

    /// `GET /frames?after=`.
    func frames(after sequence: UInt64) async throws(ControlError) -> FramesReply {
        try await get("\(ControlPath.frames)?after=\(sequence)&limit=4096")
    }

    /// `GET /snapshot`: the current frame as packed RGB.
    func snapshot(width: Int, height: Int) async throws(ControlError) -> (width: Int, height: Int, rgb: Data) {
        let path = "\(ControlPath.snapshot)?width=\(width)&height=\(height)"
        let (data, code) = try await send("GET", path, body: nil)
        guard code == 200 else {
            let reply = try? JSONDecoder().decode(ControlReply.self, from: data)
            throw .refused(node: id, command: path, reason: reply?.error ?? "HTTP \(code)")
        }
        guard data.count == width * height * 3 else {
            throw .protocolViolation(node: id, detail: "snapshot of \(data.count) bytes for \(width)x\(height) RGB")
        }
        return (width, height, data)
    }

    private func get<T: Decodable>(_ path: String) async throws(ControlError) -> T {
        let (data, code) = try await send("GET", path, body: nil)
        return try decode(data, path: path, code: code)
    }

    private func decode<T: Decodable>(_ data: Data, path: String, code: Int) throws(ControlError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            let text = String(decoding: data.prefix(200), as: UTF8.self)
            throw .protocolViolation(node: id, detail: "\(path) answered HTTP \(code) with unexpected content: \(text)")
        }
    }

    private func send(_ method: String, _ path: String, body: Data?) async throws(ControlError) -> (Data, Int) {
        guard let url = URL(string: path, relativeTo: base) else {
            throw .protocolViolation(node: id, detail: "bad path \(path)")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout.seconds)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        do {
            let (data, response) = try await session.data(for: request)
            return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch {
            throw .unreachable(node: id, address: base.absoluteString, reason: error.localizedDescription)
        }
    }
}

/// What went wrong talking to the wall.
enum ControlError: Error, CustomStringConvertible {
    case config(String)
    case badAddress(node: String, reason: String)
    case unreachable(node: String, address: String, reason: String)
    case refused(node: String, command: String, reason: String)
    case protocolViolation(node: String, detail: String)
    case unknownNodes([String])
    case notReady(nodes: [String: String])

    var description: String {
        switch self {
        case .config(let message):
            return message
        case .badAddress(let node, let reason):
            return "node \(node): bad control address: \(reason)"
        case .unreachable(let node, let address, let reason):
            return "node \(node) at \(address) does not answer: \(reason)"
        case .refused(let node, let command, let reason):
            return "node \(node) refused \(command): \(reason)"
        case .protocolViolation(let node, let detail):
            return "node \(node): \(detail)"
        case .unknownNodes(let ids):
            return "no such node in the config: \(ids.joined(separator: ", "))"
        case .notReady(let nodes):
            return "not ready: "
                + nodes.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: "; ")
        }
    }

    /// The node this error is about, if one.
    var node: String? {
        switch self {
        case .badAddress(let node, _), .unreachable(let node, _, _), .refused(let node, _, _),
            .protocolViolation(let node, _):
            return node
        case .config, .unknownNodes, .notReady:
            return nil
        }
    }
}
