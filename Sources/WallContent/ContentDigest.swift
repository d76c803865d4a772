internal import CCrypto
import Foundation
import WallTimeline

/// SHA-256 of files as they stream past (OpenSSL's libcrypto), for content IDs and chunk lists.
public enum ContentDigest {
    /// The ID of the file at `path`: its SHA-256 and size, read in 1 MiB chunks.
    public static func id(ofFileAt path: String) throws(ContentError) -> ContentID {
        try read(path, chunks: false).id
    }

    /// The ID of the file at `path` and its chunk list, from one reading of it.
    public static func chunkList(ofFileAt path: String) throws(ContentError) -> ChunkList {
        let (id, digests) = try read(path, chunks: true)
        return try ChunkList(id: id, digests: digests)
    }

    /// The SHA-256 of `bytes`: 64 lowercase hex digits.
    public static func sha256(of bytes: UnsafeRawBufferPointer) throws(ContentError) -> String {
        let digest = try Digest()
        try digest.update(bytes)
        return try digest.finish()
    }

    public static func sha256(of data: Data) throws(ContentError) -> String {
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(ContentError) -> String in try sha256(of: bytes) }
        }
        return try result.get()
    }

    /// 64 lowercase hex digits.
    static func sha256(ofFileAt path: String) throws(ContentError) -> String {
        try read(path, chunks: false).id.sha256
    }

    /// The file's ID, and with `chunks` the digests of its chunks (none without).
    private static func read(_ path: String, chunks: Bool) throws(ContentError) -> (id: ContentID, digests: [String]) {
        guard let size = ContentStore.size(of: path) else { throw .storage("\(path) is not a file") }
        guard size <= ContentID.largestSize else { throw .storage("\(path) is over 1 TiB") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .storage("cannot open \(path)") }
        defer { try? handle.close() }
        let chunkSize = ChunkList.chunkSize(forFileOf: size)
        let whole = try Digest()
        var piece = try Digest()
        var pieceLength: UInt64 = 0
        var digests: [String] = []
        var read: UInt64 = 0
        while true {
            let data: Data?
            do {
                // 1 MiB at a time, never across a chunk's end.
                data = try handle.read(upToCount: Int(min(1 << 20, chunkSize - pieceLength)))
            } catch {
                throw .storage("cannot read \(path): \(error.localizedDescription)")
            }
            guard let data, !data.isEmpty else { break }
            read += UInt64(data.count)
            let result = data.withUnsafeBytes { bytes in
                Result { () throws(ContentError) -> Void in
                    try whole.update(bytes)
                    if chunks { try piece.update(bytes) }
                }
            }
            try result.get()
            pieceLength += UInt64(data.count)
            if pieceLength == chunkSize {
                if chunks { digests.append(try piece.finish()) }
                piece = try Digest()
                pieceLength = 0
            }
        }
        if chunks, pieceLength > 0 { digests.append(try piece.finish()) }
        guard read == size else { throw .storage("\(path) changed while it was read (\(read) of \(size) bytes)") }
        guard let id = ContentID(sha256: try whole.finish(), size: size) else {
            throw .storage("\(path) is over 1 TiB")
        }
        return (id, digests)
    }
}

/// One SHA-256 under way: libcrypto's digest context.
final class Digest {
    private let context: OpaquePointer

    init() throws(ContentError) {
        guard let context = EVP_MD_CTX_new() else { throw .storage("libcrypto has no digest context") }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw .storage("libcrypto has no SHA-256")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) throws(ContentError) {
        guard bytes.count == 0 || EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1 else {
            throw .storage("SHA-256 failed")
        }
    }

    /// 64 lowercase hex digits.
    func finish() throws(ContentError) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else { throw .storage("SHA-256 failed") }
        return digest.prefix(32).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}
