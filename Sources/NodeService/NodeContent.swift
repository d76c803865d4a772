import Foundation
import LockstepLocks
import LockstepTime
import Logging
import WallContent
import WallControl
import WallProtocol
import WallTimeline

/// The content the wall distributes, on one node: its store, what it fetches and from where.
///
/// What the node wants is what its timeline names (each entry's content for this node, its tile
/// alone for a template) and what a `POST /content/fetch` asked for. Files are fetched in verified
/// chunks (`ChunkList`), several files at once (`parallelFiles`), so that one that cannot be fetched
/// (no room, no source) never holds up another. Each chunk comes from a source `ChunkPlanner` picks:
/// the rarest first, from the fastest peer that serves it, from an origin (`wallctl push`,
/// `wallctl serve`) when no peer has it; every chunk the node has checked is served to its peers
/// while it still receives the others. A source that fails or sends a damaged chunk is left alone
/// for a while (`SourceBackoff`), and asked again. A file is kept only once its size and SHA-256
/// match (`PartialFile`, `ContentStore`). All transfers together are paced to `bytesPerSecond`
/// (`content-bandwidth`) if set.
public final class NodeContent: Sendable {
    public let store: ContentStore
    /// What this node serves its peers: complete files, and the checked chunks of those arriving.
    public let server: ContentServer
    let nodeID: String
    let pacer: TransferPacer?
    /// The file the media roots hold under a name, if any: a file placed by hand is taken (copied)
    /// when its digest matches, instead of fetched.
    let handPlaced: @Sendable (String) -> String?
    private let logger: Logger
    private let state = Mutex(State())
    /// The files arriving, by SHA-256: what the server serves chunk by chunk.
    private let arriving: ArrivingFiles
    /// How long a file no timeline names is kept.
    let grace: TimeInterval
    /// How often the node looks for content it lacks.
    static let pollInterval = Duration.milliseconds(500)
    /// How often an unusable store is tried again (a disk remounted writable, space freed), and a
    /// file with no room.
    static let retryInterval = Duration.seconds(10)
    /// How long a file that found no room or a store it cannot write waits before it is tried again.
    static let noRoomWait = MediaTime(value: 10, timescale: 1)
    /// How long a file that found no source, or a wrong chunk list, waits before it is tried again.
    static let noSourceWait = MediaTime(value: 1, timescale: 1)
    /// Files fetched at once.
    static let parallelFiles = 3
    /// Chunks of one file asked for at once.
    static let chunksInFlight = 4
    /// Chunks asked of one source at once.
    static let chunksPerSource = 2
    /// How often a file's sources are asked which chunks they serve.
    static let offerInterval = MediaTime(value: 500, timescale: 1000)
    /// How long a source that answered busy is not asked again.
    static let busyWait = MediaTime(value: 300, timescale: 1000)

    private struct State {
        /// Asked for by `POST /content/fetch`, with the name it is known by.
        var requested: [ContentID: String] = [:]
        var origins: [String] = []
        var transfers: [ContentID: ContentTransfer] = [:]
        /// Bytes received in the last seconds, per file, for the rate.
        var recent: [ContentID: [(at: MediaTime, bytes: Int)]] = [:]
        /// Sources that failed lately, by address: left alone until their wait is over.
        var backoff = SourceBackoff()
        /// The files wanted and not held, as the run loop last found them.
        var wanted: Set<ContentID> = []
        /// Chunk lists found not to describe their file: never taken again.
        var rejectedLists: [ContentID: Set<ChunkList>] = [:]
        /// The files being fetched now, each by a task of its own.
        var fetching: Set<ContentID> = []
        /// Files whose last attempt found no way on, and when they are tried again.
        var retryAt: [ContentID: MediaTime] = [:]
        /// The IDs of hand-placed files, by path, size and modification time: each read once.
        var handPlaced: [String: (size: UInt64, modified: Date, id: ContentID?)] = [:]
    }

