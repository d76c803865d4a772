/// The DiffServ class a socket's packets are marked with (RFC 2474), and the priority the host's own
/// queues give them: what lets the clock's datagrams pass bulk transfers on a shared uplink, in
/// switches that honour the marks and in this machine's queue alike.
public enum TrafficClass: Sendable, Hashable, CustomStringConvertible {
    /// Expedited forwarding (EF, RFC 3246): the clock's datagrams, small and ahead of every queue.
    case expedited
    /// Class selector 1 (CS1, lower effort by long use): bulk content, behind everything else.
    case bulk

    /// The DiffServ code point: the top six bits of the IPv4 TOS or IPv6 traffic class byte.
    public var codePoint: UInt8 {
        switch self {
        case .expedited: return 46
        case .bulk: return 8
        }
    }

    /// The socket priority (`SO_PRIORITY`, 0 to 6 without privilege) for this machine's queues.
    public var socketPriority: Int32 {
        switch self {
        case .expedited: return 6
        case .bulk: return 1
        }
    }

    public var description: String {
        switch self {
        case .expedited: return "EF"
        case .bulk: return "CS1"
        }
    }
}
