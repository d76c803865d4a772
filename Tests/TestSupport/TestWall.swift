import Foundation

/// A wall config for a test, built in one place: every test that runs nodes writes its config with
/// this, so a change of the config format is made once.
public struct TestWall: Sendable {
    /// One node of the wall.
    public struct Node: Sendable {
        public var id: String
        public var controlPort: Int
        public var tile: (x: Int, y: Int, width: Int, height: Int)
        /// The sink's output size; nil: the tile's.
        public var output: (width: Int, height: Int)?
        public var videoSink: String
        public var audioSink: String?
        public var gravity: String?
        /// Further lines of the node's entry (`serve-clock: ...`, `screen: {...}`).
        public var extra: [String]

        public init(
            id: String, controlPort: Int, tile: (x: Int, y: Int, width: Int, height: Int),
            output: (width: Int, height: Int)? = nil, videoSink: String = "fakesink sync=true",
            audioSink: String? = nil, gravity: String? = nil, extra: [String] = []
        ) {
            self.id = id
            self.controlPort = controlPort
            self.tile = tile
            self.output = output
            self.videoSink = videoSink
            self.audioSink = audioSink
            self.gravity = gravity
            self.extra = extra
        }

        /// A row of ground-truth nodes side by side, 160x90 each, node `i` sending to `ports[i]`, each
        /// entry with the lines `extra`.
        public static func groundTruthRow(
            _ ids: [String], firstControlPort: Int, ports: [UInt16], extra: [String] = []
        ) -> [Node] {
            ids.enumerated().map { index, id in
                .groundTruth(
                    id: id, controlPort: firstControlPort + index, tile: (index * 160, 0, 160, 90), port: ports[index],
                    extra: extra)
            }
        }

        /// A node whose screen is a udpsink sending an 8x8 I420 copy of each frame it renders to
        /// `port` on this machine: what a ground-truth collector reads, whatever drew the frame (a
        /// clip, or a picture in its place).
        public static func groundTruth(
            id: String, controlPort: Int, tile: (x: Int, y: Int, width: Int, height: Int), port: UInt16,
            audio: Bool = false, extra: [String] = []
        ) -> Node {
            Node(
                id: id, controlPort: controlPort, tile: tile, output: (8, 8),
                videoSink: "videoconvert ! video/x-raw,format=I420 ! udpsink host=127.0.0.1 port=\(port) sync=true",
                audioSink: audio ? "fakesink sync=true" : nil, gravity: "resize", extra: extra)
        }
    }

    public var name: String
    public var clock: String
    public var media: String
    public var canvas: (width: Int, height: Int)
    /// `- {media: ...}` lines of the playlist, if it has one.
    public var playlist: [String]
    public var stateDirectory: String?
    /// Further top-level lines (`control-token-file: ...`, `start-horizon: 60s`).
    public var extra: [String]
    public var nodes: [Node]

    public init(
        name: String, clockPort: Int, media: String, canvas: (width: Int, height: Int), playlist: [String] = [],
        stateDirectory: String? = nil, extra: [String] = [], nodes: [Node]
    ) {
        self.name = name
        clock = "127.0.0.1:\(clockPort)"
        self.media = media
        self.canvas = canvas
        self.playlist = playlist
        self.stateDirectory = stateDirectory
        self.extra = extra
        self.nodes = nodes
    }

