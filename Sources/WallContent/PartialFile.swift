import Foundation
import LockstepLocks
import WallTimeline

#if canImport(Glibc)
    import Glibc
#endif

/// A file a node receives chunk by chunk, in its store's `partial` folder, and serves its peers
/// chunk by chunk before it is whole:
///
///     partial/<hex>          the file's bytes at their places, the whole size set aside at once
///     partial/<hex>.list     its chunk list, as it came (checked against the ID when read back)
///     partial/<hex>.chunks   the chunks written (a claim: each is read back and checked on opening)
///
/// A chunk is written only once it matches the list, and served only once written. Opening the file
/// again (a restart, a power cut) reads every claimed chunk back and keeps those that still match,
/// so damage in the node's own file is fetched again and blamed on no source. A partial file from
/// before chunks (its bytes from the start, no claims) keeps every whole chunk it holds.
public final class PartialFile: Sendable {
    public let list: ChunkList
    public let path: String
    let listPath: String
    let claimsPath: String
    private let descriptor: Int32
    private let held: Mutex<ChunkSet>
    private let arriving: Mutex<ChunkSet>

    /// The chunks written and checked.
    public var have: ChunkSet { held.withLock { $0 } }

    /// The chunks being received now (a writer open on each): what peers are told is coming, so
    /// that they ask the origin for others.
    public var receiving: ChunkSet { arriving.withLock { $0 } }

    /// The bytes written and checked.
    public var haveBytes: UInt64 {
        have.members.reduce(0) { $0 + UInt64(list.range(of: $1).count) }
    }

    /// The chunk list a partial file of `id` in `store` was opened with, if it is there and fits `id`.
    public static func storedList(of id: ContentID, in store: ContentStore) -> ChunkList? {
        guard let data = FileManager.default.contents(atPath: store.partialFolder + "/" + id.sha256 + ".list"),
            let list = try? JSONDecoder().decode(ChunkList.self, from: data), list.id == id
        else { return nil }
        return list
    }

    /// The bytes a partial file of `id` in `store` claims to hold (its chunks written, as its claims
    /// say): for reports before the file is opened and its claims checked; zero without claims.
    public static func claimedBytes(of id: ContentID, in store: ContentStore) -> UInt64 {
        guard let list = storedList(of: id, in: store),
            let claims = readClaims(at: store.partialFolder + "/" + id.sha256 + ".chunks", count: list.count)
        else { return 0 }
        return claims.members.reduce(0) { $0 + UInt64(list.range(of: $1).count) }
    }