    public init(
        store: ContentStore, nodeID: String, bytesPerSecond: Double? = nil,
        grace: MediaTime = WallConfig.defaultContentGrace,
        handPlaced: @escaping @Sendable (String) -> String? = { _ in nil }, logger: Logger
    ) {
        self.grace = grace.seconds
        self.store = store
        self.handPlaced = handPlaced
        self.nodeID = nodeID
        pacer = TransferPacer(limit: bytesPerSecond)
        self.logger = logger
        let arriving = ArrivingFiles()
        self.arriving = arriving
        // What it sends its peers has a budget of its own: a link carries each way at its rate.
        server = ContentServer(
            limit: 4, pacer: TransferPacer(limit: bytesPerSecond),
            lookup: { [store] sha256 in store.file(sha256: sha256) },
            partial: { sha256 in arriving.files.withLock { $0[sha256] } },
            damaged: { [store, logger] sha256 in
                // Served no more, and fetched again if a timeline names it: the run loop finds it
                // missing at its next look.
                if store.discard(sha256: sha256) {
                    logger.error(
                        "content damaged on this node's disk: its copy no longer matches its SHA-256; deleted, to be fetched again",
                        metadata: ["content.id": "\(sha256)"])
                }
            })
    }

    /// Fetch `request`'s files too, from its origins if no peer holds them.
    public func want(_ request: ContentFetchRequest) throws(NodeError) {
        guard request.content.count <= 1024, request.origins.count <= 16,
            request.origins.allSatisfy({ ($0.hasPrefix("http://") || $0.hasPrefix("https://")) && $0.utf8.count < 512 })
        else {
            throw .rejected(
                RequestRejection(
                    field: "content", reason: "at most 1024 files and 16 origins, each http://HOST:PORT or https://"))
        }
        state.withLock { state in
            for need in request.content { state.requested[need.id] = need.name }
            for origin in request.origins where !state.origins.contains(origin) { state.origins.append(origin) }
        }
    }

    /// What the node holds and fetches.
    public func report() -> ContentReport {
        let transfers = state.withLock { state in state.transfers.values.sorted { $0.id < $1.id } }
        return ContentReport(
            node: nodeID, held: store.holdings(), transfers: transfers, freeBytes: store.freeBytes())
    }

    /// The files `timeline` names for this node, with their names.
    func needs(of timeline: Timeline?) -> [ContentID: String] {
        var needs: [ContentID: String] = [:]
        var playlists = timeline?.segments.map(\.playlist) ?? []
        playlists += timeline?.schedule.map { Array($0.playlists.values) } ?? []
        for playlist in playlists {
            for entry in playlist.entries {
                if let id = entry.content(forNode: nodeID) { needs[id] = entry.media(forNode: nodeID) }
            }
        }
        return needs
    }

