import Foundation
import LockstepLocks

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on the loopback standing in for a node that misbehaves: one that accepts connections
/// and never answers, one that answers every request with a canned reply, or one whose port is
/// closed. It keeps the requests it read, so a test can check what `wallctl` sent.
public final class LocalListener: Sendable {
    public let port: UInt16
    private let descriptor: Int32
    private let received = Mutex<[String]>([])

    /// Listens on a free port of 127.0.0.1. With no `reply`, connections complete in the kernel
    /// and nothing ever reads or answers them; with one, each request's head is read and `reply`
    /// (a whole HTTP response) is sent before the connection is closed.
    public init(reply: String? = nil) throws {
        descriptor = try Self.boundSocket()
        port = try Self.port(of: descriptor)
        guard listen(descriptor, 16) == 0 else { throw Self.error("listen") }
        guard let reply else { return }
        let descriptor = self.descriptor
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                let head = Self.readHead(connection)
                received.withLock { $0.append(head) }
                _ = reply.utf8CString.withUnsafeBufferPointer { send(connection, $0.baseAddress, $0.count - 1, 0) }
                close(connection)
            }
        }
    }

    private init(closedOn descriptor: Int32) throws {
        self.descriptor = descriptor
        port = try Self.port(of: descriptor)
    }

    /// Listens on `port` of 127.0.0.1 and never accepts: a port another program has taken, so a
    /// daemon that wants it cannot listen there.
    public init(taking port: UInt16) throws {
        descriptor = try Self.boundSocket(port: port)
        self.port = port
        guard listen(descriptor, 1) == 0 else { throw Self.error("listen") }
    }

    /// A port bound on 127.0.0.1 but not listening: connecting to it is refused at once, and no
    /// other process can take it while this object lives.
    public static func closedPort() throws -> LocalListener {
        try LocalListener(closedOn: try boundSocket())
    }

    deinit {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }

    /// The heads (request line and headers) of the requests answered so far.
    public var requests: [String] { received.withLock { $0 } }

    /// A socket bound on 127.0.0.1, on `port` (0: any free port). As the daemons bind: an earlier
    /// test's connections in TIME_WAIT do not keep it off a port.
    private static func boundSocket(port: UInt16 = 0) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw error("socket") }
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(descriptor)
            throw error("bind")
        }
        return descriptor
    }

    private static func port(of descriptor: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw error("getsockname") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Reads up to the blank line that ends an HTTP request's head (a body, if any, is left unread).
    private static func readHead(_ connection: Int32) -> String {
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while head.count < 65536, recv(connection, &byte, 1, 0) == 1 {
            head.append(byte)
            if head.count >= 4, head.suffix(4) == [13, 10, 13, 10] { break }
        }
        return String(decoding: head, as: UTF8.self)
    }

    private static func error(_ call: String) -> NSError {
        NSError(domain: "LocalListener", code: Int(errno), userInfo: [NSLocalizedDescriptionKey: "\(call): \(errno)"])
    }
}
