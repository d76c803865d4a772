import Foundation

/// A node's timeline on disk, so that a node that restarts (or a whole wall after a power cut)
/// knows what to show without a controller.
///
/// Saving writes a temporary file beside the state file, flushes it to disk and renames it over
/// the old one, so a crash leaves either the old timeline or the new one, never half of either.
/// Saving never reads the old file: which version is newer is the node's decision, made on the
/// timeline it holds, so a damaged file can always be replaced. Reading back at start checks the
/// file as strictly as a timeline from the network (`recover(checking:)`); one that fails is set
/// aside for the operator, not trusted and not deleted.
public struct TimelineStore: Sendable {
    /// The state file, e.g. /var/lib/lockstep/lobby-a.timeline.json.
    public let path: String
    /// The largest state file read back: a timeline at every limit is far smaller.
    public static let largestFile = 16 * 1024 * 1024

    public init(path: String) {
        self.path = path
    }

    /// What reading the state file back found.
    public enum Recovered: Sendable, Equatable {
        /// No timeline was ever stored.
        case nothing
        case timeline(Timeline)
        /// The file could not be used: why, and where it now is (nil when it could not be moved).
        case setAside(problem: String, keptAt: String?)
    }

    /// Reads the stored timeline back and checks it with `check` (the node's own checks: its
    /// wall, the limits); a file that is unreadable, not a timeline, or fails the checks is renamed
    /// to `<path>.unusable-<UTC time>` and reported.
    public func recover(checking check: (Timeline) throws -> Void) -> Recovered {
        let problem: String
        do {
            guard let timeline = try load() else { return .nothing }
            do {
                try timeline.validate()
                try check(timeline)
                return .timeline(timeline)
            } catch {
                problem = "\(error)"
            }
        } catch {
            problem = error.description
        }
        return .setAside(problem: problem, keptAt: setAside())
    }

    /// The stored timeline as it is on disk, unchecked; nil when none was ever saved.
    public func load() throws(TimelineStoreError) -> Timeline? {
        let data = try read()
        guard let data else { return nil }
        do {
            return try JSONDecoder().decode(Timeline.self, from: data)
        } catch let error as DecodingError {
            throw .corrupt(path: path, reason: Self.describe(error))
        } catch {
            throw .corrupt(path: path, reason: "\(error)")
        }
    }

    /// Stores `timeline` in place of whatever is stored.
    public func save(_ timeline: Timeline) throws(TimelineStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(timeline)
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
        try write(data)
    }

    /// The file's bytes, nil when there is none.
    private func read() throws(TimelineStoreError) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var information = stat()
        guard fstat(descriptor, &information) == 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard information.st_mode & S_IFMT == S_IFREG else {
            let kind = information.st_mode & S_IFMT == S_IFDIR ? "a directory" : "not a regular file"
            throw .unreadable(path: path, reason: "it is \(kind)")
        }
        guard information.st_size <= Self.largestFile else {
            throw .unreadable(
                path: path, reason: "it holds \(information.st_size) bytes; a timeline is at most \(Self.largestFile)")
        }
        var data = Data(count: Int(information.st_size))
        var offset = 0
        while offset < data.count {
            let count = data.withUnsafeMutableBytes { bytes in
                Foundation.read(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            offset += count
        }
        return data.prefix(offset)
    }

    /// Moves the unusable state file out of the way; where it went, or nil.
    private func setAside() -> String? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let stamp = formatter.string(from: Date()).replacingOccurrences(of: ":", with: "")
        var target = "\(path).unusable-\(stamp)"
        var attempt = 1
        while access(target, F_OK) == 0 {
            attempt += 1
            target = "\(path).unusable-\(stamp)-\(attempt)"
        }
        return rename(path, target) == 0 ? target : nil
    }

    private func write(_ data: Data) throws(TimelineStoreError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try makeFolder(folder)
        // A name no other write uses, in this process or another (a node and a test beside it).
        let temporary = path + ".tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard descriptor >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
        let written = data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        var reason = String(cString: strerror(errno))
        let synced = written && fsync(descriptor) == 0
        if written, !synced { reason = String(cString: strerror(errno)) }
        close(descriptor)
        guard synced else {
            unlink(temporary)
            throw .unwritable(path: path, reason: reason)
        }
        guard rename(temporary, path) == 0 else {
            let renameReason = errno == EISDIR ? "a directory is in its place" : String(cString: strerror(errno))
            unlink(temporary)
            throw .unwritable(path: path, reason: renameReason)
        }
        // The rename itself is durable only once the folder is flushed.
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    /// Makes `folder` and the folders above it that are missing, saying which one could not be made.
    private func makeFolder(_ folder: String) throws(TimelineStoreError) {
        var made = ""
        for component in folder.split(separator: "/", omittingEmptySubsequences: true) {
            made += "/" + component
            if mkdir(made, 0o750) == 0 { continue }
            if errno == EEXIST {
                var information = stat()
                if stat(made, &information) == 0, information.st_mode & S_IFMT == S_IFDIR { continue }
                throw .unwritable(path: path, reason: "cannot create \(folder): \(made) is not a directory")
            }
            throw .unwritable(path: path, reason: "cannot create \(made): \(String(cString: strerror(errno)))")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "missing \((context.codingPath.map(\.stringValue) + [key.stringValue]).joined(separator: "."))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? context.debugDescription : "\(keys): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

/// Why a timeline could not be stored or read back.
public enum TimelineStoreError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case corrupt(path: String, reason: String)
    case unwritable(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): cannot read the stored timeline: \(reason)"
        case .corrupt(let path, let reason): return "\(path): the stored timeline is not a timeline: \(reason)"
        case .unwritable(let path, let reason): return "\(path): cannot store the timeline: \(reason)"
        }
    }
}
