/// The packet format a client speaks to a time server.
public enum WireFormat: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// Lockstep's versioned packet: server receive and send times (so the server's turnaround is
    /// taken out of the round trip), server identity and timeline epoch (so a master restart is
    /// noticed). See `LockstepTimePacket`.
    case lockstep
    /// GStreamer's 16-byte net time packet, understood by `GstNetTimeProvider` and
    /// `GstNetClientClock`. See `NetTimePacket`.
    case gstreamer

    public var description: String { rawValue }
}
