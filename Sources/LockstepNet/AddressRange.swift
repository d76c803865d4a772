/// A range of IP addresses in CIDR form (`10.0.0.0/24`, `fd00::/8`), or one address (`192.0.2.7`,
/// `::1`): who may send to an input that takes no token (show-control over UDP and TCP).
///
/// An IPv4 sender seen on an IPv6 socket (`::ffff:192.0.2.7`) matches the IPv4 range it belongs to.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    public let family: SocketAddress.Family
    let high: UInt64
    let low: UInt64
    /// Leading bits that must match: up to 32 for IPv4, 128 for IPv6.
    public let prefixLength: Int

    /// Parses `text`, or says what is wrong with it.
    public init(parsing text: String) throws(NetworkError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = SocketAddress(numericHost: String(parts[0]), port: 0), !parts[0].contains("%") else {
            throw .invalidAddress("\"\(text)\" is not an IP address or range (such as 10.0.0.0/24, 192.0.2.7 or fd00::/8)")
        }
        let width = address.family == .ipv4 ? 32 : 128
        var prefix = width
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...width).contains(length) else {
                throw .invalidAddress("\"\(text)\": the prefix length must be 0 to \(width)")
            }
            prefix = length
        }
        family = address.family
        prefixLength = prefix
        (high, low) = Self.masked(address.high, address.low, prefix: prefix)
    }

    /// Whether `address` lies in this range.
    public func contains(_ address: SocketAddress) -> Bool {
        var family = address.family
        var high = address.high
        var low = address.low
        // An IPv4 sender on a dual-stack socket: ::ffff:a.b.c.d.
        if family == .ipv6, high == 0, low >> 32 == 0xFFFF {
            family = .ipv4
            high = (low & 0xFFFF_FFFF) << 32
            low = 0
        }
        guard family == self.family else { return false }
        let masked = Self.masked(high, low, prefix: prefixLength)
        return masked.high == self.high && masked.low == self.low
    }

    private static func masked(_ high: UInt64, _ low: UInt64, prefix: Int) -> (high: UInt64, low: UInt64) {
        let highMask: UInt64 = prefix >= 64 ? .max : prefix == 0 ? 0 : ~(UInt64.max >> UInt64(prefix))
        let lowMask: UInt64 = prefix <= 64 ? 0 : prefix >= 128 ? .max : ~(UInt64.max >> UInt64(prefix - 64))
        return (high & highMask, low & lowMask)
    }

    public var description: String {
        let address = SocketAddress(family: family, port: 0, high: high, low: low, scopeID: 0)
        return "\(address.host)/\(prefixLength)"
    }
}
