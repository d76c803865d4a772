/// A datagram recognised as a time packet of either format.
enum ClockPacket: Hashable, Sendable {
    case gstreamer(NetTimePacket)
    case lockstep(LockstepTimePacket)

    /// The outcome of reading a datagram.
    enum Decoded: Hashable, Sendable {
        case packet(ClockPacket)
        case rejected(PacketRejection)
    }

    /// Recognises a datagram by its length and, for Lockstep packets, its magic and version.
    ///
    /// - Parameters:
    ///   - bytes: the stored bytes.
    ///   - length: the datagram's real length (larger than `bytes.count` when it was truncated).
    static func decode(_ bytes: UnsafeRawBufferPointer, length: Int) -> Decoded {
        if length == NetTimePacket.size, let packet = NetTimePacket(decoding: bytes) {
            return .packet(.gstreamer(packet))
        }
        let hasMagic =
            bytes.count >= 5
            && UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)) == LockstepTimePacket.magic
        // Before the length: a packet of another version has another size (version 1 had 56 bytes, version 2 72).
        if hasMagic, bytes.load(fromByteOffset: 4, as: UInt8.self) != LockstepTimePacket.version {
            return .rejected(.unsupportedVersion)
        }
        if length > LockstepTimePacket.size { return .rejected(.oversized) }
        if length < LockstepTimePacket.size || bytes.count < LockstepTimePacket.size { return .rejected(.tooShort) }
        guard hasMagic else { return .rejected(.badMagic) }
        guard let packet = LockstepTimePacket(decodingChecked: bytes) else { return .rejected(.unknownKind) }
        return .packet(.lockstep(packet))
    }
}

/// Why a datagram was not taken as a time packet. Servers never answer such datagrams; both sides
/// count them by reason.
public enum PacketRejection: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// Shorter than the packet it could be (under 16 bytes, or between 16 and 96).
    case tooShort
    /// Longer than the largest packet (96 bytes).
    case oversized
    /// 96 bytes without Lockstep's magic.
    case badMagic
    /// A Lockstep packet of another version (version 1 and 2 clients and servers).
    case unsupportedVersion
    /// A Lockstep packet whose kind is neither request nor reply.
    case unknownKind
    /// A well-formed packet of the wrong kind for its receiver: a reply sent to a server, a request
    /// sent to a client, or a format the client did not ask for.
    case unexpectedKind
    /// A Lockstep packet whose authentication code is not valid under the receiver's key (or that
    /// has none).
    case unauthenticated
    /// A GStreamer time packet to a server told not to answer that unauthenticated format.
    case formatDisabled

    public var description: String {
        switch self {
        case .tooShort: return "shorter than a time packet"
        case .oversized: return "longer than a time packet"
        case .badMagic: return "not a Lockstep time packet (wrong magic)"
        case .unsupportedVersion: return "a Lockstep time packet of an unsupported version"
        case .unknownKind: return "a Lockstep time packet of unknown kind"
        case .unexpectedKind: return "a time packet of the wrong kind for its receiver"
        case .unauthenticated: return "a Lockstep time packet without a valid authentication code"
        case .formatDisabled: return "a GStreamer time packet, which this server does not answer"
        }
    }
}