    /// Opens (or creates) `list`'s partial file in `store`, setting the whole file's room aside.
    ///
    /// - Throws: `.noSpace` when the store has no room for the bytes still missing.
    public init(store: ContentStore, list: ChunkList) throws(ContentError) {
        let id = list.id
        let path = store.partialFolder + "/" + id.sha256
        let existing = ContentStore.size(of: path)
        if let existing, existing > id.size {
            unlink(path)
            unlink(path + ".list")
            unlink(path + ".chunks")
            throw .corrupt(id, "its partial file is longer than the file: deleted, fetched again")
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .storage("cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        let allocated = fstat(descriptor, &info) == 0 ? UInt64(info.st_blocks) * 512 : 0
        let needed = id.size > allocated ? id.size - allocated : 0
        if let free = store.freeBytes(), free < needed {
            close(descriptor)
            if existing == nil { unlink(path) }
            throw .noSpace(id, needed: needed, free: free)
        }
        if id.size > 0 {
            let status = posix_fallocate(descriptor, 0, off_t(id.size))
            guard status == 0 else {
                close(descriptor)
                if existing == nil { unlink(path) }
                if status == ENOSPC { throw .noSpace(id, needed: needed, free: store.freeBytes() ?? 0) }
                throw .storage("cannot set \(id.size) bytes aside for \(path): \(String(cString: strerror(status)))")
            }
        }
        self.list = list
        self.path = path
        listPath = path + ".list"
        claimsPath = path + ".chunks"
        self.descriptor = descriptor
        held = Mutex(ChunkSet(count: list.count))
        arriving = Mutex(ChunkSet(count: list.count))
        // What is claimed: the chunks the last run wrote with this list, or, for a file from before
        // chunks (or whose claims are lost), every chunk its bytes reached. Each is read back and
        // checked before it counts.
        let claimed: [Int]
        if Self.storedList(of: id, in: store) == list, let claims = Self.readClaims(at: claimsPath, count: list.count) {
            claimed = claims.members
        } else {
            let reached = existing ?? 0
            claimed = (0..<list.count).filter { list.range(of: $0).upperBound <= reached }
        }
        var checked = ChunkSet(count: list.count)
        for chunk in claimed where (try? ContentDigest.sha256(of: bytes(of: chunk))) == list.digests[chunk] {
            checked.insert(chunk)
        }
        held.withLock { $0 = checked }
        do {
            try JSONEncoder().encode(list).write(to: URL(fileURLWithPath: listPath), options: .atomic)
        } catch {
            throw .storage("cannot write \(listPath): \(error.localizedDescription)")
        }
        try writeClaims(checked)
    }

    deinit { close(descriptor) }

    /// Writes chunk `index` if `bytes` are what the list says; returns false (nothing claimed)
    /// when they are not: the source that sent them sent damage.
    public func write(_ index: Int, _ bytes: Data) throws(ContentError) -> Bool {
        guard let writer = try receive(index) else { return false }
        try writer.append(bytes)
        return try writer.finish()
    }

    /// A writer for chunk `index` as it arrives, straight to its place in the file and through the
    /// digest, so a chunk never waits whole in memory; nil for a chunk past the last. Only one writer
    /// per chunk at a time (the fetcher asks one source for a chunk at a time), and none for a chunk
    /// claimed already: what is served is never written over.
    public func receive(_ index: Int) throws(ContentError) -> ChunkWriter? {
        guard index >= 0, index < list.count, !have.contains(index) else { return nil }
        return try ChunkWriter(file: self, index: index)
    }

    /// Writes `buffer` at `offset` of the file.
    fileprivate func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws(ContentError) {
        var done = 0
        while done < buffer.count {
            let count = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw .storage("cannot write \(path): \(String(cString: strerror(errno)))") }
            done += count
        }
    }

    fileprivate func noteReceiving(_ index: Int, _ now: Bool) {
        arriving.withLock { set in
            if now { set.insert(index) } else { set.remove(index) }
        }
    }

    /// Claims chunk `index`, checked.
    fileprivate func claim(_ index: Int) throws(ContentError) {
        // Under the lock: two chunks claimed at once must not leave the older claims last.
        try held.withLock { set throws(ContentError) in
            set.insert(index)
            try writeClaims(set)
        }
    }

    /// The bytes at chunk `index`'s place in the file, written or not.
    func bytes(of index: Int) throws(ContentError) -> Data {
        let range = list.range(of: index)
        var data = Data(count: Int(range.count))
        let read = data.withUnsafeMutableBytes { buffer -> Int in
            var done = 0
            while done < buffer.count {
                let count = pread(
                    descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(range.lowerBound) + off_t(done))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return count < 0 ? -1 : done }
                done += count
            }
            return done
        }
        guard read == data.count else { throw .storage("cannot read \(path): \(String(cString: strerror(errno)))") }
        return data
    }

    /// A handle of its own on the file this object holds open: what serves its chunks, so that a
    /// rename (the file kept) or a new file at its path never changes what a reader gets. Opened
    /// anew through `/proc/self/fd`, not `dup`ed: each reader has its own offset, however many peers
    /// are served at once.
    public func reader() -> FileHandle? {
        let copy = open("/proc/self/fd/\(descriptor)", O_RDONLY | O_CLOEXEC)
        return copy >= 0 ? FileHandle(fileDescriptor: copy, closeOnDealloc: true) : nil
    }

    /// Whether every byte of `bytes` is in a written chunk: what may be served of it.
    public func holds(_ bytes: Range<UInt64>) -> Bool {
        let chunks = list.chunks(covering: bytes)
        return held.withLock { set in chunks.allSatisfy { set.contains($0) } }
    }

