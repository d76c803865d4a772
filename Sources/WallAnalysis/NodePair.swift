/// Two of the wall's nodes, in the wall's order, which every per-pair statistic is named by.
public struct NodePair: Sendable, Hashable, Codable, CustomStringConvertible {
    public var first: String
    public var second: String

    public init(_ first: String, _ second: String) {
        self.first = first
        self.second = second
    }

    /// "first–second".
    public var description: String { "\(first)–\(second)" }

    /// Every pair of `nodes` in order (`(0, 1), (0, 2), …, (1, 2), …`), with their indices: the
    /// order the analyzers keep their per-pair state in.
    static func all(of nodes: [String]) -> [IndexedPair] {
        nodes.indices.flatMap { i in
            nodes.indices.dropFirst(i + 1).map { j in
                IndexedPair(pair: NodePair(nodes[i], nodes[j]), first: i, second: j)
            }
        }
    }
}

/// A pair with the indices of its nodes in the wall's node list.
struct IndexedPair: Sendable {
    let pair: NodePair
    let first: Int
    let second: Int
}
