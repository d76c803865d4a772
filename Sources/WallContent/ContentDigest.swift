internal import CCrypto
import Foundation
import WallTimeline

/// SHA-256 of files as they stream past (OpenSSL's libcrypto), for content IDs.
public enum ContentDigest {
    /// The ID of the file at `path`: its SHA-256 and size, read in 1 MiB chunks.
    public static func id(ofFileAt path: String) throws(ContentError) -> ContentID {
        guard let size = ContentStore.size(of: path) else { throw .storage("\(path) is not a file") }
        let digest = try sha256(ofFileAt: path)
        guard let id = ContentID(sha256: digest, size: size) else { throw .storage("\(path) is over 1 TiB") }
        return id
    }

    /// 64 lowercase hex digits.
    static func sha256(ofFileAt path: String) throws(ContentError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .storage("cannot open \(path)") }
        defer { try? handle.close() }
        guard let context = EVP_MD_CTX_new() else { throw .storage("libcrypto has no digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { throw .storage("libcrypto has no SHA-256") }
        while true {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: 1 << 20)
            } catch {
                throw .storage("cannot read \(path): \(error.localizedDescription)")
            }
            guard let chunk, !chunk.isEmpty else { break }
            let updated = chunk.withUnsafeBytes { bytes in EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
            guard updated == 1 else { throw .storage("SHA-256 failed on \(path)") }
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else {
            throw .storage("SHA-256 failed on \(path)")
        }
        return digest.prefix(32).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}
