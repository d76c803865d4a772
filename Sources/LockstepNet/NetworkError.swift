#if canImport(Glibc)
    import Glibc
#endif

/// Why an address could not be parsed or resolved, or a socket operation failed.
public enum NetworkError: Error, Hashable, CustomStringConvertible {
    /// The text has no `:PORT` part.
    case missingPort(input: String)
    /// The port is not a number from 0 to 65535.
    case invalidPort(input: String, port: String)
    /// The text has nothing before `:PORT`.
    case emptyHost(input: String)
    /// An IPv6 address written without brackets, which makes its last `:` ambiguous.
    case unbracketedIPv6(input: String)
    /// A `[` without its `]`, or text between `]` and `:PORT`.
    case malformedBrackets(input: String)
    /// The text in brackets is not an IPv6 address.
    case invalidIPv6Address(input: String)
    /// The host name does not resolve (getaddrinfo failed); `detail` is the resolver's explanation.
    case unknownHost(host: String, detail: String)
    /// The host resolves, but to no address of a usable family.
    case noUsableAddress(host: String)
    /// A port that must name a real service is zero.
    case portZero(endpoint: String)
    /// Not an IP address or CIDR range; the text says why.
    case invalidAddress(String)
    /// A system call failed; `target` names what it was applied to.
    case systemCall(call: String, target: String, errno: Int32)

    /// Whether the failure says this machine lacks the address family (IPv6 disabled, say), as
    /// opposed to a problem with the address itself.
    public var isAddressFamilyUnavailable: Bool {
        guard case .systemCall(_, _, let code) = self else { return false }
        return code == EAFNOSUPPORT || code == EADDRNOTAVAIL
    }

    public var description: String {
        switch self {
        case .invalidAddress(let reason):
            return reason
        case .missingPort(let input):
            return "\"\(input)\" has no port: write HOST:PORT, for example 192.0.2.1:5637 or [::1]:5637"
        case .invalidPort(let input, let port):
            return "\"\(input)\": port \"\(port)\" is not a number from 0 to 65535"
        case .emptyHost(let input):
            return "\"\(input)\" has no host before the port: write HOST:PORT, for example 127.0.0.1:5637"
        case .unbracketedIPv6(let input):
            return "\"\(input)\" looks like an IPv6 address: put it in brackets, for example [::1]:5637"
        case .malformedBrackets(let input):
            return "\"\(input)\": an IPv6 address must be written [ADDRESS]:PORT, for example [::1]:5637"
        case .invalidIPv6Address(let input):
            return "\"\(input)\": the text in brackets is not an IPv6 address"
        case .unknownHost(let host, let detail):
            return "cannot resolve host \"\(host)\": \(detail)"
        case .noUsableAddress(let host):
            return "host \"\(host)\" has no IPv4 or IPv6 address"
        case .portZero(let endpoint):
            return "\(endpoint): port 0 names no service; give the port the server listens on"
        case .systemCall(let call, let target, let errno):
            let reason = String(cString: strerror(errno))
            if errno == EADDRINUSE {
                return "cannot listen on \(target): the port is already in use (\(reason))"
            }
            if errno == EADDRNOTAVAIL {
                return "cannot use \(target): that address does not belong to this machine (\(reason))"
            }
            return "\(call) failed for \(target): \(reason)"
        }
    }
}
