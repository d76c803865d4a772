import LockstepTime
import WallContent
import WallControl
import WallTimeline

/// One file's fetch on a node, between the chunks it asks for: its sources, the chunks each offers,
/// how fast each delivered, which are busy. `NodeContent` asks it what to tell `ChunkPlanner` and
/// what to say while it waits.
struct ChunkFetch {
    struct Source {
        let client: NodeClient
        let kind: ChunkSource.Kind
    }

    let id: ContentID
    let name: String
    let nodeID: String
    let sources: [Source]
    /// What each source (by address) offered when last asked; nil: it holds none of the file. A
    /// source that did not answer has no entry.
    private var offers: [String: ChunkOffer?] = [:]
    /// When the sources were last asked.
    var offeredAt = MediaTime(value: -3600, timescale: 1)
    /// The list the chunks are checked against, and the source it came from (nil: this node's own
    /// partial file).
    private(set) var list: ChunkList?
    private(set) var listSource: String?
    /// Lists found before not to describe the file: never chosen.
    let rejected: Set<ChunkList>
    /// What each source delivered lately, bytes per second (smoothed).
    private var rates: [String: Double] = [:]
    private var busyUntil: [String: MediaTime] = [:]
    private var busyReason: [String: String] = [:]
    /// Bytes each source delivered, by its name, for the log.
    private(set) var served: [String: UInt64] = [:]
    /// Sources that hold the file by another list than the one chosen.
    private var otherList: Set<String> = []

    init(
        id: ContentID, name: String, nodeID: String, sources: [(NodeClient, ChunkSource.Kind)],
        rejected: Set<ChunkList> = []
    ) {
        self.id = id
        self.name = name
        self.nodeID = nodeID
        self.sources = sources.map { Source(client: $0.0, kind: $0.1) }
        self.rejected = rejected
    }

    /// Takes the list a partial file of this node's was begun with.
    mutating func adopt(_ stored: ChunkList) {
        guard stored.id == id, !rejected.contains(stored) else { return }
        list = stored
        listSource = nil
    }

    func client(_ base: String) -> NodeClient? { sources.first { $0.client.base == base }?.client }

    mutating func offered(_ offer: ChunkOffer?, by base: String) {
        offers[base] = .some(offer)
        otherList.remove(base)
    }

    /// `base` holds the file by another list than the one chosen: it is not asked for chunks,
    /// which would not match this list (and it would be blamed for damage it did not send).
    mutating func offersOtherList(by base: String) {
        offers[base] = .some(nil)
        otherList.insert(base)
    }

    /// Whether the list this node's partial file was begun with is held by no source that answered,
    /// while another list is: then it is let go (`dropList`), and the partial file checks its
    /// chunks against the list chosen instead when it is opened with it.
    var adoptedListUnoffered: Bool {
        guard list != nil, listSource == nil, !otherList.isEmpty else { return false }
        return !offers.values.contains { $0 != nil }
    }

    mutating func dropList() {
        list = nil
        offers = [:]
        otherList = []
    }

    /// `base` did not answer: what it offered before no longer counts.
    mutating func unanswered(_ base: String) {
        offers[base] = nil
    }

    /// The list to check chunks against: one chosen (or adopted) stays; else an origin's, else the
    /// one most peers offer; never one rejected before. Nil while no source offers the file.
    mutating func choose() -> (list: ChunkList, source: String?)? {
        if let list { return (list, listSource) }
        let offered = sources.compactMap { source -> (Source, ChunkList)? in
            guard case .some(.some(let offer)) = offers[source.client.base], !rejected.contains(offer.list) else {
                return nil
            }
            return (source, offer.list)
        }
        let byOrigin = offered.first(where: { $0.0.kind == .origin })
        let chosen =
            byOrigin
            ?? offered.max(by: { a, b in
                offered.count(where: { $0.1 == a.1 }) < offered.count(where: { $0.1 == b.1 })
            })
        guard let chosen else { return nil }
        list = chosen.1
        listSource = chosen.0.client.base
        return (chosen.1, chosen.0.client.base)
    }

