#if canImport(Glibc)
    import Glibc
#endif

/// A daemon's open-file limit, raised to what the system allows, and the connections it can
/// afford: on a node, media, GStreamer's pipes and sockets and every control connection must all
/// fit, or looping playback fails to open its file; on every daemon, an accept loop at the limit
/// spins on EMFILE. The systemd units raise the limit too (`LimitNOFILE=`), since their system-call
/// filter keeps a service from raising its own.
public enum FileLimit {
    /// Descriptors kept for what is not a connection: a node's player and clock (about 30 in use
    /// while playing, with room for a pipeline rebuild beside the old one), the daemon's library
    /// files and its connections to the nodes.
    public static let reserved: UInt64 = 96

    /// Connections a daemon accepts at once within `limit` (half of what the reserve leaves, at
    /// most 256), and how many of those it serves before answering the rest with a 503 (a quarter,
    /// at most 64).
    public static func connections(within limit: UInt64) -> (served: Int, accepted: Int) {
        let spare = limit > reserved ? Int(min(limit - reserved, 4096)) : 0
        let accepted = max(2, min(256, spare / 2))
        return (max(1, accepted / 4), accepted)
    }

    /// Raises the soft limit to the hard one; returns the limit in force.
    @discardableResult
    public static func raise() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
}