    /// Fetches what the node lacks until cancelled: the files its timeline names first, up to
    /// `parallelFiles` at once.
    ///
    /// - Parameter configuredOrigins: the control daemon's library (`controller:`), always asked
    ///   after the peers, besides the origins a push names.
    ///   - problem: hears why the store cannot be used (nil once it can): the node plays on with
    ///     what it holds, and tries again every `retryInterval`.
    public func run(
        timeline: @escaping @Sendable () async -> Timeline?, peers: [NodeClient], http: NodeClientFactory,
        configuredOrigins: [String] = [], problem: @escaping @Sendable (String?) -> Void = { _ in }
    ) async {
        while true {
            do {
                try store.prepare()
                problem(nil)
                break
            } catch {
                problem("the content store is unusable, so distributed content cannot be kept: \(error)")
                try? await Task.sleep(for: Self.retryInterval)
                if Task.isCancelled { return }
            }
        }
        var collected = LocalClock.monotonic.now()
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let named = needs(of: await timeline())
                let (requested, asked) = state.withLock { ($0.requested, $0.origins) }
                let origins = (asked + configuredOrigins.filter { !asked.contains($0) }).map { http.origin($0) }
                let wanted = named.merging(requested) { name, _ in name }
                // The files the timeline names first, then the ones asked for; in a fixed order.
                let missing = wanted.filter { !store.holds($0.key) }.sorted { a, b in
                    let (namedA, namedB) = (named[a.key] != nil, named[b.key] != nil)
                    return namedA != namedB ? namedA : a.key < b.key
                }
                let missingIDs = Set(missing.map(\.key))
                let now = LocalClock.monotonic.now()
                let starting = state.withLock { state -> [(ContentID, String)] in
                    state.wanted = missingIDs
                    state.transfers = state.transfers.filter { missingIDs.contains($0.key) }
                    state.retryAt = state.retryAt.filter { missingIDs.contains($0.key) }
                    for (id, name) in missing where state.transfers[id] == nil {
                        // What it had before a restart shows at once, before its chunks are checked.
                        state.transfers[id] = ContentTransfer(
                            id: id, name: name,
                            have: arriving.files.withLock { $0[id.sha256]?.haveBytes }
                                ?? PartialFile.claimedBytes(of: id, in: store))
                    }
                    state.requested = state.requested.filter { !store.holds($0.key) }
                    var starting: [(ContentID, String)] = []
                    for (id, name) in missing
                    where state.fetching.count < Self.parallelFiles && !state.fetching.contains(id)
                        && (state.retryAt[id].map { $0 <= now } ?? true)
                    {
                        state.fetching.insert(id)
                        starting.append((id, name))
                    }
                    return starting
                }
                // A file no longer wanted is no longer served half-way: its task ends on its own.
                arriving.files.withLock { files in
                    files = files.filter { name, _ in missingIDs.contains { $0.sha256 == name } }
                }
                for (id, name) in starting {
                    group.addTask {
                        await self.fetch(id, name: name, peers: peers, origins: origins) {
                            self.state.withLock { $0.wanted.contains(id) }
                        }
                        self.state.withLock { _ = $0.fetching.remove(id) }
                    }
                }
                try? await Task.sleep(for: Self.pollInterval)
                if LocalClock.monotonic.now() - collected
                    > MediaTime.minimum(
                        MediaTime(value: 600, timescale: 1), MediaTime(seconds: grace / 2, preferredTimescale: 1000))
                {
                    collected = LocalClock.monotonic.now()
                    let deleted = store.collect(keeping: Set(wanted.keys.map(\.sha256)), grace: grace)
                    for path in deleted where !path.hasPrefix(store.root + "/partial/") {
                        server.forget(URL(fileURLWithPath: path).lastPathComponent)
                    }
                    if !deleted.isEmpty {
                        logger.info("content no timeline names collected", metadata: ["content.deleted": "\(deleted)"])
                    }
                }
            }
        }
    }

    /// One attempt at `id`, until it is kept or no way on is left for now (then the run loop starts
    /// another after a wait, `retryAt`). What arrives is kept chunk by chunk, so the next attempt
    /// resumes.
    private func fetch(
        _ id: ContentID, name: String, peers: [NodeClient], origins: [NodeClient],
        stillWanted: @escaping @Sendable () -> Bool
    ) async {
        guard !store.holds(id) else { return }
        if let path = handPlaced(name),
            case .success(let found) = await onDisk({ () throws(ContentError) in self.handPlacedID(path, size: id.size)
            }),
            found == id
        {
            let store = self.store
            switch await onDisk({ () throws(ContentError) in try store.adopt(fileAt: path, as: id) }) {
            case .success:
                logger.info(
                    "content taken from the media roots",
                    metadata: ["content.id": "\(id.sha256)", "content.path": "\(path)"])
            case .failure(let error):
                stop(id, after: Self.noRoomWait, problem: "\(name): \(error)")
            }
            return
        }
        var fetch = ChunkFetch(
            id: id, name: name, nodeID: nodeID,
            sources: peers.map { ($0, ChunkSource.Kind.peer) } + origins.map { ($0, ChunkSource.Kind.origin) },
            rejected: state.withLock { $0.rejectedLists[id] ?? [] })
        // The list a partial file was begun with is taken again: its chunks are read back and
        // checked against it (and the whole file against its ID at the end, as any list's).
        if let stored = arriving.files.withLock({ $0[id.sha256]?.list }) ?? PartialFile.storedList(of: id, in: store) {
            fetch.adopt(stored)
        }
        await refreshOffers(&fetch)
        if fetch.adoptedListUnoffered {
            fetch.dropList()
            await refreshOffers(&fetch)
        }
        guard let chosen = fetch.choose() else {
            stop(
                id, after: Self.noSourceWait,
                problem: fetch.noListReason(backoff: backoffNow(), now: LocalClock.monotonic.now()))
            return
        }
        let list = chosen.list
        let partial: PartialFile
        if let open = arriving.files.withLock({ $0[id.sha256] }), open.list == list {
            partial = open
        } else {
            let store = self.store
            switch await onDisk({ () throws(ContentError) in try PartialFile(store: store, list: list) }) {
            case .success(let opened): partial = opened
            case .failure(let error):
                // No room, or a store that cannot be written: this file waits; the others go on.
                stop(id, after: Self.noRoomWait, problem: "\(name): \(error)")
                return
            }
        }
        arriving.files.withLock { $0[id.sha256] = partial }
        update(id) { $0.have = partial.haveBytes }
        // Whole already (a power cut between its last chunk and its keeping), or once received.
        var damagedOnDisk = 0
        while true {
            if !partial.have.isFull {
                guard await receiveChunks(of: partial, fetch: &fetch, stillWanted: stillWanted) else { return }
            }
            let store = self.store
            switch await onDisk({ () throws(ContentError) in try partial.finish(into: store) }) {
            case .success(true):
                // Offered to peers as it was received, without reading the file again.
                server.remember(list)
            case .success(false):
                damagedOnDisk += 1
                logger.warning(
                    "content damaged on this node's disk: its chunks are fetched again",
                    metadata: ["content.id": "\(id.sha256)", "content.name": "\(name)"])
                // Damaged again once fetched again: a disk that does not keep what is written to it.
                // The file waits, and says why, rather than fetching the same chunks for ever.
                if damagedOnDisk >= 2 {
                    arriving.files.withLock { $0[id.sha256] = nil }
                    stop(
                        id, after: Self.noRoomWait,
                        problem: "\(name): damaged on this node's disk twice after its chunks were checked; "
                            + "check the disk (\(store.root))")
                    return
                }
                continue
            case .failure(let error):
                arriving.files.withLock { $0[id.sha256] = nil }
                if case .corrupt = error {
                    // Every chunk matched the list, the file did not match its ID: the list was
                    // wrong, and is not taken again; whoever sent it is left alone for a while.
                    state.withLock { state in
                        state.rejectedLists[id, default: []].insert(list)
                        if let source = chosen.source {
                            state.backoff.failed(
                                source, at: LocalClock.monotonic.now(),
                                reason: "its chunk list of \(name) was another file's", serious: true)
                        }
                    }
                    logger.warning(
                        "content refused: its chunk list did not describe it",
                        metadata: [
                            "content.id": "\(id.sha256)", "content.source": "\(chosen.source ?? "this node's disk")",
                            "error": "\(error)",
                        ])
                }
                stop(id, after: Self.noSourceWait, problem: "\(name): \(error)")
                return
            }
            break
        }
        arriving.files.withLock { $0[id.sha256] = nil }
        logger.info(
            "content arrived",
            metadata: [
                "content.id": "\(id.sha256)", "content.name": "\(name)",
                "content.sources": "\(fetch.served.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" })",
            ])
    }

    /// Asks for the chunks `partial` lacks until it holds them all (true), or until no source serves
    /// what it lacks for a while, the file is no longer wanted or the store fails (false: the attempt
    /// ends, and the run loop starts another after a wait).
    private func receiveChunks(
        of partial: PartialFile, fetch: inout ChunkFetch, stillWanted: @escaping @Sendable () -> Bool
    ) async -> Bool {
        let id = partial.list.id
        let name = fetch.name
        return await withTaskGroup(of: ChunkOutcome.self) { group in
            var asked: [Int: String] = [:]
            var idleRounds = 0
            defer { group.cancelAll() }
            while !partial.have.isFull {
                guard stillWanted(), !Task.isCancelled else { return false }
                if LocalClock.monotonic.now() - fetch.offeredAt > Self.offerInterval { await refreshOffers(&fetch) }
                let now = LocalClock.monotonic.now()
                let backoff = backoffNow()
                let requests = ChunkPlanner.plan(
                    have: partial.have, asked: Set(asked.keys),
                    sources: fetch.chunkSources(asked: asked, now: now, backoff: backoff),
                    slots: Self.chunksInFlight - asked.count, seed: fetch.seed, share: fetch.share)
                for request in requests {
                    guard let client = fetch.client(request.source) else { continue }
                    asked[request.chunk] = request.source
                    group.addTask {
                        await self.download(request.chunk, into: partial, from: client)
                    }
                }
                let sources = Set(asked.values).compactMap { base in fetch.client(base).map { fetch.describe($0) } }
                    .sorted()
                update(id) { $0.source = sources.isEmpty ? nil : sources.joined(separator: ", ") }
                if asked.isEmpty {
                    // Nothing to ask anyone: a moment's wait (a busy source, an offer not yet
                    // refreshed), then the attempt ends and its slot goes to another file.
                    idleRounds += 1
                    let reason = fetch.waitingReason(have: partial.have, backoff: backoff, now: now)
                    guard idleRounds < 3 else {
                        stop(id, after: Self.noSourceWait, problem: reason)
                        return false
                    }
                    update(id) { $0.problem = reason }
                    try? await Task.sleep(for: Self.pollInterval)
                    continue
                }
                idleRounds = 0
                guard let outcome = await group.next() else { continue }
                asked[outcome.chunk] = nil
                settle(outcome, in: &fetch, partial: partial, name: name)
                if case .storage(let problem) = outcome.result {
                    stop(id, after: Self.noRoomWait, problem: "\(name): \(problem)")
                    return false
                }
            }
            return true
        }
    }

    /// How one chunk's request ended.
    private struct ChunkOutcome: Sendable {
        enum Result: Sendable {
            case kept(bytes: UInt64, took: MediaTime)
            case damaged(String)
            case notHeld
            /// Held here already (claimed meanwhile): nobody's failure.
            case here
            case busy
            case failed(String)
            /// The store could not keep it: the file waits.
            case storage(String)
        }

        let chunk: Int
        let source: String
        let result: Result
    }

    /// Asks `client` for chunk `index` of `partial`'s file.
    private func download(_ index: Int, into partial: PartialFile, from client: NodeClient) async -> ChunkOutcome {
        let started = LocalClock.monotonic.now()
        let list = partial.list
        let result: ChunkOutcome.Result
        do {
            guard let writer = try partial.receive(index) else {
                return ChunkOutcome(chunk: index, source: client.base, result: .here)
            }
            let id = list.id
            switch try await client.download(
                chunk: writer, of: list, pacer: pacer, progress: { self.received($0, of: id) })
            {
            case .notHeld: result = .notHeld
            case .busy: result = .busy
            case .received:
                result =
                    try writer.finish()
                    ? .kept(
                        bytes: UInt64(list.range(of: writer.index).count), took: LocalClock.monotonic.now() - started)
                    : writer.received < UInt64(writer.range.count)
                        ? .failed("chunk \(index) came short: \(writer.received) of \(writer.range.count) bytes")
                        : .damaged("chunk \(index) did not match its SHA-256")
            }
        } catch let error as ContentError {
            if case .corrupt(_, let reason) = error { result = .damaged(reason) } else { result = .storage("\(error)") }
        } catch {
            result = .failed("\(error)")
        }
        return ChunkOutcome(chunk: index, source: client.base, result: result)
    }

    /// Takes a chunk's outcome into the fetch and the sources' record.
    private func settle(_ outcome: ChunkOutcome, in fetch: inout ChunkFetch, partial: PartialFile, name: String) {
        let now = LocalClock.monotonic.now()
        switch outcome.result {
        case .kept(let bytes, let took):
            state.withLock { $0.backoff.succeeded(outcome.source) }
            fetch.delivered(bytes, in: took, by: outcome.source)
            update(partial.list.id) {
                $0.have = partial.haveBytes
                $0.problem = nil
            }
        case .damaged(let reason):
            state.withLock {
                _ = $0.backoff.failed(outcome.source, at: now, reason: "sent a damaged chunk of \(name)", serious: true)
            }
            logger.warning(
                "content refused",
                metadata: [
                    "content.id": "\(partial.list.id.sha256)", "content.chunk": "\(outcome.chunk)",
                    "content.source": "\(outcome.source)", "error": "\(reason)",
                ])
        case .notHeld:
            // Offered, then not served: asked again after a wait, not at the next offer.
            fetch.doesNotServe(outcome.chunk, source: outcome.source)
            state.withLock {
                _ = $0.backoff.failed(
                    outcome.source, at: now, reason: "offered chunk \(outcome.chunk) of \(name) and did not serve it")
            }
        case .here:
            break
        case .busy:
            fetch.busy(outcome.source, until: now + Self.busyWait, reason: "serving as many transfers as it will")
        case .failed(let reason):
            state.withLock { _ = $0.backoff.failed(outcome.source, at: now, reason: reason) }
        case .storage:
            break
        }
    }

    /// Asks every source not waiting out a failure which chunks of the file it serves, at once: its
    /// chunk list too while the fetch has none.
    private func refreshOffers(_ fetch: inout ChunkFetch) async {
        let now = LocalClock.monotonic.now()
        let backoff = backoffNow()
        let asked = fetch.sources.filter { !backoff.isWaiting($0.client.base, at: now) }
        let id = fetch.id
        let list = fetch.list
        let answers = await withTaskGroup(of: (String, Result<OfferAnswer, ControlError>).self) { group in
            for source in asked {
                group.addTask {
                    let base = source.client.base
                    do throws(ControlError) {
                        guard let list else {
                            switch try await source.client.chunkOffer(id) {
                            case .held(let offer): return (base, .success(.offer(offer)))
                            case .notHeld: return (base, .success(.offer(nil)))
                            case .busy(let reason): return (base, .success(.busy(reason)))
                            }
                        }
                        switch try await source.client.chunkHolding(id, count: list.count) {
                        case .held(let holding) where holding.list == list.fingerprint:
                            return (
                                base,
                                .success(
                                    .offer(ChunkOffer(list: list, have: holding.have, receiving: holding.receiving)))
                            )
                        case .held: return (base, .success(.otherList))
                        case .notHeld: return (base, .success(.offer(nil)))
                        case .busy(let reason): return (base, .success(.busy(reason)))
                        }
                    } catch {
                        return (base, .failure(error))
                    }
                }
            }
            var answers: [(String, Result<OfferAnswer, ControlError>)] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        for (base, answer) in answers {
            switch answer {
            case .success(.offer(let offer)): fetch.offered(offer, by: base)
            case .success(.otherList): fetch.offersOtherList(by: base)
            case .success(.busy(let reason)): fetch.busy(base, until: now + Self.busyWait, reason: reason)
            case .failure(let error):
                fetch.unanswered(base)
                state.withLock { _ = $0.backoff.failed(base, at: now, reason: "\(error)") }
            }
        }
        fetch.offeredAt = LocalClock.monotonic.now()
    }

    /// Where a node's whole-file work runs (opening a partial file reads its chunks back; keeping one
    /// reads it whole; a hand-placed file is copied): one job at a time, off the task threads the
    /// timeline and the control API run on.
    private static let disk = DispatchQueue(label: "lockstep.content-disk", qos: .utility)

    /// `work`, run on `disk`.
    private func onDisk<Value: Sendable>(_ work: @escaping @Sendable () throws(ContentError) -> Value) async
        -> Result<Value, ContentError>
    {
        await withCheckedContinuation { continuation in
            Self.disk.async {
                continuation.resume(returning: Result { () throws(ContentError) -> Value in try work() })
            }
        }
    }

    /// What a source said of the file when asked.
    private enum OfferAnswer: Sendable {
        /// Its chunks by the list chosen (or, with none chosen yet, its list); nil: none held.
        case offer(ChunkOffer?)
        /// It holds the file by another list than the one chosen.
        case otherList
        /// It holds the file but cannot say yet, and why (an origin reading it to list its chunks).
        case busy(String)
    }

    private func backoffNow() -> SourceBackoff { state.withLock { $0.backoff } }

    /// Ends an attempt at `id` with `problem`: the run loop tries it again after `wait`.
    private func stop(_ id: ContentID, after wait: MediaTime, problem: String) {
        let again = LocalClock.monotonic.now() + wait
        state.withLock { state in
            state.retryAt[id] = again
            guard var transfer = state.transfers[id] else { return }
            transfer.source = nil
            transfer.problem = problem
            state.transfers[id] = transfer
        }
    }

    /// The ID of the hand-placed file at `path` if it is `size` bytes long (a digest computed once
    /// per version of the file).
    private func handPlacedID(_ path: String, size: UInt64) -> ContentID? {
        guard ContentStore.size(of: path) == size,
            let modified = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        else { return nil }
        if let known = state.withLock({ $0.handPlaced[path] }), known.size == size, known.modified == modified {
            return known.id
        }
        let id = try? ContentDigest.id(ofFileAt: path)
        state.withLock { $0.handPlaced[path] = (size, modified, id) }
        return id
    }

    private func received(_ count: Int, of id: ContentID) {
        let now = LocalClock.monotonic.now()
        state.withLock { state in
            var recent = (state.recent[id] ?? []) + [(now, count)]
            recent.removeAll { now - $0.at > MediaTime(value: 3, timescale: 1) }
            state.recent[id] = recent
            guard var transfer = state.transfers[id] else { return }
            transfer.problem = nil
            if let first = recent.first, now - first.at > MediaTime(value: 1, timescale: 10) {
                transfer.bytesPerSecond = Double(recent.map(\.bytes).reduce(0, +)) / (now - first.at).seconds
            }
            state.transfers[id] = transfer
        }
    }

    private func update(_ id: ContentID, _ change: (inout ContentTransfer) -> Void) {
        state.withLock { state in
            guard var transfer = state.transfers[id] else { return }
            change(&transfer)
            state.transfers[id] = transfer
        }
    }
}

/// The files a node is receiving, by SHA-256: what its server serves chunk by chunk.
final class ArrivingFiles: Sendable {
    let files = Mutex([String: PartialFile]())
}

/// Makes the clients a node fetches content with: its peers' (the wall's connection) and origins'.
public struct NodeClientFactory: Sendable {
    let make: @Sendable (String) -> NodeClient

    public init(_ make: @escaping @Sendable (String) -> NodeClient) { self.make = make }

    func origin(_ base: String) -> NodeClient { make(base) }
}
