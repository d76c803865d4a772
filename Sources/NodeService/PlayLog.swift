import Foundation
import LockstepLocks
import LockstepTime
import Logging
import WallContent
import WallProtocol
import WallTimeline

/// Proof of play: what this screen presented, from when to when, kept in the node's state folder
/// (`<wall>-<node>.plays.jsonl`, `JSONLinesLog`: 4 MiB a file, 4 files, some 48,000 plays) across
/// restarts.
///
/// The node is sampled ten times a second (`PlayTracker` finds each play's edges on the timeline to
/// the nanosecond, whatever the sample's delay). The play on the screen is written down every
/// 10 s beside the log (`.open`): after a restart or a power cut it is kept as ended "node stopped"
/// at the last time written, so a play is never claimed for time the node cannot vouch for.
public final class PlayLog: Sendable {
    static let sampleInterval = Duration.milliseconds(100)
    static let checkpointInterval = MediaTime(value: 10, timescale: 1)

    let file: JSONLinesLog<PlayRecord>
    /// The play on the screen as far as it has gone, written every `checkpointInterval`.
    let openFile: String
    private let node: String
    private let roots: MediaRoots
    private let logger: Logger
    private let tracker: Mutex<PlayTracker>
    /// The play on the screen, when it was last sampled, on which clock, and when it was last
    /// written down.
    private let open = Mutex<(play: PlayTracker.Play?, utc: UTC, writtenAt: MediaTime?)>((nil, UTC(), nil))
    /// SHA-256 of hand-placed files by path, with the size and modification time it was read at.
    private let digests = Mutex<[String: (size: UInt64, modified: Date, sha256: String)]>([:])
    private let hashing = Mutex<Set<String>>([])

    public init(settings: NodeSettings, logger: Logger) {
        file = JSONLinesLog(path: settings.playsFile, largestFile: 4 << 20, keptFiles: 4)
        openFile = settings.playsFile + ".open"
        node = settings.id
        roots = settings.mediaRoots
        self.logger = logger
        tracker = Mutex(PlayTracker(node: settings.id, betweenShowsStill: settings.still?.path))
    }

    /// Keeps the play a node that stopped had on its screen (read back from `.open`, checked), as
    /// ended "node stopped". Called once at start, before the node plays.
    func recover(_ node: Node) {
        guard let data = FileManager.default.contents(atPath: openFile) else { return }
        defer { try? FileManager.default.removeItem(atPath: openFile) }
        guard var record = try? JSONDecoder().decode(PlayRecord.self, from: data), record.node == self.node,
            record.toUnixMs >= record.fromUnixMs
        else {
            logger.warning(
                "the play on the screen when the node stopped is unreadable: not kept",
                metadata: ["file": "\(openFile)"])
            return
        }
        record.ended = .nodeStopped
        keep(record, node: node)
    }

