import Foundation
import LockstepGuard
import LockstepLocks
import LockstepTime
import ShowControl
import WallContent
import WallControl
import WallProtocol
import WallTimeline

/// The operator console of `wallctl serve`: logins, the shared watch on the wall, and the actions an
/// operator takes, each carried out by the same code as the `wallctl` command of the same name
/// (`WallVerb`, `CueControl`, `ContentControl`), never by a way of its own.
public final class Console: Sendable {
    public let sessions: ConsoleSessions
    public let monitor: WallMonitor
    /// The wall actions are carried out on. An action waits for every node up to its limit (10 s,
    /// as show control), not a command line's 30 s: the console takes one action at a time.
    let actionWall: Wall
    let config: WallConfig
    let library: ContentStore?
    /// Where the nodes fetch pushed files from: this daemon's library.
    let origin: String?
    /// Whether the daemon serves over TLS: cookies are then Secure.
    public let secure: Bool
    /// The largest file a console may upload.
    public let uploadLimit: UInt64
    /// Where every action and refusal is recorded, if anywhere.
    public let audit: AuditLog?
    /// How far ahead an action takes effect: the least a node needs to prepare, as show control.
    static let lead = TimelineControl.minimumEditLead

    private let busy = Mutex<String?>(nil)
    /// Whether a proof-of-play report is being gathered (`GET /console/plays`).
    let reporting = Mutex(false)
    private let actionCount = Mutex(0)
    private let pushes: AsyncStream<PushJob>
    private let pushContinuation: AsyncStream<PushJob>.Continuation

    struct PushJob: Sendable {
        var id: ContentID
        var name: String
    }

    /// - Parameters:
    ///   - token: the wall's control token, which a login must give; nil when the wall has none.
    ///   - viewerToken: the viewers' token: a login with it watches and takes no action.
    ///   - library: the daemon's content library, which uploads go to; nil: no pushes.
    ///   - actionWaitLimit: how long an action waits for what it needs (every node answering with
    ///     a usable clock, media present) before it fails naming what it waited for.
    public init(
        config: WallConfig, token: ControlToken?, viewerToken: ControlToken? = nil, secure: Bool,
        library: ContentStore?,
        uploadLimit: UInt64 = 8 << 30, sessionLifetime: MediaTime = MediaTime(value: 12 * 3600, timescale: 1),
        actionWaitLimit: MediaTime = MediaTime(value: 10, timescale: 1), audit: AuditLog? = nil
    ) throws {
        self.config = config
        self.audit = audit
        sessions = ConsoleSessions(token: token, viewerToken: viewerToken, lifetime: sessionLifetime)
        monitor = WallMonitor(
            wall: try Wall(config: config, waitLimit: MediaTime(value: 1, timescale: 1)), audit: audit?.recent ?? [])
        actionWall = try Wall(config: config, waitLimit: actionWaitLimit)
        self.secure = secure
        self.library = library
        origin = config.controllerOrigin
        self.uploadLimit = uploadLimit
        (pushes, pushContinuation) = AsyncStream.makeStream(of: PushJob.self, bufferingPolicy: .bufferingNewest(4))
    }

