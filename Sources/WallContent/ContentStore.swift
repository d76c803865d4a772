import Foundation
import LockstepLocks
import WallTimeline

#if canImport(Glibc)
    import Glibc
#endif

/// A node's content-addressed store: every file under the name of what it holds, checked before it
/// is kept, so that nothing a peer or a cut transfer leaves can ever play.
///
///     <root>/sha256/<hex>        complete files, verified: the only ones played or served
///     <root>/partial/<hex>       a transfer under way or cut: resumed from its length
///
/// A file moves from `partial` to `sha256` only once its size and SHA-256 match its ID (a rename
/// in one file system, so a power cut leaves one or the other). A partial file longer than its ID
/// says, or one whose digest does not match, is deleted and fetched again.
public final class ContentStore: Sendable {
    public let root: String
    /// Bytes of the file system the store never takes: the node's timeline is kept beside it
    /// (written anew, then renamed over the old), and must always find room.
    public let reserve: UInt64
    /// When each complete file was last wanted, for collecting the ones no timeline needs.
    private let lastWanted = Mutex([String: Date]())

    /// The reserve by default: four times the largest state file (`TimelineStore.largestFile`).
    public static let defaultReserve = UInt64(4 * TimelineStore.largestFile)

    public init(root: String, reserve: UInt64 = ContentStore.defaultReserve) {
        self.root = root
        self.reserve = reserve
    }

    var completeFolder: String { root + "/sha256" }
    var partialFolder: String { root + "/partial" }