    /// Keeps the file once every chunk is written and its whole SHA-256 matches its ID, reading it
    /// once and checking every chunk on the way. Returns false when a chunk no longer matches its
    /// list (damage on this node's disk since it was written): that chunk is unclaimed, to be fetched
    /// again, and no source is blamed. When every chunk matches its list but the file does not match
    /// its ID, the list was another file's: everything is deleted and `.corrupt` thrown.
    public func finish(into store: ContentStore) throws(ContentError) -> Bool {
        guard have.isFull else {
            throw .storage("\(list.id) is not whole yet (\(have))")
        }
        fsync(descriptor)
        let read = try ContentDigest.chunkList(ofFileAt: path)
        if read.id == list.id {
            try store.keepChecked(list.id)
            unlink(listPath)
            unlink(claimsPath)
            return true
        }
        let damaged = (0..<list.count).filter { $0 >= read.count || read.digests[$0] != list.digests[$0] }
        guard damaged.isEmpty else {
            try held.withLock { set throws(ContentError) in
                for chunk in damaged { set.remove(chunk) }
                try writeClaims(set)
            }
            return false
        }
        discard()
        throw .corrupt(
            list.id, "every chunk matched its chunk list, the file not its SHA-256: the list was another file's")
    }

    /// Deletes the partial file, its list and its claims.
    public func discard() {
        unlink(path)
        unlink(listPath)
        unlink(claimsPath)
        held.withLock { $0 = ChunkSet(count: list.count) }
    }

    /// The claims at `path` if they are a set of `count` chunks; nil when there are none or they
    /// are unreadable (then nothing is claimed).
    private static func readClaims(at path: String, count: Int) -> ChunkSet? {
        guard let data = FileManager.default.contents(atPath: path),
            let claims = try? JSONDecoder().decode(ChunkSet.self, from: data), claims.count == count
        else { return nil }
        return claims
    }

    /// Replaces the claims file (written anew, then renamed over the old).
    private func writeClaims(_ written: ChunkSet) throws(ContentError) {
        let temporary = claimsPath + ".new"
        do {
            try JSONEncoder().encode(written).write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw .storage("cannot write \(temporary): \(error.localizedDescription)")
        }
        guard rename(temporary, claimsPath) == 0 else {
            throw .storage("cannot keep \(claimsPath): \(String(cString: strerror(errno)))")
        }
    }
}

/// One chunk of a `PartialFile` as it arrives: each piece written at its place and digested; the
/// chunk is claimed only if its length and SHA-256 are what the list says.
public final class ChunkWriter {
    private let file: PartialFile
    public let index: Int
    /// The chunk's bytes in the file.
    public let range: Range<UInt64>
    private let digest: Digest
    /// Bytes received so far.
    public private(set) var received: UInt64 = 0

    fileprivate init(file: PartialFile, index: Int) throws(ContentError) {
        self.file = file
        self.index = index
        range = file.list.range(of: index)
        digest = try Digest()
        file.noteReceiving(index, true)
    }

    deinit { file.noteReceiving(index, false) }

    /// Takes the next bytes of the chunk; more than the chunk holds is damage.
    public func append(_ bytes: Data) throws(ContentError) {
        guard received + UInt64(bytes.count) <= UInt64(range.count) else {
            throw .corrupt(file.list.id, "chunk \(index) came longer than its \(range.count) bytes")
        }
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(ContentError) -> Void in
                try digest.update(buffer)
                try file.write(buffer, at: range.lowerBound + received)
            }
        }
        try result.get()
        received += UInt64(bytes.count)
    }

    /// Claims the chunk if it is whole and matches its digest; false when it does not (damage its
    /// source sent, which stays unclaimed, so it is fetched again).
    public func finish() throws(ContentError) -> Bool {
        guard received == UInt64(range.count), try digest.finish() == file.list.digests[index] else { return false }
        try file.claim(index)
        return true
    }
}
