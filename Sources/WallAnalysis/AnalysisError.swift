import LockstepTime

/// Why an analysis could not be set up or fed: the one error type of `WallAnalysis`.
///
/// Bad data inside a node's records (a frame without a time) is not an error: it is counted in the
/// report, so an hour-long analysis does not stop over one record. Errors are reserved for what the
/// caller got wrong: the wall's node list, a setting, a node the wall does not have.
public enum AnalysisError: Error, Hashable, CustomStringConvertible {
    /// An analysis compares nodes with each other, so it needs at least two.
    case tooFewNodes(count: Int)
    /// The same node id appears twice in the node list.
    case duplicateNode(String)
    /// Data arrived for a node that is not in the analysis's node list.
    case unknownNode(String, known: [String])
    /// A setting that must be a positive time is not.
    case nonPositiveSetting(name: String, value: MediaTime)
    /// A setting that must be a positive count is not.
    case nonPositiveCount(name: String, value: Int)
    /// A time handed in is not a finite number (invalid, indefinite or infinite).
    case nonNumericTime(what: String, value: MediaTime)
    /// A ground-truth frame code outside 0..<4096.
    case frameCodeOutOfRange(node: String, code: Int)
    /// An aligned frame from an analyzer of other nodes than this comparison's.
    case nodeListMismatch(expected: [String], got: [String])
    /// An aligned frame whose presentation times do not match its nodes one for one.
    case malformedFrame(times: Int, nodes: Int)
    /// A report could not be encoded as JSON.
    case encodingFailed(reason: String)
    /// A node's measurement of another's clock is beyond any real clock, or its bound negative.
    case invalidMeasurement(String)

    public var description: String {
        switch self {
        case .tooFewNodes(let count):
            return "drift analysis needs at least two nodes to compare, but the wall lists \(count)"
        case .duplicateNode(let id):
            return "node \"\(id)\" appears twice in the node list; node ids must be unique"
        case .unknownNode(let id, let known):
            return "node \"\(id)\" is not part of this analysis (its nodes are \(known.joined(separator: ", ")))"
        case .nonPositiveSetting(let name, let value):
            return "\(name) must be a positive time, but it is \(value)"
        case .nonPositiveCount(let name, let value):
            return "\(name) must be at least 1, but it is \(value)"
        case .nonNumericTime(let what, let value):
            return "\(what) must be a finite time, but it is \(value)"
        case .frameCodeOutOfRange(let node, let code):
            return "node \"\(node)\" sent frame code \(code), but codes run from 0 to 4095"
        case .nodeListMismatch(let expected, let got):
            return
                "an aligned frame covers nodes \(got.joined(separator: ", ")), but the comparison was set up for \(expected.joined(separator: ", "))"
        case .malformedFrame(let times, let nodes):
            return "an aligned frame of \(nodes) nodes lists \(times) presentation time\(times == 1 ? "" : "s"); "
                + "it needs one per node"
        case .encodingFailed(let reason):
            return "the report could not be encoded as JSON: \(reason)"
        case .invalidMeasurement(let what):
            return "\(what) is out of range: an offset beyond 146 years, or a negative or equally vast bound"
        }
    }
}
