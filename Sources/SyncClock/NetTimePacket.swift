/// GStreamer's net time packet (`GstNetTimePacket`): 16 bytes, two big-endian unsigned 64-bit
/// nanosecond times.
///
/// The client fills `localTime` and sends it; the server echoes it and fills `remoteTime` with its
/// clock's time. Unsigned: a master time below zero cannot be sent in this format.
struct NetTimePacket: Hashable, Sendable {
    static let size = 16

    /// The client's value, echoed unchanged by the server. GStreamer clients put their send time
    /// here; Lockstep's client uses it as an opaque token identifying the request.
    var localTime: UInt64
    /// The master's time, set by the server.
    var remoteTime: UInt64

    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.size)
        buffer.storeBytes(of: localTime.bigEndian, toByteOffset: 0, as: UInt64.self)
        buffer.storeBytes(of: remoteTime.bigEndian, toByteOffset: 8, as: UInt64.self)
    }

    /// Reads a packet from exactly 16 bytes.
    init?(decoding bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.size else { return nil }
        localTime = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        remoteTime = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    init(localTime: UInt64, remoteTime: UInt64) {
        self.localTime = localTime
        self.remoteTime = remoteTime
    }
}
