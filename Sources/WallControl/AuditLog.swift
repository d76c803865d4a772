import Foundation
import LockstepLocks
import WallProtocol

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
/// in a file that outlives the daemon, bounded (`JSONLinesLog`: past `largestFile` it becomes
/// `<file>.1`, the one before that dropped). Read back at start: a line that is not a record (a
/// power cut in the middle of one) is skipped and counted, never taken for one.
public final class AuditLog: Sendable {
    public var path: String { file.path }
    /// Past this size the file is rotated (1 MiB unless told: some 5,000 records).
    public var largestFile: Int { file.largestFile }
    /// How many records are kept in memory for the console.
    public static let recentKept = 50
    static let longestReason = 500

    private let file: JSONLinesLog<AuditRecord>
    /// The newest records.
    private let newest: Mutex<[AuditRecord]>
    /// Lines read back at start that were not records.
    public let unreadableLines: Int

    /// Opens the log at `path`, reading back its newest records.
    public init(path: String, largestFile: Int = 1 << 20) {
        file = JSONLinesLog(path: path, largestFile: largestFile, keptFiles: 2)
        let (records, unreadable) = file.read()
        unreadableLines = unreadable
        newest = Mutex(Array(records.suffix(Self.recentKept)))
    }

    /// The newest records, oldest first.
    public var recent: [AuditRecord] { newest.withLock { $0 } }

    /// Adds `record` to the file and to the recent ones. A record that cannot be written is kept in
    /// memory and the failure returned, so the caller can say so.
    @discardableResult
    public func record(_ record: AuditRecord) -> String? {
        newest.withLock { $0 = Array(($0 + [record]).suffix(Self.recentKept)) }
        return file.append(record)
    }
}
