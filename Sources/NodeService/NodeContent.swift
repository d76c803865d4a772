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
/// alone for a template) and what a `POST /content/fetch` asked for. Each file it lacks comes from
/// a peer that holds it, else from an origin (`wallctl push`, `wallctl serve`), over HTTP with
/// `Range`, so a cut transfer resumes where it stopped; it is kept only once its size and SHA-256
/// match (`ContentStore`). One file at a time, paced to `bytesPerSecond` if set.
public final class NodeContent: Sendable {
    public let store: ContentStore
    /// What this node serves its peers.
    public let server: ContentServer
    let nodeID: String
    let bytesPerSecond: Double?
    /// The file the media roots hold under a name, if any: a file placed by hand is taken (copied)
    /// when its digest matches, instead of fetched.
    let handPlaced: @Sendable (String) -> String?
    private let logger: Logger
    private let state = Mutex(State())
    /// How long a file no timeline names is kept.
    let grace: TimeInterval
    /// How often the node looks for content it lacks.
    static let pollInterval = Duration.milliseconds(500)
    /// How often an unusable store is tried again (a disk remounted writable, space freed).
    static let retryInterval = Duration.seconds(10)

    private struct State {
        /// Asked for by `POST /content/fetch`, with the name it is known by.
        var requested: [ContentID: String] = [:]
        var origins: [String] = []
        var transfers: [ContentID: ContentTransfer] = [:]
        /// Bytes received in the last seconds, per file, for the rate.
        var recent: [ContentID: [(at: MediaTime, bytes: Int)]] = [:]
        /// Sources that sent a file whose digest did not match: not asked for it again.
        var damaged: [ContentID: Set<String>] = [:]
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
        self.bytesPerSecond = bytesPerSecond
        self.logger = logger
        server = ContentServer(limit: 2) { [store] sha256 in store.file(sha256: sha256) }
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

    /// Fetches what the node lacks until cancelled: the files its timeline names first.
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
        while !Task.isCancelled {
            let named = needs(of: await timeline())
            let (requested, asked) = state.withLock { ($0.requested, $0.origins) }
            let origins = asked + configuredOrigins.filter { !asked.contains($0) }
            let wanted = named.merging(requested) { name, _ in name }
            // The files the timeline names first, then the ones asked for; in a fixed order.
            let missing = wanted.filter { !store.holds($0.key) }.sorted { a, b in
                let (namedA, namedB) = (named[a.key] != nil, named[b.key] != nil)
                return namedA != namedB ? namedA : a.key < b.key
            }
            let missingIDs = Set(missing.map(\.key))
            state.withLock { state in
                state.transfers = state.transfers.filter { missingIDs.contains($0.key) }
                for (id, name) in missing where state.transfers[id] == nil {
                    state.transfers[id] = ContentTransfer(id: id, name: name, have: store.partialSize(of: id))
                }
                state.requested = state.requested.filter { !store.holds($0.key) }
            }
            if let first = missing.first {
                await fetch(first.key, name: first.value, peers: peers, origins: origins.map { http.origin($0) })
            } else {
                try? await Task.sleep(for: Self.pollInterval)
            }
            if LocalClock.monotonic.now() - collected
                > MediaTime.minimum(
                    MediaTime(value: 600, timescale: 1), MediaTime(seconds: grace / 2, preferredTimescale: 1000))
            {
                collected = LocalClock.monotonic.now()
                let deleted = store.collect(keeping: Set(wanted.keys.map(\.sha256)), grace: grace)
                if !deleted.isEmpty {
                    logger.info("content no timeline names collected", metadata: ["content.deleted": "\(deleted)"])
                }
            }
        }
    }

    /// One attempt at `id`: each peer in turn, then each origin; what arrives is kept, so the next
    /// attempt resumes. Waits a little when no source had it or all were busy.
    private func fetch(_ id: ContentID, name: String, peers: [NodeClient], origins: [NodeClient]) async {
        var problem: String?
        if let path = handPlaced(name), handPlacedID(path, size: id.size) == id {
            do {
                try store.adopt(fileAt: path, as: id)
                logger.info(
                    "content taken from the media roots",
                    metadata: ["content.id": "\(id.sha256)", "content.path": "\(path)"])
                return
            } catch {
                problem = "\(error)"
            }
        }
        // A transfer cut between its last byte and its keeping (a power cut) is kept now: no
        // source can send bytes past its end.
        if store.partialSize(of: id) == id.size, (try? store.commit(id)) != nil {
            logger.info("content kept from a finished transfer", metadata: ["content.id": "\(id.sha256)"])
            return
        }
        let damaged = state.withLock { $0.damaged[id] ?? [] }
        // A peer that holds the file but is busy serving others is waited for rather than the
        // origin asked: the wall's uplink carries each file about once.
        var peerBusy = false
        for (index, source) in (peers + origins).enumerated() where !damaged.contains(source.base) {
            if Task.isCancelled { return }
            if index == peers.count, !peerBusy, await peerFetching(id, peers: peers) { peerBusy = true }
            if index >= peers.count, peerBusy { break }
            let handle: FileHandle
            do {
                handle = try store.appending(to: id)
            } catch {
                problem = "\(error)"
                break
            }
            let offset = store.partialSize(of: id)
            update(id) {
                $0.source = source.id; $0.have = offset
            }
            let outcome: NodeClient.Download
            do {
                outcome = try await source.download(id, from: offset, to: handle, bytesPerSecond: bytesPerSecond) {
                    count in self.received(count, of: id)
                }
                try? handle.close()
            } catch {
                try? handle.close()
                problem = "from \(source.id): \(error)"
                continue
            }
            if outcome == .busy, index < peers.count { peerBusy = true }
            guard outcome == .complete else { continue }
            do {
                try store.commit(id)
                logger.info(
                    "content arrived",
                    metadata: [
                        "content.id": "\(id.sha256)", "content.name": "\(name)", "content.source": "\(source.id)",
                    ])
                return
            } catch {
                problem = "from \(source.id): \(error)"
                if case .corrupt = error { state.withLock { _ = $0.damaged[id, default: []].insert(source.base) } }
                logger.warning(
                    "content refused",
                    metadata: ["content.id": "\(id.sha256)", "content.source": "\(source.id)", "error": "\(error)"])
            }
        }
        update(id) {
            $0.source = nil
            $0.problem = problem ?? (peerBusy ? "waiting for a peer that holds it" : "no peer or origin holds it yet")
            $0.have = store.partialSize(of: id)
        }
        try? await Task.sleep(for: .seconds(1))
    }

    /// Whether a peer is fetching `id` now (or has just got it): then it is waited for, and the
    /// origin left alone, so that the origin sends each file about once.
    private func peerFetching(_ id: ContentID, peers: [NodeClient]) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            for peer in peers {
                group.addTask {
                    guard let report = try? await peer.content() else { return false }
                    return report.held.contains(id) || report.transfers.contains { $0.id == id && $0.source != nil }
                }
            }
            for await fetching in group where fetching {
                group.cancelAll()
                return true
            }
            return false
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
            transfer.have += UInt64(count)
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

/// Makes the clients a node fetches content with: its peers' (the wall's connection) and origins'.
public struct NodeClientFactory: Sendable {
    let make: @Sendable (String) -> NodeClient

    public init(_ make: @escaping @Sendable (String) -> NodeClient) { self.make = make }

    func origin(_ base: String) -> NodeClient { make(base) }
}
