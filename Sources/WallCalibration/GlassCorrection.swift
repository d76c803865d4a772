/// What a calibration film changes: each screen's display-latency, so that every screen's light
/// changes when the earliest one's does. A later screen gets more display-latency, so that it is
/// given its frames that much sooner; the earliest keeps its own.
public struct GlassCorrection: Sendable, Equatable {
    /// One screen read in the film, and the display-latency that cancels its offset.
    public struct Screen: Sendable, Equatable {
        public var node: String
        /// When its light changes, less the mean of the screens read, in seconds (+ is later).
        public var offset: Double
        /// Two standard deviations of `offset`, in seconds.
        public var uncertainty: Double
        /// Its display-latency now, in seconds.
        public var latency: Double
        /// The display-latency that cancels its offset, in seconds.
        public var corrected: Double
    }

    public var screens: [Screen]
    /// The nodes the film did not show: their display-latency stays as it is.
    public var unseen: [String]

    /// - Parameters:
    ///   - result: what the films were read as (`GlassTiming.solve`).
    ///   - nodes: the wall's nodes in the pattern's order (the pattern numbers screen `i` as the
    ///     config's node `i`), each with its display-latency now, in seconds.
    public init(_ result: GlassTiming.Result, nodes: [(id: String, latency: Double)]) throws(GlassTiming.Failure) {
        if let stray = result.screens.first(where: { $0.screen >= nodes.count || $0.screen < 0 }) {
            throw GlassTiming.Failure(
                description: "the film shows screen number \(stray.screen + 1), but the config has \(nodes.count) "
                    + "node\(nodes.count == 1 ? "" : "s"): was the pattern shown from another config?")
        }
        let earliest = result.screens.map(\.offset).min() ?? 0
        screens = result.screens.map { screen in
            let node = nodes[screen.screen]
            return Screen(
                node: node.id, offset: screen.offset, uncertainty: screen.uncertainty, latency: node.latency,
                corrected: node.latency + screen.offset - earliest)
        }
        let seen = Set(result.screens.map(\.screen))
        unseen = nodes.indices.filter { !seen.contains($0) }.map { nodes[$0].id }
    }

    /// Node id → its corrected display-latency, in seconds.
    public var latencies: [String: Double] {
        Dictionary(screens.map { ($0.node, $0.corrected) }, uniquingKeysWith: { $1 })
    }
}