    /// Creates the store's folders (owner only).
    public func prepare() throws(ContentError) {
        for folder in [root, completeFolder, partialFolder] {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw .storage("cannot create \(folder): \(error.localizedDescription)")
            }
        }
    }

    /// The path of `id`'s complete file, if the store holds it.
    public func path(of id: ContentID) -> String? {
        let path = completeFolder + "/" + id.sha256
        guard let size = Self.size(of: path), size == id.size else { return nil }
        lastWanted.withLock { $0[id.sha256] = Date() }
        return path
    }

    public func holds(_ id: ContentID) -> Bool { path(of: id) != nil }

    /// The complete file holding `sha256`, and its size: what a server serves for it; nil when not
    /// held (or `sha256` is not a digest, so no other path is ever named).
    public func file(sha256: String) -> (path: String, size: UInt64)? {
        guard ContentID.isDigest(sha256) else { return nil }
        let path = completeFolder + "/" + sha256
        guard let size = Self.size(of: path) else { return nil }
        lastWanted.withLock { $0[sha256] = Date() }
        return (path, size)
    }

    /// How much of `id` a cut or running transfer has left in `partial`.
    public func partialSize(of id: ContentID) -> UInt64 {
        Self.size(of: partialFolder + "/" + id.sha256) ?? 0
    }

    /// Every complete file the store holds.
    public func holdings() -> [ContentID] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: completeFolder)) ?? []
        return names.compactMap { name in
            guard ContentID.isDigest(name), let size = Self.size(of: completeFolder + "/" + name) else { return nil }
            return ContentID(sha256: name, size: size)
        }.sorted()
    }

    /// Bytes free for the store's files: what the file system has free, less the reserve.
    public func freeBytes() -> UInt64? {
        guard let stats = fileSystem() else { return nil }
        let free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
        return free > reserve ? free - reserve : 0
    }

    /// The size of the file system the store is on.
    public func fileSystemBytes() -> UInt64? {
        fileSystem().map { UInt64($0.f_blocks) * UInt64($0.f_frsize) }
    }

    /// The file system of the store's folder, or of the nearest folder above it that exists: before
    /// its first file the store's folder may not (its files will land on that one).
    private func fileSystem() -> statvfs? {
        var path = root
        while true {
            var stats = statvfs()
            if statvfs(path, &stats) == 0 { return stats }
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { return nil }
            path = parent
        }
    }

    /// Opens `id`'s partial file to append to, after checking that what is left of it fits.
    public func appending(to id: ContentID) throws(ContentError) -> FileHandle {
        let path = partialFolder + "/" + id.sha256
        let have = partialSize(of: id)
        if have > id.size {
            try? FileManager.default.removeItem(atPath: path)
            throw .corrupt(id, "its partial file is longer than the file: deleted, fetched again")
        }
        if let free = freeBytes(), free < id.size - have {
            throw .noSpace(id, needed: id.size - have, free: free)
        }
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else { throw .storage("cannot create \(path)") }
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seekToEnd()
            return handle
        } catch {
            throw .storage("cannot open \(path): \(error.localizedDescription)")
        }
    }

    /// Keeps `id`'s partial file once it is whole and its digest matches; deletes it when it does not.
    public func commit(_ id: ContentID) throws(ContentError) {
        let partial = partialFolder + "/" + id.sha256
        guard let size = Self.size(of: partial), size == id.size else {
            throw .storage("\(id) is not whole yet (\(Self.size(of: partial) ?? 0) bytes)")
        }
        let digest: String
        do {
            digest = try ContentDigest.sha256(ofFileAt: partial)
        } catch {
            throw .storage("cannot read \(partial): \(error)")
        }
        guard digest == id.sha256 else {
            try? FileManager.default.removeItem(atPath: partial)
            throw .corrupt(id, "its SHA-256 is \(digest): deleted, fetched again")
        }
        try keepChecked(id)
    }

    /// Moves `id`'s partial file among the complete ones: for a caller that has just checked that
    /// its size and SHA-256 match (a rename in one file system: a power cut leaves one or the other).
    func keepChecked(_ id: ContentID) throws(ContentError) {
        guard rename(partialFolder + "/" + id.sha256, completeFolder + "/" + id.sha256) == 0 else {
            throw .storage("cannot keep \(id): \(String(cString: strerror(errno)))")
        }
        lastWanted.withLock { $0[id.sha256] = Date() }
    }

    /// Takes a copy of a file that is already here (a hand-placed file whose digest the caller
    /// checked), verified like a transfer. A copy, not a link: a file overwritten in place later
    /// (`cp` onto it) must not change what the store holds under its digest.
    public func adopt(fileAt source: String, as id: ContentID) throws(ContentError) {
        guard !holds(id) else { return }
        let partial = partialFolder + "/" + id.sha256
        try? FileManager.default.removeItem(atPath: partial)
        if let free = freeBytes(), free < id.size { throw .noSpace(id, needed: id.size, free: free) }
        do {
            try FileManager.default.copyItem(atPath: source, toPath: partial)
        } catch {
            throw .storage("cannot copy \(source): \(error.localizedDescription)")
        }
        try commit(id)
    }

    /// Deletes the complete copy of `sha256`, found damaged: what names it fetches it again.
    /// Whether there was one to delete.
    @discardableResult
    public func discard(sha256: String) -> Bool {
        guard ContentID.isDigest(sha256) else { return false }
        return (try? FileManager.default.removeItem(atPath: completeFolder + "/" + sha256)) != nil
    }

    /// Deletes complete files `keep` does not name and no one wanted for `grace`, and partial files
    /// untouched for `grace`. Returns what was deleted.
    @discardableResult
    public func collect(keeping keep: Set<String>, grace: TimeInterval, now: Date = Date()) -> [String] {
        var deleted: [String] = []
        let wanted = lastWanted.withLock { $0 }
        // What is left in partial/ of a file held whole (its list and claims, when a power cut came
        // between its keeping and their removal) is of no use: it goes whatever is kept.
        let complete = Set((try? FileManager.default.contentsOfDirectory(atPath: completeFolder)) ?? [])
        for name in (try? FileManager.default.contentsOfDirectory(atPath: partialFolder)) ?? []
        where complete.contains(String(name.prefix { $0 != "." })) {
            let path = partialFolder + "/" + name
            if (try? FileManager.default.removeItem(atPath: path)) != nil { deleted.append(path) }
        }
        for folder in [completeFolder, partialFolder] {
            // A partial file's list and claims (`<hex>.list`, `<hex>.chunks`) go with it.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where !keep.contains(String(name.prefix { $0 != "." })) {
                let path = folder + "/" + name
                let modified =
                    (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? now
                let last = max(modified, wanted[name] ?? .distantPast)
                guard now.timeIntervalSince(last) >= grace else { continue }
                if (try? FileManager.default.removeItem(atPath: path)) != nil { deleted.append(path) }
            }
        }
        return deleted
    }

    public static func size(of path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return UInt64(info.st_size)
    }
}

/// Why content could not be stored or fetched; each reads as a sentence.
public enum ContentError: Error, Hashable, CustomStringConvertible {
    case storage(String)
    case corrupt(ContentID, String)
    case noSpace(ContentID, needed: UInt64, free: UInt64)
    case unavailable(ContentID, String)

    public var description: String {
        switch self {
        case .storage(let reason): return "content store: \(reason)"
        case .corrupt(let id, let reason): return "\(id) arrived damaged: \(reason)"
        case .noSpace(let id, let needed, let free):
            return "no room for \(id): \(needed) more bytes needed, \(free) free"
        case .unavailable(let id, let reason): return "\(id) could not be fetched: \(reason)"
        }
    }
}