    /// The sources as the planner sees them at `now`: those offering chunks of the chosen list, not
    /// waiting out a failure or a busy answer, with room left besides the chunks `asked` of them.
    func chunkSources(asked: [Int: String], now: MediaTime, backoff: SourceBackoff) -> [ChunkSource] {
        sources.compactMap { source in
            let base = source.client.base
            guard case .some(.some(let offer)) = offers[base], offer.list == list,
                !backoff.isWaiting(base, at: now)
            else { return nil }
            let busy = busyUntil[base].map { now < $0 } ?? false
            // One chunk at a time from an origin: the nodes' requests spread over the chunks it has
            // and the uplink sends each about once.
            let room = source.kind == .origin ? 1 : NodeContent.chunksPerSource
            let free = busy ? 0 : room - asked.values.count(where: { $0 == base })
            return ChunkSource(
                name: base, kind: source.kind, holds: offer.have, free: max(0, free), bytesPerSecond: rates[base],
                receiving: offer.receiving)
        }
    }

    /// This node's place among the wall's nodes (its peers and itself, by id): its share of the
    /// chunks it asks the origin for first.
    var share: (index: Int, count: Int) {
        let ids = (sources.filter { $0.kind == .peer }.map(\.client.id) + [nodeID]).sorted()
        return (ids.firstIndex(of: nodeID) ?? 0, ids.count)
    }

    /// This node's own order among chunks of equal rarity (FNV-1a of its id): the same on every
    /// start, another than its peers', so that nodes starting together ask for different chunks.
    var seed: UInt64 {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in nodeID.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return hash
    }

    mutating func delivered(_ bytes: UInt64, in took: MediaTime, by base: String) {
        let rate = Double(bytes) / max(took.seconds, 0.001)
        rates[base] = rates[base].map { 0.7 * $0 + 0.3 * rate } ?? rate
        let who = client(base).map { describe($0) } ?? base
        served[who, default: 0] += bytes
    }

    /// `base` said it does not serve `chunk` after all (its offer was older than its answer).
    mutating func doesNotServe(_ chunk: Int, source base: String) {
        guard case .some(.some(var offer)) = offers[base] else { return }
        if offer.have == nil, let list { offer.have = ChunkSet(count: list.count, full: true) }
        offer.have?.remove(chunk)
        offers[base] = .some(offer)
    }

    mutating func busy(_ base: String, until: MediaTime, reason: String) {
        busyUntil[base] = until
        busyReason[base] = reason
    }

    /// Why no list could be had: who holds nothing, who did not answer.
    func noListReason(backoff: SourceBackoff, now: MediaTime) -> String {
        guard !sources.isEmpty else { return "\(name): no peer or origin to fetch it from" }
        let origins = sources.filter { $0.kind == .origin }
        var reason =
            origins.isEmpty
            ? "\(name): no peer holds it yet, and no origin is known (push it, or give the wall a controller)"
            : "\(name): no peer or origin holds it yet"
        let busy = sources.compactMap { source -> String? in
            guard let until = busyUntil[source.client.base], now < until else { return nil }
            return "\(describe(source.client)) (\(busyReason[source.client.base] ?? "busy"))"
        }
        if !busy.isEmpty {
            reason = "\(name): held, not yet offered: " + busy.joined(separator: ", ")
        }
        let silent = sources.compactMap { source -> String? in
            guard offers[source.client.base] == nil, busyUntil[source.client.base] == nil else { return nil }
            let why = backoff.reason(source.client.base, at: now) ?? "no answer"
            return "\(describe(source.client)) (\(why))"
        }
        if !silent.isEmpty { reason += "; not answering: " + silent.joined(separator: ", ") }
        return reason
    }

    /// Why nothing is asked for now, though chunks are missing.
    func waitingReason(have: ChunkSet, backoff: SourceBackoff, now: MediaTime) -> String {
        let missing = have.count - have.cardinality
        var why: [String] = []
        for source in sources {
            let base = source.client.base
            if let reason = backoff.reason(base, at: now) {
                why.append("\(describe(source.client)) left alone after: \(reason)")
            } else if let until = busyUntil[base], now < until {
                why.append("\(describe(source.client)) busy (\(busyReason[base] ?? "busy"))")
            } else if otherList.contains(base) {
                why.append("\(describe(source.client)) holds it by another chunk list")
            } else if case .some(.none) = offers[base] {
                why.append("\(describe(source.client)) holds none of it")
            } else if offers[base] == nil {
                why.append("\(describe(source.client)) not answering")
            }
        }
        let sentence = "\(name): \(missing) of \(have.count) chunks missing, which no source serves now"
        return why.isEmpty ? sentence : sentence + " (" + why.joined(separator: "; ") + ")"
    }

    /// A source as the operator knows it: a peer by its id, an origin by its address.
    func describe(_ client: NodeClient) -> String {
        sources.first { $0.client.base == client.base }?.kind == .origin ? "origin \(client.base)" : client.id
    }
}
