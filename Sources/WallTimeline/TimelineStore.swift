import Foundation

/// A node's timeline on disk, so that a node that restarts (or a whole wall after a power cut)
/// knows what to show without a controller.
///
/// Saving writes a temporary file beside the state file, flushes it to disk and renames it over
/// the old one, so a crash leaves either the old timeline or the new one, never half of either; a
/// version not newer than the one stored is refused.
public struct TimelineStore: Sendable {
    /// The state file, e.g. /var/lib/lockstep/timeline.json.
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The stored timeline, or nil when none was ever saved.
    public func load() throws(TimelineStoreError) -> Timeline? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw .unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        do {
            return try JSONDecoder().decode(Timeline.self, from: data)
        } catch {
            throw .corrupt(path: path, reason: "\(error)")
        }
    }

    /// Stores `timeline` if it is newer than the stored one (or none is stored).
    public func save(_ timeline: Timeline) throws(TimelineStoreError) {
        if let stored = try load() {
            do {
                try stored.check(replacement: timeline)
            } catch {
                throw .refused(error)
            }
        }
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

    private func write(_ data: Data) throws(TimelineStoreError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: path, reason: "cannot create \(folder): \((error as NSError).localizedDescription)")
        }
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
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
        let reason = String(cString: strerror(errno))
        let synced = written && fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw .unwritable(path: path, reason: reason)
        }
        // The rename itself is durable only once the folder is flushed.
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }
}

/// Why a timeline could not be stored or read back.
public enum TimelineStoreError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case corrupt(path: String, reason: String)
    case unwritable(path: String, reason: String)
    case refused(TimelineError)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): cannot read the stored timeline: \(reason)"
        case .corrupt(let path, let reason): return "\(path): the stored timeline is not readable JSON: \(reason)"
        case .unwritable(let path, let reason): return "\(path): cannot store the timeline: \(reason)"
        case .refused(let error): return "not stored: \(error)"
        }
    }
}
