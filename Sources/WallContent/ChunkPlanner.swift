import LockstepNet
import LockstepTime

/// A place a node can take chunks of a file from, as the planner sees it at one moment.
public struct ChunkSource: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Another node of the wall: serves the chunks it has checked, while it receives the others.
        case peer
        /// `wallctl push` or the control daemon's library: holds the whole file, and is the wall's
        /// uplink, so it is asked for what no peer has, or when the peers are much slower.
        case origin
    }

    public var name: String
    public var kind: Kind
    /// The chunks it serves; nil: every chunk (it holds the complete file).
    public var holds: ChunkSet?
    /// The chunks it is receiving now: soon served, so not asked of the origin before the others.
    public var receiving: ChunkSet?
    /// How many more of this node's requests it takes now.
    public var free: Int
    /// What it sent this node lately, in bytes per second; nil: not measured yet.
    public var bytesPerSecond: Double?

    public init(
        name: String, kind: Kind, holds: ChunkSet?, free: Int, bytesPerSecond: Double? = nil, receiving: ChunkSet? = nil
    ) {
        self.name = name
        self.kind = kind
        self.holds = holds
        self.receiving = receiving
        self.free = free
        self.bytesPerSecond = bytesPerSecond
    }

    public func serves(_ chunk: Int) -> Bool { holds?.contains(chunk) ?? true }
}

/// One chunk to ask one source for.
public struct ChunkRequest: Sendable, Hashable, CustomStringConvertible {
    public let chunk: Int
    public let source: String

    public init(chunk: Int, source: String) {
        self.chunk = chunk
        self.source = source
    }

    public var description: String { "chunk \(chunk) from \(source)" }
}

/// Which chunks a node asks for next, and from whom: the rule that lets a wall's nodes copy a file
/// from each other while it arrives, so that N nodes are ready in about the time of one copy.
///
/// - Rarest first: of the chunks the node lacks and has not asked for, those the fewest peers serve
///   come first; chunks no peer has yet come first of all, from the origin, so that every chunk enters
///   the wall once and spreads from there; among equally rare chunks, those fewer peers are receiving
///   now come first (the others will soon be served). Ties are broken in an order of the node's own
///   (a shuffle by `seed`), so that nodes starting together ask for different chunks.
/// - A chunk comes from the fastest peer that serves it and has room (an unmeasured one counts as
///   fast, so that it is measured); from the origin when no peer serves it or has room, or when the
///   origin is measured more than `originAdvantage` times faster than that peer.
/// - At most `slots` requests at once; a source never gets more than it has room for.
///
/// Pure: the node's chunk sets, its requests under way and its sources' states come in, requests
/// come out.
public enum ChunkPlanner {
    /// How much faster than the best peer the origin must be measured to be asked for a chunk a peer
    /// serves: the uplink is the one link every copy would otherwise share.
    public static let originAdvantage = 2.0

    /// The requests to make now, in the order to make them.
    ///
    /// - Parameters:
    ///   - have: the chunks the node holds, checked.
    ///   - asked: the chunks requested and not yet arrived.
    ///   - sources: where chunks can come from now (sources waiting out a failure left out).
    ///   - slots: how many more requests the node makes at once.
    ///   - seed: the node's own order among chunks of equal rarity (the same on every start).
    ///   - share: the node's place among the wall's nodes (`index` of `count`): of the chunks no
    ///     peer has or is receiving, it asks the origin for its share (chunk number modulo `count`
    ///     is `index`) first, and for the others only when it has nothing else to ask for, so that
    ///     nodes starting together take different chunks from the uplink.
    public static func plan(
        have: ChunkSet, asked: Set<Int>, sources: [ChunkSource], slots: Int, seed: UInt64 = 0,
        share: (index: Int, count: Int)? = nil
    ) -> [ChunkRequest] {
        let count = have.count
        guard slots > 0, count > 0 else { return [] }
        // Rarity counts every peer, a busy or full one too: what it holds is in the wall already.
        let everyPeer = sources.filter { $0.kind == .peer }
        var available = sources.filter { $0.free > 0 }
        let wanted = (0..<count).filter { !have.contains($0) && !asked.contains($0) }
        // Per chunk: how many peers serve it, how many are receiving it, its place in the node's order.
        let keys = Dictionary(
            uniqueKeysWithValues: wanted.map { chunk in
                (
                    chunk,
                    (
                        everyPeer.count(where: { $0.serves(chunk) }),
                        everyPeer.count(where: { $0.receiving?.contains(chunk) == true }), rank(chunk, seed: seed)
                    )
                )
            })
        let order = wanted.sorted { a, b in
            (keys[a]!.0, keys[a]!.1, keys[a]!.2, a) < (keys[b]!.0, keys[b]!.1, keys[b]!.2, b)
        }
        var requests: [ChunkRequest] = []
        // A chunk some peer is receiving comes from that peer soon, never again from the origin;
        // one no peer has nor receives comes from the origin, another node's share only when this
        // node has nothing else to ask for.
        func origin(_ chunk: Int, _ source: ChunkSource, strict: Bool) -> Bool {
            guard source.kind == .origin else { return true }
            guard keys[chunk]!.1 == 0 else { return false }
            guard strict, let share, share.count > 1 else { return true }
            return chunk % share.count == share.index
        }
        for strict in [true, false] where requests.isEmpty || strict {
            for chunk in order where requests.count < slots && !requests.contains(where: { $0.chunk == chunk }) {
                guard let chosen = source(for: chunk, among: available),
                    origin(chunk, available[chosen], strict: strict)
                else { continue }
                available[chosen].free -= 1
                requests.append(ChunkRequest(chunk: chunk, source: available[chosen].name))
            }
        }
        return requests
    }

