import Foundation
import LockstepLocks

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server on loopback for tests of network media: it serves the files of a folder
/// (with byte ranges, as players seek with them) and answers given by a test, one request per
/// connection, and it can go away mid-transfer as a real server that dies does.
public final class HTTPFileServer: Sendable {
    /// What a test answers for a path it handles itself: the body and its content type.
    public typealias Route = @Sendable (_ path: String) -> (body: Data, contentType: String)?

    public let port: UInt16
    private let root: URL
    private let route: Route?
    /// Bytes per second sent to each client; nil: as fast as the socket takes them.
    private let bytesPerSecond: Int?
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var clients: Set<Int32> = []
        var requests: [String] = []
        /// The paths whose answers were sent whole, in order.
        var served: [String] = []
    }

    /// Serves `root` on a loopback port (`port`, or an ephemeral one for 0: a server that comes
    /// back after `stop()` takes its old port again); `route` answers first, for paths it knows.
    public init(root: URL, bytesPerSecond: Int? = nil, route: Route? = nil, port requested: UInt16 = 0) throws {
        self.root = root
        self.route = route
        self.bytesPerSecond = bytesPerSecond
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = requested.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 64) == 0
                    && getsockname(listener, address, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw TestSupportError("cannot listen on loopback: \(String(cString: strerror(errno)))")
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "test.http"
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:port/path`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// The paths requested so far, in order.
    public var requests: [String] { state.withLock { $0.requests } }
    /// The paths whose answers were sent whole, in the order they were.
    public var served: [String] { state.withLock { $0.served } }

    /// Goes away at once: the listener and every open connection are closed mid-transfer.
    public func stop() {
        // Under the lock: a connection's descriptor is closed only once it has left `clients`.
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            for client in state.clients { shutdown(client, Int32(SHUT_RDWR)) }
            shutdown(listener, Int32(SHUT_RDWR))
        }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.clients.insert(client)
                return true
            }
            guard admitted else {
                close(client)
                return
            }
            let thread = Thread { [self] in
                serve(client)
                state.withLock { _ = $0.clients.remove(client) }
                close(client)
            }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        guard let head = readHead(client) else { return }
        let lines = head.split(separator: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, parts[0] == "GET" || parts[0] == "HEAD" else {
            return respond(client, status: "405 Method Not Allowed", body: Data(), type: "text/plain")
        }
        let path = String(parts[1].split(separator: "?").first ?? "").removingPercentEncoding ?? ""
        state.withLock { $0.requests.append(path) }
        let range = lines.dropFirst().first { $0.lowercased().hasPrefix("range:") }.flatMap(Self.byteRange)
        if let answer = route?(path) {
            return respond(client, status: "200 OK", body: answer.body, type: answer.contentType)
        }
        let relative = path.drop { $0 == "/" }
        guard !relative.split(separator: "/").contains(".."),
            let body = FileManager.default.contents(atPath: root.appendingPathComponent(String(relative)).path)
        else {
            return respond(client, status: "404 Not Found", body: Data("not found\n".utf8), type: "text/plain")
        }
        let type = Self.contentType(of: String(relative))
        guard let range else { return respond(client, status: "200 OK", body: body, type: type, path: path) }
        let first = range.first
        let last = min(range.last ?? body.count - 1, body.count - 1)
        guard first < body.count, first <= last else {
            return respond(
                client, status: "416 Range Not Satisfiable", body: Data(), type: type,
                extra: "Content-Range: bytes */\(body.count)\r\n")
        }
        respond(
            client, status: "206 Partial Content", body: body.subdata(in: first..<(last + 1)), type: type,
            extra: "Content-Range: bytes \(first)-\(last)/\(body.count)\r\n", path: path)
    }

    private func readHead(_ client: Int32) -> String? {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 65536 {
            let count = recv(client, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            received.append(contentsOf: buffer[0..<count])
            if let text = String(bytes: received, encoding: .utf8), let end = text.range(of: "\r\n\r\n") {
                return String(text[..<end.lowerBound])
            }
        }
        return nil
    }

    private func respond(
        _ client: Int32, status: String, body: Data, type: String, extra: String = "", path: String? = nil
    ) {
        let head =
            "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
            + "Accept-Ranges: bytes\r\n\(extra)Connection: close\r\n\r\n"
        guard send(client, Array(head.utf8)) else { return }
        let chunk = bytesPerSecond.map { max(1, $0 / 20) } ?? 65536
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunk, body.count)
            guard send(client, [UInt8](body[offset..<end])) else { return }
            offset = end
            if bytesPerSecond != nil { usleep(50_000) }
        }
        if let path { state.withLock { $0.served.append(path) } }
    }

    private func send(_ client: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// `Range: bytes=first-[last]`.
    private static func byteRange(_ line: Substring) -> (first: Int, last: Int?)? {
        guard let equals = line.firstIndex(of: "=") else { return nil }
        let spec = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        let bounds = spec.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]) else { return nil }
        return (first, Int(bounds[1]))
    }

    private static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "m3u8": return "application/vnd.apple.mpegurl"
        case "ts": return "video/mp2t"
        case "mp4": return "video/mp4"
        default: return "application/octet-stream"
        }
    }
}
