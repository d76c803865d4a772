import Foundation
import LockstepLocks

/// Records kept as JSON lines in a file that outlives the process, bounded: past `largestFile` the
/// file becomes `<file>.1`, the one before `<file>.2`, up to `keptFiles - 1` older ones, the oldest
/// dropped. Read back at start: a line that is not a record (a power cut in the middle of one) is
/// skipped and counted, never taken for one, and the next record starts on a line of its own.
/// Each record is on the disk (`fsync`) when `append` returns.
///
/// The control daemon's audit log and each node's proof of play are kept this way.
public final class JSONLinesLog<Record: Codable & Sendable>: Sendable {
    public let path: String
    public let largestFile: Int
    /// The current file and the rotated ones: at most `keptFiles * largestFile` bytes on the disk.
    public let keptFiles: Int

    /// The current file's size, and whether it ends inside a line (a cut write).
    private let state: Mutex<(size: Int, midLine: Bool)>

    /// Opens the log at `path` (its folder is made on the first record).
    public init(path: String, largestFile: Int = 1 << 20, keptFiles: Int = 2) {
        self.path = path
        self.largestFile = max(largestFile, 1)
        self.keptFiles = max(keptFiles, 1)
        let text = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        state = Mutex((text.count, !text.isEmpty && text.last != UInt8(ascii: "\n")))
    }

    /// The files, oldest first.
    public var files: [String] {
        (1..<keptFiles).reversed().map { "\(path).\($0)" } + [path]
    }

    /// Every record kept, oldest first, and how many lines were not records.
    public func read() -> (records: [Record], unreadable: Int) {
        var records: [Record] = []
        var unreadable = 0
        let decoder = JSONDecoder()
        for file in files {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: file)) else { continue }
            for line in data.split(separator: UInt8(ascii: "\n")) {
                if let record = try? decoder.decode(Record.self, from: Data(line)) {
                    records.append(record)
                } else {
                    unreadable += 1
                }
            }
        }
        return (records, unreadable)
    }

    /// Adds `record` at the end, rotating first when the file would grow past `largestFile`.
    /// Returns why it could not be written, if it could not.
    @discardableResult
    public func append(_ record: Record) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(record) else { return "the record cannot be encoded" }
        return state.withLock { state in
            let line = (state.midLine ? Data("\n".utf8) : Data()) + data + Data("\n".utf8)
            if state.size > 0, state.size + line.count > largestFile {
                rotate()
                state.size = 0
                state.midLine = false
            }
            let folder = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: path) {
                guard
                    FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
                else { return "cannot create \(path)" }
            }
            do {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                defer { try? handle.close() }
                try handle.seekToEnd()
                try handle.write(contentsOf: line)
                try handle.synchronize()
                state.size += line.count
                state.midLine = false
                return nil
            } catch {
                // What reached the file may end inside a line: the next record starts on its own.
                state.midLine = true
                return "cannot write \(path): \(error.localizedDescription)"
            }
        }
    }

    /// `<file>.k` becomes `<file>.k+1` (the oldest dropped), the current file `<file>.1`.
    private func rotate() {
        let manager = FileManager.default
        guard keptFiles > 1 else {
            try? manager.removeItem(atPath: path)
            return
        }
        try? manager.removeItem(atPath: "\(path).\(keptFiles - 1)")
        for index in stride(from: keptFiles - 2, through: 1, by: -1) {
            try? manager.moveItem(atPath: "\(path).\(index)", toPath: "\(path).\(index + 1)")
        }
        try? manager.moveItem(atPath: path, toPath: "\(path).1")
    }
}