    /// Chunk `chunk`'s place in the node's own order: a generator's first number from a seed of
    /// the node's and the chunk's, so that different seeds shuffle the chunks independently.
    static func rank(_ chunk: Int, seed: UInt64) -> UInt64 {
        var random = SplitMix64(seed: seed ^ UInt64(truncatingIfNeeded: chunk) &* 0xD1B5_4A32_D192_ED03)
        return random.next()
    }

    /// The index of the source to ask for `chunk`, if any serves it and has room.
    private static func source(for chunk: Int, among sources: [ChunkSource]) -> Int? {
        func rate(_ index: Int) -> Double { sources[index].bytesPerSecond ?? .infinity }
        func fastest(_ kind: ChunkSource.Kind) -> Int? {
            sources.indices.filter { sources[$0].kind == kind && sources[$0].free > 0 && sources[$0].serves(chunk) }
                .min { rate($0) != rate($1) ? rate($0) > rate($1) : sources[$0].name < sources[$1].name }
        }
        let peer = fastest(.peer)
        let origin = fastest(.origin)
        guard let peer else { return origin }
        guard let origin, let originRate = sources[origin].bytesPerSecond,
            let peerRate = sources[peer].bytesPerSecond, originRate > originAdvantage * peerRate
        else { return peer }
        return origin
    }
}

/// Which sources failed lately, and until when each is left alone: a source that refused, broke off
/// or sent a damaged chunk is asked again after a wait that doubles with each failure in a row (from
/// `firstWait` to `longestWait`) and starts over once it delivers. A source is only ever blamed for a
/// chunk it sent: damage found in the node's own partial file when it is read back blames no one.
///
/// Damage it sent, or a chunk list of another file, is serious: delivering meanwhile does not make
/// it new again, and its waits go on doubling while it keeps doing it; only `memory` after its last
/// wait without another is it forgotten. Every failure is forgotten then, so the record of a wall
/// running for months holds only its recent sources.
public struct SourceBackoff: Sendable, Hashable {
    public static let firstWait = MediaTime(value: 1, timescale: 1)
    public static let longestWait = MediaTime(value: 60, timescale: 1)
    /// How long after its wait ended a failure is remembered.
    public static let memory = MediaTime(value: 600, timescale: 1)

    private struct Failures: Sendable, Hashable {
        var inARow: Int
        var until: MediaTime
        var reason: String
        var serious: Bool
    }

    private var failures: [String: Failures] = [:]

    public init() {}

    /// `source` failed at `now` for `reason` (`serious`: it sent damage or a false list); returns
    /// when it is asked again.
    @discardableResult
    public mutating func failed(_ source: String, at now: MediaTime, reason: String, serious: Bool = false)
        -> MediaTime
    {
        failures = failures.filter { now - $0.value.until < Self.memory }
        let inARow = (failures[source]?.inARow ?? 0) + 1
        let wait = MediaTime.minimum(
            Self.longestWait,
            MediaTime(seconds: Self.firstWait.seconds * Double(1 << min(inARow - 1, 16)), preferredTimescale: 1000))
        let until = now + wait
        failures[source] = Failures(
            inARow: inARow, until: until, reason: reason, serious: serious || failures[source]?.serious == true)
        return until
    }

    /// `source` delivered: unless it failed seriously lately, it is asked as if it had never failed.
    public mutating func succeeded(_ source: String) {
        guard failures[source]?.serious != true else { return }
        failures[source] = nil
    }

    /// How many sources the record holds.
    public var count: Int { failures.count }

    /// Whether `source` is left alone at `now`.
    public func isWaiting(_ source: String, at now: MediaTime) -> Bool {
        guard let failure = failures[source] else { return false }
        return now < failure.until
    }

    /// Why `source` last failed, while it is left alone.
    public func reason(_ source: String, at now: MediaTime) -> String? {
        isWaiting(source, at: now) ? failures[source]?.reason : nil
    }
}
