#if canImport(Glibc)
    import Glibc
#endif

/// The node's open-file limit, raised to what the system allows, and the control connections it
/// can afford: media, GStreamer's pipes and sockets and every control connection must all fit, or
/// looping playback fails to open its file, and an accept loop at the limit spins on EMFILE.
public enum FileLimit {
    /// Descriptors kept for the player and the clock (about 30 in use while playing, with room
    /// for a pipeline rebuild beside the old one).
    static let reserved: UInt64 = 96

    /// Control connections the node accepts at once within `limit` (half of what the reserve
    /// leaves, at most 256), and how many of those it serves before answering the rest with a
    /// 503 (a quarter, at most 64).
    static func connections(within limit: UInt64) -> (served: Int, accepted: Int) {
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
