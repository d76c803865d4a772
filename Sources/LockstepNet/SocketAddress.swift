#if canImport(Glibc)
    import Glibc
#endif

/// A resolved IPv4 or IPv6 address and UDP port.
///
/// A value type with no allocation, so a receive loop can make one per datagram and use it as a
/// dictionary key (the impairment proxy keys its per-client sockets by it).
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    public enum Family: Sendable, Hashable {
        case ipv4
        case ipv6

        var systemValue: Int32 {
            switch self {
            case .ipv4: return AF_INET
            case .ipv6: return AF_INET6
            }
        }
    }

    public let family: Family
    /// The port in host byte order.
    public let port: UInt16
    /// The address bytes in network order: IPv4 uses the first 4 bytes of `high`.
    let high: UInt64
    let low: UInt64
    let scopeID: UInt32

    /// The IPv4 loopback address with `port`.
    public static func ipv4Loopback(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv4, port: port, high: UInt64(0x7F00_0001) << 32, low: 0, scopeID: 0)
    }

    /// The IPv6 loopback address `::1` with `port`.
    public static func ipv6Loopback(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv6, port: port, high: 0, low: 1, scopeID: 0)
    }

    /// The IPv4 wildcard address `0.0.0.0` with `port`, for listening on every interface.
    public static func ipv4Any(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv4, port: port, high: 0, low: 0, scopeID: 0)
    }

    /// The IPv6 wildcard address `::` with `port`, for listening on every interface.
    public static func ipv6Any(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv6, port: port, high: 0, low: 0, scopeID: 0)
    }

    init(family: Family, port: UInt16, high: UInt64, low: UInt64, scopeID: UInt32) {
        self.family = family
        self.port = port
        self.high = high
        self.low = low
        self.scopeID = scopeID
    }

    /// A numeric IPv4 (`192.0.2.1`) or IPv6 (`::1`, `fe80::1%eth0`, no brackets) address, or nil if
    /// `text` is neither (or names a scope interface this machine does not have).
    public init?(numericHost text: String, port: UInt16) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(ipv4: v4, port: port)
            return
        }
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(parts[0]), &v6) == 1 else { return nil }
        var scopeID: UInt32 = 0
        if parts.count == 2 {
            let scope = String(parts[1])
            scopeID = UInt32(scope) ?? if_nametoindex(scope)
            guard scopeID != 0 else { return nil }
        }
        self.init(ipv6: v6, port: port, scopeID: scopeID)
    }

    /// Whether `text` is an IPv6 address, scoped or not, whatever the scope names.
    static func isIPv6Literal(_ text: Substring) -> Bool {
        var v6 = in6_addr()
        let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return inet_pton(AF_INET6, String(address), &v6) == 1
    }

    init(ipv4 address: in_addr, port: UInt16) {
        let bytes = UInt32(bigEndian: address.s_addr)
        self.init(family: .ipv4, port: port, high: UInt64(bytes) << 32, low: 0, scopeID: 0)
    }

    init(ipv6 address: in6_addr, port: UInt16, scopeID: UInt32) {
        var copy = address
        let (high, low) = withUnsafeBytes(of: &copy) { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
        self.init(family: .ipv6, port: port, high: high, low: low, scopeID: scopeID)
    }

    /// The address in a `sockaddr_storage` as the kernel returned it, or nil for another family.
    public init?(storage: sockaddr_storage) {
        var copy = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: &copy) { $0.loadUnaligned(as: sockaddr_in.self) }
            self.init(ipv4: address.sin_addr, port: UInt16(bigEndian: address.sin_port))
        case AF_INET6:
            let address = withUnsafeBytes(of: &copy) { $0.loadUnaligned(as: sockaddr_in6.self) }
            self.init(
                ipv6: address.sin6_addr, port: UInt16(bigEndian: address.sin6_port), scopeID: address.sin6_scope_id)
        default:
            return nil
        }
    }

    /// This address with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        SocketAddress(family: family, port: port, high: high, low: low, scopeID: scopeID)
    }

    /// Whether this is `127.0.0.0/8` or `::1`.
    public var isLoopback: Bool {
        switch family {
        case .ipv4: return high >> 56 == 127
        case .ipv6: return high == 0 && low == 1
        }
    }

    /// Calls `body` with this address as a `sockaddr` and its length.
    public func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result) rethrows -> Result {
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(truncatingIfNeeded: high >> 32).bigEndian
            return try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_scope_id = scopeID
            withUnsafeMutableBytes(of: &address.sin6_addr) { raw in
                raw.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                raw.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            return try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }

    /// The numeric host without brackets: `192.0.2.1` or `::1`.
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch family {
        case .ipv4:
            var address = in_addr(s_addr: UInt32(truncatingIfNeeded: high >> 32).bigEndian)
            inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
        case .ipv6:
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { raw in
                raw.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                raw.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `192.0.2.1:5637` or `[::1]:5637`.
    public var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
