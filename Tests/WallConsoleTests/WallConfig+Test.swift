import WallProtocol

extension WallConfig {
    /// A wall of 160x90 tiles in a row, one per `(id, control port)` on loopback, with `extra`
    /// top-level lines (a `cues:` section): no node need run for the console's own tests.
    static func consoleTest(_ name: String, nodes: [(id: String, port: Int)], extra: String = "") throws -> WallConfig {
        let tiles = nodes.enumerated().map { index, node in
            """
              - id: \(node.id)
                control: 127.0.0.1:\(node.port)
                tile: {x: \(index * 160), y: 0, width: 160, height: 90}
            """
        }
        return try WallConfig.parse(
            """
            name: \(name)
            clock: 127.0.0.1:18590
            media: /tmp/clip.mp4
            canvas: {width: \(160 * nodes.count), height: 90}
            \(extra)
            nodes:
            \(tiles.joined(separator: "\n"))
            """)
    }
}
