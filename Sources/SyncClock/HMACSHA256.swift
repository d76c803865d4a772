internal import CCrypto

/// HMAC-SHA256 with one key, from OpenSSL's libcrypto (`EVP_MAC`), and a constant-time comparison.
///
/// The key is set once in a template context; each computation duplicates it
/// (`EVP_MAC_CTX_dup`), so no two threads share a mutable context and the key schedule is not
/// recomputed per packet.
final class HMACSHA256: @unchecked Sendable {
    /// Bytes of a full authentication code.
    static let size = 32

    /// Only ever read (duplicated) after `init`, which is what makes sharing it across threads safe.
    private let template: OpaquePointer

    /// Calls `EVP_MAC_fetch("HMAC")` and `EVP_MAC_init` with digest SHA256; nil if libcrypto lacks them.
    init?(key: [UInt8]) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { return nil }
        var digest = Array("SHA256".utf8CString)
        let initialized = "digest".withCString { name in
            digest.withUnsafeMutableBufferPointer { digest in
                var parameters = [
                    OSSL_PARAM_construct_utf8_string(name, digest.baseAddress, 0), OSSL_PARAM_construct_end(),
                ]
                // An empty key is legal HMAC; libcrypto wants a non-null pointer for it.
                let bytes = key.isEmpty ? [0] : key
                return bytes.withUnsafeBufferPointer {
                    EVP_MAC_init(context, $0.baseAddress, key.count, &parameters)
                }
            }
        }
        guard initialized == 1 else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        template = context
    }

    deinit {
        EVP_MAC_CTX_free(template)
    }

    /// Writes the authentication code of `message`, truncated to `code.count` bytes (at most 32), into
    /// `code`. Calls `EVP_MAC_update` and `EVP_MAC_final` on a copy of the keyed context.
    func authenticate(_ message: UnsafeRawBufferPointer, into code: UnsafeMutableRawBufferPointer) {
        precondition(code.count <= Self.size)
        var full = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &full) { full in
            let context = EVP_MAC_CTX_dup(template)
            defer { EVP_MAC_CTX_free(context) }
            var length = 0
            let computed =
                context != nil
                && EVP_MAC_update(context, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
                    == 1
                && EVP_MAC_final(context, full.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, Self.size)
                    == 1
                && length == Self.size
            // Out of memory in libcrypto: a code that matches nothing honest beats a crash.
            if !computed { full.copyBytes(from: repeatElement(0xFF as UInt8, count: Self.size)) }
            code.copyMemory(from: UnsafeRawBufferPointer(rebasing: full[..<code.count]))
        }
    }

    /// The authentication code of `message`, truncated to `length` bytes.
    func authenticationCode(of message: [UInt8], length: Int = size) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: length)
        message.withUnsafeBytes { message in code.withUnsafeMutableBytes { authenticate(message, into: $0) } }
        return code
    }

    /// Whether two byte strings of equal length are equal, in time independent of where they differ
    /// (`CRYPTO_memcmp`), so an attacker cannot learn a valid code byte by byte.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.isEmpty || CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0)
    }
}
