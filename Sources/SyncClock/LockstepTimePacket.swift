/// Lockstep's own time packet, version 3: 96 bytes, big-endian. Requests and replies have the same
/// size, so a reply is never larger than the request that caused it.
///
/// | offset | size | field |
/// |-------:|-----:|-------|
/// | 0 | 4 | magic `LSCK` (0x4C53434B) |
/// | 4 | 1 | version (2) |
/// | 5 | 1 | kind: 1 request, 2 reply |
/// | 6 | 2 | flags (`Flags`) |
/// | 8 | 4 | sequence number, chosen by the client, echoed |
/// | 12 | 4 | nonce: random per request, echoed |
/// | 16 | 8 | client send time (client's clock, ns, signed), echoed |
/// | 24 | 8 | server receive time (master clock, ns, signed) |
/// | 32 | 8 | server send time (master clock, ns, signed) |
/// | 40 | 8 | server identity: random, chosen when the server starts |
/// | 48 | 8 | timeline epoch: identifies the master time scale (see `SyncClockServer`) |
/// | 56 | 4 | root error bound: how far the served time may be from the master's, ns (saturating; 0 for the master) |
/// | 60 | 1 | stratum: 0 for the master, 1 for a server following it, and so on |
/// | 61 | 3 | zero |
/// | 64 | 8 | relay identity: the answering server's own identity (the master's own for the master) |
/// | 72 | 8 | upstream identity: the relay identity of the server it follows; 0 for the master |
/// | 80 | 16 | authentication code: HMAC-SHA256 of bytes 0–79 under the shared key, first 16 bytes; zero without a key |
///
/// A server following another (a boundary clock, `ClockRelay`) answers with the master's identity
/// and epoch, so its clients stay on the master's timeline; the relay and upstream identities let a
/// client refuse a source that follows the client itself.
///
/// Version 1 (56 bytes) had no nonce and no authentication code, version 2 (72 bytes) no relay
/// fields; a version 3 server counts their requests as `unsupportedVersion` and stays silent.
struct LockstepTimePacket: Hashable, Sendable {
    static let size = 96
    static let magic: UInt32 = 0x4C53_434B
    static let version: UInt8 = 3
    /// The bytes the authentication code covers: everything before it.
    static let authenticatedSize = 80
    /// Bytes of the (truncated) authentication code.
    static let authenticationCodeSize = 16

    enum Kind: UInt8, Sendable {
        case request = 1
        case reply = 2
    }

    /// What a reply says about the server's clock.
    struct Flags: OptionSet, Hashable, Sendable {
        let rawValue: UInt16
        /// The master time is `CLOCK_REALTIME` (shared by masters disciplined by NTP or PTP).
        static let realtimeTimescale = Flags(rawValue: 1 << 0)
        /// The server receive time is the kernel's receive stamp.
        static let kernelReceiveTimestamp = Flags(rawValue: 1 << 1)
        /// The master runs on a simulated clock (a test setting).
        static let simulatedClock = Flags(rawValue: 1 << 2)
    }

    var kind: Kind
    var flags: Flags = []
    var sequence: UInt32
    /// Random per request: with the sequence and the client send time it makes a reply to a request
    /// the client did not send unguessable.
    var nonce: UInt32 = 0
    var clientSendTime: Int64
    var serverReceiveTime: Int64 = 0
    var serverSendTime: Int64 = 0
    var serverIdentity: UInt64 = 0
    var epoch: UInt64 = 0
    /// How far the served time may be from the master's, ns; `UInt32.max` for 4.29 s or more.
    var rootErrorBound: UInt32 = 0
    var stratum: UInt8 = 0
    var relayIdentity: UInt64 = 0
    var upstreamIdentity: UInt64 = 0

