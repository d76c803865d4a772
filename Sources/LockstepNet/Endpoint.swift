#if canImport(Glibc)
    import Glibc
#endif

/// A `HOST:PORT` as a user writes it: an IPv4 address, a bracketed IPv6 address or a host name, and
/// a UDP port.
///
/// Parsing checks only the syntax; `resolve()` turns the host into addresses with getaddrinfo, so a
/// configuration can be validated without touching the network and resolved when it is used.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The host without brackets: `192.0.2.1`, `::1` or `wall-master.local`.
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[IPV6]:PORT`.
    ///
    /// - Throws: `NetworkError` naming what is wrong: a missing or invalid port, an empty host, an
    ///   IPv6 address without brackets, or malformed brackets.
    public init(parsing text: String) throws(NetworkError) {
        let trimmed = text.trimmingWhitespace()
        let host: Substring
        let portText: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw .malformedBrackets(input: text) }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard !rest.isEmpty else { throw .missingPort(input: text) }
            guard rest.hasPrefix(":") else { throw .malformedBrackets(input: text) }
            portText = rest.dropFirst()
            guard SocketAddress.isIPv6Literal(host) else { throw .invalidIPv6Address(input: text) }
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else { throw .missingPort(input: text) }
            host = trimmed[..<colon]
            portText = trimmed[trimmed.index(after: colon)...]
            if host.contains(":") { throw .unbracketedIPv6(input: text) }
            if host.contains("[") || host.contains("]") { throw .malformedBrackets(input: text) }
        }
        guard !host.isEmpty else { throw .emptyHost(input: text) }
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), let port = UInt16(portText) else {
            throw .invalidPort(input: text, port: String(portText))
        }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The addresses `host` stands for, IPv4 and IPv6, in the resolver's order of preference.
    ///
    /// Numeric hosts are converted without a lookup. With `passive`, a wildcard host (`0.0.0.0`,
    /// `::`) is kept as is, for binding.
    ///
    /// - Throws: `NetworkError.unknownHost` when the name does not resolve.
    public func resolve(passive: Bool = false) throws(NetworkError) -> [SocketAddress] {
        if let numeric = SocketAddress(numericHost: host, port: port) { return [numeric] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let detail = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw .unknownHost(host: host, detail: detail)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let raw = current.pointee.ai_addr {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { destination in
                    destination.copyMemory(
                        from: UnsafeRawBufferPointer(start: raw, count: Int(current.pointee.ai_addrlen)))
                }
                if let address = SocketAddress(storage: storage), !addresses.contains(address) {
                    addresses.append(address)
                }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .noUsableAddress(host: host) }
        return addresses
    }
}

extension Endpoint: LosslessStringConvertible {
    /// Parses `HOST:PORT`; nil when `parsing:` would throw.
    public init?(_ description: String) {
        guard let endpoint = try? Endpoint(parsing: description) else { return nil }
        self = endpoint
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return self[first...last]
    }
}
