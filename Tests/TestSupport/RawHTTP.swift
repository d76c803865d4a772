import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP/1.1 over a plain socket, for tests that must send what no well-behaved client would:
/// malformed request lines, foreign headers, half a request, or nothing at all.
public enum RawHTTP {
    /// A reply: the status code (nil when the server closed without one) and the body text.
    public struct Reply: Sendable, CustomStringConvertible {
        public var status: Int?
        public var headers: String
        public var body: String

        public var description: String { "HTTP \(status.map(String.init) ?? "none"): \(body.prefix(300))" }
    }

    /// Sends a request built from its parts with `Connection: close` and reads the reply.
    public static func request(
        port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil,
        timeout: Double = 10
    ) throws -> Reply {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        if let body {
            if headers["Content-Type"] == nil { text += "Content-Type: application/json\r\n" }
            text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        } else {
            text += "\r\n"
        }
        return try exchange(port: port, Array(text.utf8), timeout: timeout)
    }

    /// Sends `bytes` and reads until the server closes the connection or `timeout` passes.
    /// `halfClose` then shuts the sending side, as a client with nothing more to say does.
    public static func exchange(port: Int, _ bytes: [UInt8], halfClose: Bool = false, timeout: Double = 10) throws
        -> Reply
    {
        let connection = try Connection(port: port, timeout: timeout)
        try connection.send(bytes)
        if halfClose { shutdown(connection.descriptor, Int32(SHUT_WR)) }
        return parse(try connection.readToEnd(timeout: timeout))
    }

    /// A TCP connection to 127.0.0.1, for tests that hold connections or send slowly.
    public final class Connection {
        public let descriptor: Int32

        public init(port: Int, timeout: Double = 10) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw TestSupportError("socket: errno \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var wait = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else {
                let code = errno
                close(descriptor)
                throw TestSupportError("connect to 127.0.0.1:\(port): errno \(code)")
            }
        }

        deinit { close(descriptor) }

        public func send(_ bytes: [UInt8]) throws {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard sent > 0 else { throw TestSupportError("send: errno \(errno)") }
                offset += sent
            }
        }

        /// One line the server sends (a line protocol's answer, show control's), without its end;
        /// throws if none ends within `timeout`.
        public func readLine(timeout: Double) throws -> [UInt8] {
            let deadline = Date().addingTimeInterval(timeout)
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = recv(descriptor, &byte, 1, 0)
                if count == 1 {
                    if byte == UInt8(ascii: "\n") { return line }
                    line.append(byte)
                } else if count == 0 || errno == ECONNRESET {
                    throw TestSupportError("the server closed the connection before a line ended: \(line)")
                } else if errno != EINTR, errno != EAGAIN || Date() >= deadline {
                    throw TestSupportError("no line within \(timeout) s (errno \(errno))")
                }
            }
        }

        /// Sends a GET that keeps the connection open, and reads its reply: the status and the body,
        /// as long as its Content-Length says (the next request may then take the same connection).
        public func get(_ path: String, headers: [String: String] = [:], timeout: Double = 10) throws -> (
            status: Int?, body: [UInt8]
        ) {
            var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
            try send(Array((text + "\r\n").utf8))
            let deadline = Date().addingTimeInterval(timeout)
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            var length: Int?
            var bodyStart = 0
            while length.map({ received.count < bodyStart + $0 }) ?? true {
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += chunk[..<count]
                } else if count == 0 || errno == ECONNRESET {
                    throw TestSupportError("the server closed the connection within a reply")
                } else if errno != EINTR, errno != EAGAIN || Date() >= deadline {
                    throw TestSupportError("no whole reply within \(timeout) s (errno \(errno))")
                }
                if length == nil, let reply = Optional(parse(received)), reply.status != nil,
                    let end = String(decoding: received, as: UTF8.self).range(of: "\r\n\r\n")
                {
                    bodyStart = String(decoding: received, as: UTF8.self)[..<end.upperBound].utf8.count
                    length =
                        reply.headers.split(separator: "\r\n")
                        .first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                        ?? 0
                }
            }
            return (parse(received).status, Array(received[bodyStart..<(bodyStart + (length ?? 0))]))
        }

        /// Everything the server sends until it closes the connection; throws if it has not closed
        /// within `timeout`.
        public func readToEnd(timeout: Double) throws -> [UInt8] {
            let deadline = Date().addingTimeInterval(timeout)
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += chunk[..<count]
                } else if count == 0 || errno == ECONNRESET {
                    return received
                } else if errno != EINTR, errno != EAGAIN || Date() >= deadline {
                    throw TestSupportError("the server kept the connection open for \(timeout) s (errno \(errno))")
                }
            }
        }
    }

    private static func parse(_ bytes: [UInt8]) -> Reply {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return Reply(status: nil, headers: text, body: "") }
        let head = String(text[..<split.lowerBound])
        let statusLine = head.split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        let status = parts.count >= 2 ? Int(parts[1]) : nil
        return Reply(status: status, headers: head, body: String(text[split.upperBound...]))
    }
}