    /// The config as YAML.
    public var yaml: String {
        var lines = [
            "name: \(name)", "clock: \(clock)", "media: \(media)",
            "canvas: {width: \(canvas.width), height: \(canvas.height)}",
        ]
        if let stateDirectory { lines.append("state-directory: \(stateDirectory)") }
        lines += extra
        if !playlist.isEmpty { lines += ["playlist:"] + playlist.map { "  - \($0)" } }
        lines.append("nodes:")
        for node in nodes {
            lines.append("  - id: \(node.id)")
            lines.append("    control: 127.0.0.1:\(node.controlPort)")
            lines.append(
                "    tile: {x: \(node.tile.x), y: \(node.tile.y), width: \(node.tile.width), height: \(node.tile.height)}"
            )
            if let output = node.output {
                lines.append("    output: {width: \(output.width), height: \(output.height)}")
            }
            if let gravity = node.gravity { lines.append("    gravity: \(gravity)") }
            lines.append("    video-sink: \"\(node.videoSink)\"")
            if let audioSink = node.audioSink {
                lines.append("    audio: true")
                lines.append("    audio-sink: \"\(audioSink)\"")
            }
            lines += node.extra.map { "    \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes the config to `url` and returns it.
    @discardableResult
    public func write(to url: URL) throws -> URL {
        try yaml.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Starts the wall's master (`wallctl clock serve` on `clockPort`) and a `wallnode run` of
    /// `config` for every node, each on a clock of its own offset and drift (simulated) for the
    /// master to correct. `LOCKSTEP_TEST_NODE_LOG_LEVEL` in the environment (`debug`, `trace`) sets
    /// the nodes' log level, to see what a rare failure did.
    public func start(config: URL, clockPort: Int) throws -> (master: ChildProcess, nodes: [ChildProcess]) {
        let level = ProcessInfo.processInfo.environment[Self.nodeLogLevelVariable].map { ["--log-level", $0] } ?? []
        let master = try ChildProcess(
            ChildProcess.product("wallctl"), ["clock", "serve", "--listen", "127.0.0.1:\(clockPort)"])
        let nodes = try nodes.enumerated().map { index, node in
            try ChildProcess(
                ChildProcess.product("wallnode"),
                [
                    "run", "--config", config.path, "--id", node.id, "--log-format", "text",
                    "--simulate-clock-offset", "\(index * 700)", "--simulate-clock-drift-ppm", "\(index * 60 - 90)",
                ] + level)
        }
        return (master, nodes)
    }

    /// The environment variable naming the nodes' log level (`start(config:clockPort:)`).
    public static let nodeLogLevelVariable = "LOCKSTEP_TEST_NODE_LOG_LEVEL"

    /// The client of node `id`, with this wall's name on every request.
    public func client(_ id: String, token: String? = nil) -> TestNode {
        let node = nodes.first { $0.id == id }!
        return TestNode(port: node.controlPort, wall: name, token: token)
    }
}

/// A node's control API as a test talks to it: requests carry the wall's name and the token when
/// the test has them, replies are read whole (`RawHTTP`), JSON is parsed where asked.
public struct TestNode: Sendable {
    public let port: Int
    /// The wall every request names (`Lockstep-Wall`), if any.
    public var wall: String?
    public var token: String?

    public init(port: Int, wall: String? = nil, token: String? = nil) {
        self.port = port
        self.wall = wall
        self.token = token
    }

    /// One request, with the wall's name and the token added to `headers`.
    public func request(
        _ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:], timeout: Double = 10
    ) throws -> RawHTTP.Reply {
        var all = headers
        if let wall, all["Lockstep-Wall"] == nil { all["Lockstep-Wall"] = wall }
        if let token, all["Authorization"] == nil { all["Authorization"] = "Bearer \(token)" }
        return try RawHTTP.request(port: port, method, path, headers: all, body: body, timeout: timeout)
    }

    public func get(_ path: String) throws -> RawHTTP.Reply { try request("GET", path) }

    /// `GET /status` as JSON.
    public func status() throws -> [String: Any] {
        let reply = try get("/status")
        guard reply.status == 200,
            let object = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
        else { throw TestSupportError("/status on port \(port): \(reply)") }
        return object
    }

    /// The `timeline` part of `/status`, if the node has one.
    public func timeline() throws -> [String: Any]? { try status()["timeline"] as? [String: Any] }

    /// The node's player report.
    public func player() throws -> [String: Any] {
        guard let player = try status()["player"] as? [String: Any] else { throw TestSupportError("no player report") }
        return player
    }

    /// Waits until the node answers `GET /status`.
    public func waitUntilAnswering(within seconds: Double = 20) async throws {
        try await eventually(within: seconds, "the node's control API on port \(port)") {
            (try? self.get("/status").status) == 200
        }
    }

    /// Waits until the node's status satisfies `condition`; returns that status.
    @discardableResult
    public func waitForStatus(
        within seconds: Double = 20, _ what: String, _ condition: @escaping ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        do {
            try await eventually(within: seconds, what) {
                guard let status = try? self.status() else { return false }
                last = status
                return condition(status)
            }
        } catch {
            throw TestSupportError("\(error); the node's last status: \(last)")
        }
        return last
    }

    /// The `error` sentence of a JSON reply.
    public static func errorSentence(_ reply: RawHTTP.Reply) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
        return object?["error"] as? String ?? reply.body
    }
}

/// Waits until `condition` holds, asking again every `interval`; fails naming `what` after
/// `seconds`. The way to wait in a test: on a condition like this, not a fixed sleep before an assertion.
public func eventually(
    within seconds: Double, _ what: String, every interval: Duration = .milliseconds(100),
    _ condition: () throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        guard Date() < deadline else { throw TestSupportError("timed out after \(seconds) s waiting for \(what)") }
        try await Task.sleep(for: interval)
    }
}

/// Timelines as a node receives them (`PUT /timeline`), written out as JSON by hand: what a
/// controller other than wallctl would send, and the wire format spelled out once.
public enum TestTimelines {
    /// One entry playing `media` from 0 to `outPointNs`, looping, from master time `start` (ns).
    public static func json(
        wall: String, media: String, start: Int64, version: UInt64 = 1, epoch: UInt64 = 0,
        outPointNs: Int64 = 1_000_000_000, rate: (Int32, Int32) = (1, 1)
    ) throws -> String {
        let object: [String: Any] = [
            "wall": wall, "version": version, "epoch": epoch,
            "segments": [
                [
                    "from": ["value": start, "timescale": 1_000_000_000], "show": ["kind": "playlist"],
                    "playlist": [
                        "entries": [
                            [
                                "media": media, "inPoint": ["value": 0, "timescale": 1],
                                "outPoint": ["value": outPointNs, "timescale": 1_000_000_000],
                                "repeats": ["forever": [String: Any]()],
                            ]
                        ],
                        "loops": true,
                    ],
                    "origin": ["entry": 0, "pass": 0, "offset": ["value": 0, "timescale": 1]],
                    "rate": ["numerator": rate.0, "denominator": rate.1], "isPlaying": true,
                ]
            ],
        ]
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
