internal import CCrypto

/// SHA-256 through OpenSSL's libcrypto (already linked for the clock's HMAC).
enum SHA256 {
    /// The digest of `bytes` as 64 lowercase hex digits, as `sha256sum` prints it.
    static func hex(of bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        precondition(done == 1 && length == 32, "libcrypto has no SHA-256")
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