    /// Byte offset of the client send time, written last, just before the request is sent.
    static let clientSendTimeOffset = 16
    /// Byte offset of the server send time, written last, just before the reply is sent.
    static let serverSendTimeOffset = 32

    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.size)
        buffer.storeBytes(of: Self.magic.bigEndian, toByteOffset: 0, as: UInt32.self)
        buffer.storeBytes(of: Self.version, toByteOffset: 4, as: UInt8.self)
        buffer.storeBytes(of: kind.rawValue, toByteOffset: 5, as: UInt8.self)
        buffer.storeBytes(of: flags.rawValue.bigEndian, toByteOffset: 6, as: UInt16.self)
        buffer.storeBytes(of: sequence.bigEndian, toByteOffset: 8, as: UInt32.self)
        buffer.storeBytes(of: nonce.bigEndian, toByteOffset: 12, as: UInt32.self)
        buffer.storeBytes(of: clientSendTime.bigEndian, toByteOffset: 16, as: Int64.self)
        buffer.storeBytes(of: serverReceiveTime.bigEndian, toByteOffset: 24, as: Int64.self)
        buffer.storeBytes(of: serverSendTime.bigEndian, toByteOffset: 32, as: Int64.self)
        buffer.storeBytes(of: serverIdentity.bigEndian, toByteOffset: 40, as: UInt64.self)
        buffer.storeBytes(of: epoch.bigEndian, toByteOffset: 48, as: UInt64.self)
        buffer.storeBytes(of: rootErrorBound.bigEndian, toByteOffset: 56, as: UInt32.self)
        buffer.storeBytes(of: stratum, toByteOffset: 60, as: UInt8.self)
        for offset in 61..<64 { buffer.storeBytes(of: UInt8(0), toByteOffset: offset, as: UInt8.self) }
        buffer.storeBytes(of: relayIdentity.bigEndian, toByteOffset: 64, as: UInt64.self)
        buffer.storeBytes(of: upstreamIdentity.bigEndian, toByteOffset: 72, as: UInt64.self)
        UnsafeMutableRawBufferPointer(rebasing: buffer[Self.authenticatedSize..<Self.size]).initializeMemory(
            as: UInt8.self, repeating: 0)
    }

    /// Reads a packet whose size, magic and version were checked by `ClockPacket.decode`; nil for an
    /// unknown kind.
    init?(decodingChecked bytes: UnsafeRawBufferPointer) {
        guard let kind = Kind(rawValue: bytes.load(fromByteOffset: 5, as: UInt8.self)) else { return nil }
        self.kind = kind
        flags = Flags(rawValue: UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
        sequence = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        nonce = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        clientSendTime = Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: Int64.self))
        serverReceiveTime = Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: 24, as: Int64.self))
        serverSendTime = Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: 32, as: Int64.self))
        serverIdentity = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 40, as: UInt64.self))
        epoch = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 48, as: UInt64.self))
        rootErrorBound = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 56, as: UInt32.self))
        stratum = bytes.load(fromByteOffset: 60, as: UInt8.self)
        relayIdentity = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 64, as: UInt64.self))
        upstreamIdentity = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 72, as: UInt64.self))
    }

    init(
        kind: Kind, flags: Flags = [], sequence: UInt32, nonce: UInt32 = 0, clientSendTime: Int64,
        serverReceiveTime: Int64 = 0, serverSendTime: Int64 = 0, serverIdentity: UInt64 = 0, epoch: UInt64 = 0,
        rootErrorBound: UInt32 = 0, stratum: UInt8 = 0, relayIdentity: UInt64 = 0, upstreamIdentity: UInt64 = 0
    ) {
        self.rootErrorBound = rootErrorBound
        self.stratum = stratum
        self.relayIdentity = relayIdentity
        self.upstreamIdentity = upstreamIdentity
        self.kind = kind
        self.flags = flags
        self.sequence = sequence
        self.nonce = nonce
        self.clientSendTime = clientSendTime
        self.serverReceiveTime = serverReceiveTime
        self.serverSendTime = serverSendTime
        self.serverIdentity = serverIdentity
        self.epoch = epoch
    }
}
