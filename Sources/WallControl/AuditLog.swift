import Foundation
import LockstepLocks

/// One thing done to the wall, or refused: who (which credential, which login or input), what,
/// when, the timeline version it made.
public struct AuditRecord: Sendable, Hashable, Codable {
    /// Milliseconds since 1970 on the controller's clock.
    public var atUnixMs: Int64
    /// The credential: `operator`, `viewer`, `unknown` (a login refused), or `show control`.
    public var who: String
    /// Which login (`login 7`) or which sender (`osc 10.0.0.5:53211`).
    public var via: String?
    /// What was asked: `pause`, `cue intro`, `push slate.mp4`, `login`, `logout`.
    public var action: String
    /// The timeline version it made.
    public var version: UInt64?
    /// `done`, `refused` or `failed`, and why for the last two.
    public var outcome: String
    public var reason: String?

    public init(
        atUnixMs: Int64 = AuditRecord.now(), who: String, via: String?, action: String, version: UInt64? = nil,
        outcome: String, reason: String? = nil
    ) {
        self.atUnixMs = atUnixMs
        self.who = who
        self.via = via
        self.action = action
        self.version = version
        self.outcome = outcome
        self.reason = reason.map { String($0.prefix(AuditLog.longestReason)) }
    }

    public static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

/// The control daemon's audit log: every action taken on the wall and every refusal, as JSON lines
/// in a file that outlives the daemon, bounded (past `largestFile` it becomes `<file>.1`, the one
/// before that dropped). Read back at start: a line that is not a record (a power cut in the middle
/// of one) is skipped and counted, never taken for one.
public final class AuditLog: Sendable {
    public let path: String
    /// Past this size the file is rotated (1 MiB unless told: some 5,000 records).
    public let largestFile: Int
    /// How many records are kept in memory for the console.
    public static let recentKept = 50
    static let longestReason = 500

    /// The newest records, the file's size, and whether it ends inside a line (a cut write: the next
    /// record starts on a line of its own).
    private let state: Mutex<(recent: [AuditRecord], size: Int, midLine: Bool)>
    /// Lines read back at start that were not records.
    public let unreadableLines: Int

    /// Opens the log at `path`, reading back its newest records.
    public init(path: String, largestFile: Int = 1 << 20) {
        self.path = path
        self.largestFile = largestFile
        var recent: [AuditRecord] = []
        var unreadable = 0
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            if let record = try? JSONDecoder().decode(AuditRecord.self, from: Data(line.utf8)) {
                recent.append(record)
                if recent.count > Self.recentKept * 2 { recent.removeFirst(Self.recentKept) }
            } else {
                unreadable += 1
            }
        }
        unreadableLines = unreadable
        state = Mutex((Array(recent.suffix(Self.recentKept)), text.utf8.count, !text.isEmpty && !text.hasSuffix("\n")))
    }

    /// The newest records, oldest first.
    public var recent: [AuditRecord] { state.withLock { $0.recent } }

    /// Adds `record` to the file and to the recent ones. A record that cannot be written is kept in
    /// memory and the failure returned, so the caller can say so.
    @discardableResult
    public func record(_ record: AuditRecord) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(record) else { return "the record cannot be encoded" }
        return state.withLock { state in
            let line = (state.midLine ? Data("\n".utf8) : Data()) + data + Data("\n".utf8)
            state.recent = Array((state.recent + [record]).suffix(Self.recentKept))
            if state.size + line.count > largestFile {
                try? FileManager.default.removeItem(atPath: path + ".1")
                try? FileManager.default.moveItem(atPath: path, toPath: path + ".1")
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
                state.size += line.count
                state.midLine = false
                return nil
            } catch {
                return "cannot write \(path): \(error.localizedDescription)"
            }
        }
    }
}
