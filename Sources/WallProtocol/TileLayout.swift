/// How a config's tiles cover its canvas: where two screens show the same pixels, and which canvas
/// pixels no screen shows. Neither is always a mistake (projectors blend overlaps on purpose; a
/// bezel-compensated wall leaves its bezels' strips unshown), so `wallctl check` names them and
/// leaves the judgement to the operator.
public struct TileLayout: Sendable, Hashable {
    public struct Overlap: Sendable, Hashable {
        public var first: String
        public var second: String
        public var area: PixelRect
    }

    public var overlaps: [Overlap]
    /// Canvas rectangles no tile covers, largest first (the cells of the grid every tile edge
    /// draws, adjacent ones along a row merged).
    public var uncovered: [PixelRect]
    public var canvasPixels: Int

    public var uncoveredPixels: Int { uncovered.reduce(0) { $0 + $1.width * $1.height } }

    public init(config: WallConfig) {
        let nodes = config.nodes
        let canvas = PixelRect(x: 0, y: 0, width: config.canvas.width, height: config.canvas.height)
        canvasPixels = canvas.width * canvas.height
        var overlaps: [Overlap] = []
        for (index, node) in nodes.enumerated() {
            for other in nodes[(index + 1)...] {
                if let area = Self.intersection(node.tile, other.tile) {
                    overlaps.append(Overlap(first: node.id, second: other.id, area: area))
                }
            }
        }
        self.overlaps = overlaps
        // The grid of every tile's edges inside the canvas: each cell is wholly covered or not.
        let tiles = nodes.compactMap { Self.intersection($0.tile, canvas) }
        let xs = Set([0, canvas.width] + tiles.flatMap { [$0.x, $0.x + $0.width] }).sorted()
        let ys = Set([0, canvas.height] + tiles.flatMap { [$0.y, $0.y + $0.height] }).sorted()
        var uncovered: [PixelRect] = []
        for (top, bottom) in zip(ys, ys.dropFirst()) {
            var run: PixelRect?
            for (left, right) in zip(xs, xs.dropFirst()) {
                let covered = tiles.contains { tile in
                    tile.x <= left && right <= tile.x + tile.width && tile.y <= top && bottom <= tile.y + tile.height
                }
                if covered {
                    if let finished = run { uncovered.append(finished) }
                    run = nil
                } else if var current = run {
                    current.width = right - current.x
                    run = current
                } else {
                    run = PixelRect(x: left, y: top, width: right - left, height: bottom - top)
                }
            }
            if let finished = run { uncovered.append(finished) }
        }
        self.uncovered = uncovered.sorted { $0.width * $0.height > $1.width * $1.height }
    }

    static func intersection(_ a: PixelRect, _ b: PixelRect) -> PixelRect? {
        let left = max(a.x, b.x)
        let top = max(a.y, b.y)
        let right = min(a.x + a.width, b.x + b.width)
        let bottom = min(a.y + a.height, b.y + b.height)
        guard right > left, bottom > top else { return nil }
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

extension WallConfig {
    /// What the wall plays when told to play the config: its playlist, or else its media once.
    public var playlistItems: [PlaylistItemConfig] {
        if !playlist.isEmpty { return playlist }
        switch media {
        case .shared(let path): return [PlaylistItemConfig(media: path)]
        case .perNode(let template): return [PlaylistItemConfig(media: template)]
        }
    }
}
