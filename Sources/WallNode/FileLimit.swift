#if canImport(Glibc)
    import Glibc
#endif

/// The node's open-file limit, raised to what the system allows: media, GStreamer's pipes and
/// sockets, and up to `ControlServer.acceptLimit` control connections must all fit, or looping
/// playback fails to open its file when a client holds many connections.
enum FileLimit {
    /// Raises the soft limit to the hard one; returns the limit in force.
    @discardableResult
    static func raise() -> UInt64 {
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