    /// Watches the wall and carries out pushes until the task is cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.monitor.run() }
            group.addTask {
                for await job in self.pushes {
                    guard !Task.isCancelled else { break }
                    await self.distribute(job)
                }
            }
            await withTaskCancellationHandler {
                await group.next()
            } onCancel: {
                pushContinuation.finish()
            }
            group.cancelAll()
        }
    }

    /// Closes the connections to the nodes: after `run`, or when it never ran.
    public func shutdown() async {
        try? await monitor.wall.shutdown()
        try? await actionWall.shutdown()
    }

    /// What the page shows of the wall's config, for `session`.
    func info(_ session: ConsoleSessions.Session) -> WallInfo {
        let now = MediaTime(nanoseconds: Int64(Date().timeIntervalSince1970) * 1_000_000_000)
        let schedule =
            config.schedule.map { config in
                config.calendar.changes(from: now, days: 2).prefix(6).map { ScheduleListing.line($0) }
            } ?? []
        return WallInfo(
            name: config.name, canvasWidth: config.canvas.width, canvasHeight: config.canvas.height,
            tiles: config.nodes.map {
                WallInfo.Tile(id: $0.id, x: $0.tile.x, y: $0.tile.y, width: $0.tile.width, height: $0.tile.height)
            },
            playlist: config.playlistItems.map {
                WallInfo.Entry(media: $0.media, inS: $0.inPoint.seconds, outS: $0.outPoint?.seconds)
            },
            loops: config.loop, cues: config.cues.mapValues { "\($0)" }, schedule: schedule, csrf: session.csrf,
            uploadLimitBytes: library == nil ? 0 : uploadLimit, role: session.role.rawValue)
    }

    // MARK: Actions

    /// What a console asks the wall to do, as its JSON body says it.
    public struct ActionRequest: Sendable, Hashable, Codable {
        public var verb: String
        public var seconds: Double?
        public var entry: Int?
        public var name: String?
        public var image: String?
    }

    /// Why an action is not taken, with the HTTP status that says so.
    public struct ActionError: Error, CustomStringConvertible {
        public var status: Int
        public var description: String
    }

    /// The verb `request` names, checked as the command line checks its arguments.
    func verb(_ request: ActionRequest) throws(ActionError) -> ShowOrVerb {
        func bad(_ text: String) -> ActionError { ActionError(status: 400, description: text) }
        switch request.verb {
        case "play": return .play
        case "pause": return .verb(.pause)
        case "resume": return .verb(.resume)
        case "next": return .verb(.next)
        case "previous": return .verb(.previous)
        case "black": return .verb(.black)
        case "stop": return .verb(.stop)
        case "seek":
            guard let seconds = request.seconds, seconds.isFinite, seconds >= 0, seconds < 1e7 else {
                throw bad("seek: \"seconds\" must be a number of seconds, zero or more")
            }
            if let entry = request.entry, entry < 0 { throw bad("seek: \"entry\" counts from 0, got \(entry)") }
            return .verb(
                .seek(entry: request.entry, itemTime: MediaTime(seconds: seconds, preferredTimescale: 1_000_000)))
        case "identify":
            let seconds = request.seconds ?? 10
            guard seconds.isFinite, seconds >= 1, seconds <= 600 else {
                throw bad("identify: \"seconds\" must be 1 to 600, got \(seconds)")
            }
            return .verb(.identify(duration: MediaTime(seconds: seconds, preferredTimescale: 1000)))
        case "still":
            guard let image = request.image, !image.isEmpty, image.utf8.count <= 4096, image.hasPrefix("/") else {
                throw bad("still: \"image\" must be an absolute path in every node's media roots")
            }
            return .verb(.still(image: image))
        case "cue":
            guard let name = request.name, ShowCommand.isValidCueName(Substring(name)) else {
                throw bad("cue: \"name\" must be a cue name (1 to 64 letters, digits, -, _ and .)")
            }
            guard config.cues[name] != nil else {
                let known = config.cues.keys.sorted().joined(separator: ", ")
                throw ActionError(
                    status: 404,
                    description:
                        "no cue \"\(name)\" in wall \(config.name): its cues are \(known.isEmpty ? "none" : known)")
            }
            return .cue(name)
        default:
            throw ActionError(
                status: 404,
                description:
                    "no action \"\(request.verb.prefix(40))\": play, pause, resume, seek, next, previous, black, "
                    + "stop, still, identify, cue")
        }
    }

    enum ShowOrVerb {
        /// A new timeline: the config's schedule, or else its playlist, as `wallctl play` with no files.
        case play
        case verb(WallVerb)
        case cue(String)
    }

    /// Records `record` in the audit log and shows it to every console.
    func note(_ record: AuditRecord) {
        audit?.record(record)
        monitor.record(record)
    }

    /// Notes what `session` (nil: no login) asked and what came of it.
    func note(
        _ session: ConsoleSessions.Session?, _ action: String, version: UInt64? = nil, outcome: String,
        reason: String? = nil
    ) {
        note(
            AuditRecord(
                who: session?.actor.who ?? "unknown", via: session?.actor.via, action: action, version: version,
                outcome: outcome, reason: reason))
    }

    /// Carries `request` out for `session`: the timeline edit is made and sent to every node; what
    /// each node then does the monitor sees. One action at a time: a second while one is being
    /// sent is refused, naming the first. Each outcome goes to the audit log.
    public func act(_ request: ActionRequest, by session: ConsoleSessions.Session? = nil) async throws(ActionError)
        -> ActionRecord
    {
        let name = request.verb == "cue" ? "cue \(request.name ?? "")" : String(request.verb.prefix(64))
        do throws(ActionError) {
            let record = try await carryOut(request, named: name)
            note(session, name, version: record.version, outcome: "done")
            return record
        } catch {
            note(session, name, outcome: error.status < 500 ? "refused" : "failed", reason: error.description)
            throw error
        }
    }

    private func carryOut(_ request: ActionRequest, named name: String) async throws(ActionError) -> ActionRecord {
        let what = try verb(request)
        if let other = busy.withLock({ current -> String? in
            if let current { return current }
            current = name
            return nil
        }) {
            throw ActionError(status: 409, description: "\(other) is being sent to the wall: try again in a moment")
        }
        defer { busy.withLock { $0 = nil } }
        let id = actionCount.withLock { count in
            count += 1
            return count
        }
        var record = ActionRecord(id: id, verb: name, requestedUnixMs: WallMonitor.unixMs())
        monitor.record(record)
        let requestedMaster = monitor.masterNow()
        do {
            let timeline: Timeline
            switch what {
            case .play:
                timeline = try await TimelineControl(wall: actionWall).playShow(lead: Self.lead)
            case .verb(let verb):
                timeline = try await verb.carryOut(
                    on: TimelineControl(wall: actionWall), lead: Self.lead, confirming: false)
            case .cue(let cue):
                timeline = try await CueControl.prepare(actionWall, only: cue).perform(
                    .cue(cue), lead: Self.lead, confirming: false
                ).timeline
            }
            record.version = timeline.version
            record.sentUnixMs = WallMonitor.unixMs()
            // The edit's time: the first segment after the request (what came before is older).
            if let requestedMaster,
                let at = timeline.segments.compactMap(\.from.nanoseconds).filter({ $0 > requestedMaster }).min()
            {
                record.effectiveMasterNs = at
                record.dueUnixMs = monitor.masterNow().map { record.sentUnixMs! + (at - $0) / 1_000_000 }
            }
            monitor.record(record)
            return record
        } catch {
            record.error = "\(error)"
            monitor.record(record)
            throw ActionError(status: ControlError.httpStatus(of: error), description: "\(name): \(error)")
        }
    }

    // MARK: Pushes

    /// Takes an uploaded file into the library (its digest computed here) and starts sending it to
    /// every node, as `wallctl push` does with the daemon's library: the nodes fetch it from each
    /// other and from here, and the monitor reports their progress.
    ///
    /// - Parameter body: the file's bytes as they arrive.
    public func upload(
        name: String, size: UInt64, body: some AsyncSequence<Data, any Error>,
        by session: ConsoleSessions.Session? = nil
    ) async throws(ActionError) -> PushView {
        do throws(ActionError) {
            let view = try await receive(name: name, size: size, body: body)
            note(session, "push \(name)", outcome: "done", reason: nil)
            return view
        } catch {
            note(session, "push \(name)", outcome: error.status < 500 ? "refused" : "failed", reason: error.description)
            throw error
        }
    }

    private func receive(name: String, size: UInt64, body: some AsyncSequence<Data, any Error>)
        async throws(ActionError)
        -> PushView
    {
        guard let library else {
            throw ActionError(status: 404, description: "this daemon keeps no content library")
        }
        guard size > 0, size <= uploadLimit else {
            throw ActionError(
                status: 413,
                description: "\(name): \(size) bytes; the console takes files of 1 byte to \(uploadLimit) bytes")
        }
        if let other = busy.withLock({ current -> String? in
            if let current { return current }
            current = "push \(name)"
            return nil
        }) {
            throw ActionError(status: 409, description: "\(other) is being sent to the wall: try again in a moment")
        }
        defer { busy.withLock { $0 = nil } }
        var view = PushView(name: name, size: size, state: "uploading", nodes: [])
        monitor.record(view)
        let folder = library.root + "/console-uploads"
        let path = folder + "/" + ConsoleSessions.randomHex()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else { throw ContentError.storage("cannot create \(path)") }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            var received: UInt64 = 0
            do {
                for try await chunk in body {
                    received += UInt64(chunk.count)
                    guard received <= size else {
                        throw ActionError(status: 413, description: "\(name): more bytes came than its size \(size)")
                    }
                    try handle.write(contentsOf: chunk)
                }
                try handle.close()
            } catch {
                try? handle.close()
                throw error
            }
            guard received == size else {
                throw ActionError(status: 400, description: "\(name): \(received) of its \(size) bytes came")
            }
            if let refusal = MediaSignature.refusal(ofFileAt: path, name: name) {
                throw ActionError(status: 415, description: refusal)
            }
            let id = try ContentDigest.id(ofFileAt: path)
            try library.adopt(fileAt: path, as: id)
            view.sha256 = id.sha256
            view.state = "distributing"
            monitor.record(view)
            pushContinuation.yield(PushJob(id: id, name: name))
            return view
        } catch {
            view.state = "failed"
            view.error = "\(error)"
            monitor.record(view)
            if let error = error as? ActionError { throw error }
            throw ActionError(status: 500, description: "\(name): \(error)")
        }
    }

    /// Every node told to hold `job`'s file, its progress reported to every console until all do.
    private func distribute(_ job: PushJob) async {
        var view = PushView(name: job.name, size: job.id.size, sha256: job.id.sha256, state: "distributing", nodes: [])
        guard let origin else { return }
        let needs = Dictionary(
            uniqueKeysWithValues: actionWall.clients.map { ($0.id, [ContentNeed(id: job.id, name: job.name)]) })
        let monitor = self.monitor
        let started = view
        do {
            try await ContentControl(wall: actionWall).distribute(needs, origins: [origin]) { progress in
                var update = started
                update.nodes = progress.map {
                    PushView.Progress(node: $0.node, have: $0.have, total: $0.total, done: $0.done, problem: $0.problem)
                }
                monitor.record(update)
            }
            view.state = "done"
            view.nodes = needs.keys.sorted().map {
                PushView.Progress(node: $0, have: job.id.size, total: job.id.size, done: true, problem: nil)
            }
        } catch {
            view.state = "failed"
            view.error = "\(error)"
        }
        monitor.record(view)
    }
}
