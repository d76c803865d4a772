import LockstepTime

/// The wall's node list as both analyzers use it: checked once, indexed by id, and paired.
struct WallNodes: Sendable {
    let ids: [String]
    /// Every pair, in the order per-pair state and results are kept.
    let pairs: [IndexedPair]
    private let indexOfID: [String: Int]

    /// Checks that there are at least two nodes and no id twice.
    init(_ ids: [String]) throws(AnalysisError) {
        guard ids.count >= 2 else { throw .tooFewNodes(count: ids.count) }
        var indexOfID: [String: Int] = [:]
        for (index, id) in ids.enumerated() {
            guard indexOfID.updateValue(index, forKey: id) == nil else { throw .duplicateNode(id) }
        }
        self.ids = ids
        self.indexOfID = indexOfID
        pairs = NodePair.all(of: ids)
    }

    var count: Int { ids.count }

    /// The position in `pairs` of the pair of nodes `a` and `b`, in either order; nil for a node
    /// with itself.
    func pairIndex(_ a: Int, _ b: Int) -> Int? {
        guard a != b else { return nil }
        let (i, j) = (min(a, b), max(a, b))
        // Pairs (i, i+1…n-1) follow the i pairs of each smaller first index.
        return i * count - i * (i + 1) / 2 + (j - i - 1)
    }
    var indices: Range<Int> { ids.indices }

    /// The index of node `id`, or a typed error naming the nodes there are.
    func index(of id: String) throws(AnalysisError) -> Int {
        guard let index = indexOfID[id] else { throw .unknownNode(id, known: ids) }
        return index
    }
}

/// Checks of settings, each failing with an error that names the setting.
enum Setting {
    /// A time that must be positive, in nanoseconds.
    static func positive(_ time: MediaTime, _ name: String) throws(AnalysisError) -> Int64 {
        let nanoseconds = try Nanoseconds.of(time, name)
        guard nanoseconds > 0 else { throw .nonPositiveSetting(name: name, value: time) }
        return nanoseconds
    }

    /// A count that must be at least 1.
    static func positive(_ count: Int, _ name: String) throws(AnalysisError) {
        guard count >= 1 else { throw .nonPositiveCount(name: name, value: count) }
    }
}