    /// Samples the node until cancelled; then the play on the screen ends "node stopped".
    func run(_ node: Node) async {
        var frameSequence = node.frames.counts.presented
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.sampleInterval)
            guard let clock = node.clock.masterClock, node.clock.isUsable else { continue }
            let timeline = await node.follower.timeline
            let (records, _) = node.frames.records(after: frameSequence, limit: 4096)
            frameSequence = records.last?.sequence ?? frameSequence
            let shown = node.screen.shown
            let now = clock.now()
            let utc = UTC(now: now, realtime: node.clock.masterIsRealtime == true)
            let sample = PlayTracker.Sample(
                now: now, timeline: timeline, frameTimes: records.map { $0.wallTime ?? $0.dueAt },
                pictureShown: shown.show != nil && shown.problem == nil, problem: shown.problem)
            let (ended, current) = tracker.withLock { tracker in (tracker.observe(sample), tracker.current) }
            if let ended { keep(ended, utc: utc, node: node) }
            checkpoint(current, now: now, utc: utc)
        }
        if let clock = node.clock.masterClock {
            let now = clock.now()
            if let ended = tracker.withLock({ $0.stop(at: now) }) {
                keep(ended, utc: UTC(now: now, realtime: node.clock.masterIsRealtime == true), node: node)
            }
            try? FileManager.default.removeItem(atPath: openFile)
        }
    }

    /// The plays kept that overlap [`from`, `to`) (milliseconds since 1970, UTC), oldest first, at
    /// most `limit` (the oldest kept when more lie in it); and the play on the screen if it does.
    public func plays(fromUnixMs from: Int64, toUnixMs to: Int64, limit: Int = PlaysReply.mostPlays) -> PlaysReply {
        let (records, unreadable) = file.read()
        let inside = records.filter { $0.overlaps(fromUnixMs: from, toUnixMs: to) }
        let (playing, utc) = open.withLock { ($0.play, $0.utc) }
        let current = playing.map { record($0, to: $0.lastSeen, ending: .playing, utc: utc) }
            .flatMap { $0.overlaps(fromUnixMs: from, toUnixMs: to) ? $0 : nil }
        return PlaysReply(
            node: node, plays: Array(inside.prefix(limit)), current: current, truncated: inside.count > limit,
            unreadableLines: unreadable)
    }

    /// Writes `ended` to the log; a play that cannot be written is a problem of the node's
    /// `plays` service (its status, metrics and the console say so) until one can again.
    private func keep(_ ended: PlayTracker.Ended, utc: UTC, node: Node) {
        keep(record(ended.play, to: ended.to, ending: ended.ending, utc: utc), node: node)
    }

    private func keep(_ record: PlayRecord, node: Node) {
        node.serviceProblem("plays", file.append(record).map { "a play cannot be kept: \($0)" })
    }

    /// Writes the play on the screen down beside the log, at most every `checkpointInterval`.
    private func checkpoint(_ playing: PlayTracker.Play?, now: MediaTime, utc: UTC) {
        let due = open.withLock { open -> Bool in
            let changed = open.play?.key != playing?.key
            open.play = playing
            open.utc = utc
            guard changed || (open.writtenAt.map { now - $0 >= Self.checkpointInterval } ?? true) else { return false }
            open.writtenAt = now
            return true
        }
        guard due else { return }
        guard let playing,
            let data = try? JSONEncoder().encode(record(playing, to: now, ending: .nodeStopped, utc: utc))
        else {
            try? FileManager.default.removeItem(atPath: openFile)
            return
        }
        try? data.write(to: URL(fileURLWithPath: openFile), options: .atomic)
    }

    /// Master times in UTC: the master's own when it serves real time, else this machine's clock's
    /// reading at the same moment.
    struct UTC: Sendable {
        var realtime = false
        /// This machine's real time minus the master's, at a sample.
        var offset: Int64 = 0

        init() {}

        /// The mapping at master time `now`, read just before.
        init(now: MediaTime, realtime: Bool) {
            self.realtime = realtime
            var system = timespec()
            clock_gettime(CLOCK_REALTIME, &system)
            offset = Int64(system.tv_sec) * 1_000_000_000 + Int64(system.tv_nsec) - (now.nanoseconds ?? 0)
        }

        func unixMs(_ time: MediaTime) -> Int64 {
            let nanoseconds = (time.nanoseconds ?? 0) + (realtime ? 0 : offset)
            return nanoseconds >= 0 ? (nanoseconds + 500_000) / 1_000_000 : -((-nanoseconds + 500_000) / 1_000_000)
        }
    }

    /// `play` as a record, its master times in UTC.
    private func record(_ play: PlayTracker.Play, to: MediaTime, ending: PlayRecord.Ending, utc: UTC) -> PlayRecord {
        let problem: String? =
            switch play.kind {
            case .clip where play.frames == 0: play.problem ?? "the screen presented no frame of it"
            case .still where !play.shown: play.problem ?? "the screen did not show it"
            default: nil
            }
        return PlayRecord(
            node: node, kind: play.kind, media: play.media, sha256: sha256(of: play), playlist: play.playlist,
            cue: play.cue, entry: play.entry, pass: play.pass, mediaFromSeconds: play.mediaFrom?.seconds,
            mediaToSeconds: play.mediaTime(at: to)?.seconds, fromUnixMs: utc.unixMs(play.from),
            toUnixMs: utc.unixMs(to),
            clock: utc.realtime ? "master" : "node", ended: ending, frames: play.kind == .clip ? play.frames : nil,
            version: play.version, problem: problem)
    }

    /// The play's file's SHA-256: its content ID, else the hand-placed file's, read once (in the
    /// background, the first time it plays) and again when it changes.
    private func sha256(of play: PlayTracker.Play) -> String? {
        if let content = play.content { return content.sha256 }
        guard let path = try? roots.resolve(play.media),
            let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = (attributes[.size] as? NSNumber)?.uint64Value,
            let modified = attributes[.modificationDate] as? Date
        else { return nil }
        if let known = digests.withLock({ $0[path] }), known.size == size, known.modified == modified {
            return known.sha256
        }
        guard hashing.withLock({ $0.insert(path).inserted }) else { return nil }
        Task.detached(priority: .background) { [self] in
            defer { _ = hashing.withLock { $0.remove(path) } }
            guard let id = try? ContentDigest.id(ofFileAt: path) else { return }
            digests.withLock { $0[path] = (size, modified, id.sha256) }
        }
        return nil
    }
}
