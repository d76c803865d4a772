/// Signs and checks Lockstep time packets under a shared key: HMAC-SHA256 of the packet's first 56
/// bytes, truncated to the 16 bytes at offset 56 (see `LockstepTimePacket`).
///
/// The code covers the kind, so a request reflected back cannot pass for a reply, and the nonce,
/// sequence and client send time, so a reply cannot be replayed to another request.
struct PacketAuthenticator: Sendable {
    private let mac: HMACSHA256

    /// - Throws: `SyncClockError.invalidKey` if libcrypto cannot compute HMAC-SHA256.
    init(key: ClockKey) throws(SyncClockError) {
        guard let mac = HMACSHA256(key: key.bytes) else {
            throw .invalidKey("libcrypto cannot compute HMAC-SHA256 (EVP_MAC_fetch or EVP_MAC_init failed)")
        }
        self.mac = mac
    }

    /// Writes the authentication code of an encoded packet into its last 16 bytes.
    func sign(_ packet: UnsafeMutableRawBufferPointer) {
        mac.authenticate(
            UnsafeRawBufferPointer(rebasing: packet[..<LockstepTimePacket.authenticatedSize]),
            into: UnsafeMutableRawBufferPointer(
                rebasing: packet[LockstepTimePacket.authenticatedSize..<LockstepTimePacket.size]))
    }

    /// Whether a packet's last 16 bytes are the authentication code of the rest.
    func isAuthentic(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard packet.count >= LockstepTimePacket.size else { return false }
        var expected = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &expected) { expected in
            mac.authenticate(
                UnsafeRawBufferPointer(rebasing: packet[..<LockstepTimePacket.authenticatedSize]), into: expected)
            return HMACSHA256.constantTimeEqual(
                UnsafeRawBufferPointer(expected),
                UnsafeRawBufferPointer(rebasing: packet[LockstepTimePacket.authenticatedSize..<LockstepTimePacket.size])
            )
        }
    }
}
