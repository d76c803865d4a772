import Foundation
import LockstepNet
import LockstepTime
import Yams

/// What is wrong with a wall config, with the file, line and key it is about.
public enum ConfigError: Error, Hashable, CustomStringConvertible {
    /// The file cannot be read.
    case unreadable(file: String, reason: String)
    /// The text is not YAML.
    case syntax(file: String, line: Int?, message: String)
    /// A required key is absent.
    case missing(file: String, line: Int?, key: String)
    /// A key the config does not know (often a typo), with the nearest known key.
    case unknownKey(file: String, line: Int?, key: String, suggestion: String?)
    /// A value of the wrong kind or out of range.
    case invalid(file: String, line: Int?, key: String, message: String)

    public var description: String {
        switch self {
        case .unreadable(let file, let reason):
            return "\(file): cannot read the config: \(reason)"
        case .syntax(let file, let line, let message):
            return "\(Self.place(file, line)): not valid YAML: \(message)"
        case .missing(let file, let line, let key):
            return "\(Self.place(file, line)): \(key) is required"
        case .unknownKey(let file, let line, let key, let suggestion):
            return "\(Self.place(file, line)): unknown key \(key)" + (suggestion.map { " (did you mean \($0)?)" } ?? "")
        case .invalid(let file, let line, let key, let message):
            return "\(Self.place(file, line)): \(key): \(message)"
        }
    }

    private static func place(_ file: String, _ line: Int?) -> String {
        line.map { "\(file):\($0)" } ?? file
    }
}

extension WallConfig {
    /// Reads and checks a wall config file. Relative media paths are resolved against the file's
    /// folder.
    public static func load(path: String) throws(ConfigError) -> WallConfig {
        let text = try read(path)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(text, file: path, baseDirectory: folder)
    }

    /// The largest config read: a wall of a thousand nodes is well under it, and parsing it takes
    /// tens of megabytes, not gigabytes.
    public static let largestFile = 256 * 1024
    /// The most nodes a wall has.
    public static let mostNodes = 1000
    /// How long a config given as a pipe (`--config /dev/stdin`) may take to arrive.
    static let pipeWait = Duration.seconds(10)

    /// The config's text: a regular file (or a pipe, /dev/stdin), at most `largestFile` bytes, UTF-8;
    /// otherwise an error saying which of those it is not.
    static func read(_ path: String) throws(ConfigError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason: String
            switch errno {
            case ENOENT: reason = "no such file"
            case EACCES: reason = "permission denied (the node's user must be able to read it)"
            default: reason = String(cString: strerror(errno))
            }
            throw .unreadable(file: path, reason: reason)
        }
        defer { close(descriptor) }
        var information = stat()
        if fstat(descriptor, &information) == 0, information.st_mode & S_IFMT == S_IFDIR {
            throw .unreadable(file: path, reason: "it is a directory, not a config file")
        }
        // Read in blocks up to one past the limit: /proc files say their size is 0.
        let started = ContinuousClock.now
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= largestFile {
            let count = block.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN {
                // A pipe whose writer has not written yet: wait for it, but not for ever.
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let waited = ContinuousClock.now - started
                let left = pipeWait - waited
                guard left > .zero, poll(&ready, 1, Int32(left.components.seconds * 1000 + 1)) > 0 else {
                    throw .unreadable(
                        file: path, reason: "nothing arrived on the pipe within \(pipeWait.components.seconds) s")
                }
                continue
            }
            guard count >= 0 else { throw .unreadable(file: path, reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            bytes += block[..<count]
        }
        guard bytes.count <= largestFile else {
            throw .unreadable(
                file: path, reason: "it is over \(largestFile / 1024) KiB; a wall config is at most that long")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            let bad = lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0
            let line = lines[bad].prefix(1024)
            let valid = (0...line.count).last { String(validating: line.prefix($0), as: UTF8.self) != nil } ?? 0
            throw .syntax(
                file: path, line: bad + 1, message: "the text is not UTF-8 (an invalid byte at column \(valid + 1))")
        }
        return text
    }

    /// Parses and checks a wall config. `file` names it in errors; relative media paths are
    /// resolved against `baseDirectory` when given.
    public static func parse(_ text: String, file: String = "<config>", baseDirectory: String? = nil)
        throws(ConfigError)
        -> WallConfig
    {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw .syntax(file: file, line: Self.line(of: error), message: Self.problem(of: error))
        } catch {
            throw .syntax(file: file, line: nil, message: "\(error)")
        }
        guard let root else { throw .missing(file: file, line: nil, key: "name, clock, media, canvas and nodes") }
        let reader = ConfigReader(file: file)
        var config = try reader.wall(root, baseDirectory: baseDirectory)
        try reader.check(config, root: root)
        config.digest = SHA256.hex(of: Array(text.utf8))
        return config
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        default:
            return nil
        }
    }

    private static func problem(of error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _):
            return problem
        default:
            return "\(error)"
        }
    }
}

/// Walks the YAML tree, turning each value into its typed form or an error naming the key path
/// and line.
struct ConfigReader {
    let file: String

    static let wallKeys = [
        "name", "clock", "clock-lock-timeout", "media", "canvas", "latency", "start-margin", "loop",
        "realtime-priority", "control-token-file", "viewer-token-file", "metrics-open", "control-tls", "media-roots",
        "start-horizon",
        "clock-key-file", "playlist", "autoplay", "state-directory", "still", "audio-languages", "subtitles",
        "schedule", "content-bandwidth", "content-grace", "controller", "cues", "show-control", "ptp", "nodes",
    ]
    static let nodeKeys = [
        "id", "control", "tile", "output", "gravity", "video-sink", "audio", "audio-sink", "display-latency",
        "screen", "serve-clock", "show-control", "standby",
    ]
    static let screenKeys = ["display", "monitor", "window", "fullscreen", "title", "connector", "plane", "mode"]

    func wall(_ root: Node, baseDirectory: String?) throws(ConfigError) -> WallConfig {
        let map = try mapping(root, key: "the config")
        try checkKeys(map, allowed: Self.wallKeys, path: "")
        let defaults = WallConfig(
            name: "", clock: "", media: .shared(path: ""), canvas: CanvasSize(width: 1, height: 1), nodes: [])
        let nodesNode = try required(map, "nodes", in: root)
        let nodeList = try sequence(nodesNode, key: "nodes")
        guard !nodeList.isEmpty else { throw invalid(nodesNode, "nodes", "a wall needs at least one node") }
        guard nodeList.count <= WallConfig.mostNodes else {
            throw invalid(nodesNode, "nodes", "\(nodeList.count) nodes: a wall has at most \(WallConfig.mostNodes)")
        }
        var nodes: [NodeConfig] = []
        for (index, node) in nodeList.enumerated() {
            nodes.append(try self.node(node, path: "nodes[\(index)]"))
        }
        let clockSources = try clockSources(try required(map, "clock", in: root))
        var wall = WallConfig(
            // Required: the name is the wall's identity (every request and timeline carries it), and
            // a default shared by every wall that forgot it would let one drive another.
            name: try wallName(try required(map, "name", in: root)),
            clock: clockSources[0],
            clockLockTimeout: try value(map, "clock-lock-timeout", or: defaults.clockLockTimeout) {
                node throws(ConfigError) in try duration(node, key: "clock-lock-timeout")
            },
            media: try media(try required(map, "media", in: root), key: "media", baseDirectory: baseDirectory),
            canvas: try size(try required(map, "canvas", in: root), key: "canvas"),
            latency: try value(map, "latency", or: defaults.latency) { node throws(ConfigError) in
                try duration(node, key: "latency")
            },
            startMargin: try value(map, "start-margin", or: defaults.startMargin) { node throws(ConfigError) in
                try duration(node, key: "start-margin")
            },
            loop: try value(map, "loop", or: defaults.loop) { node throws(ConfigError) in try bool(node, key: "loop") },
            realtimePriority: try value(map, "realtime-priority", or: defaults.realtimePriority) {
                node throws(ConfigError) in try priority(node)
            },
            security: ControlSecurity(
                tokenFile: try value(map, "control-token-file", or: nil) { node throws(ConfigError) in
                    try path(node, key: "control-token-file", baseDirectory: baseDirectory)
                },
                metricsOpen: try value(map, "metrics-open", or: false) { node throws(ConfigError) in
                    try bool(node, key: "metrics-open")
                },
                tls: try value(map, "control-tls", or: nil) { node throws(ConfigError) in
                    try tls(node, baseDirectory: baseDirectory)
                },
                viewerTokenFile: try value(map, "viewer-token-file", or: nil) { node throws(ConfigError) in
                    try path(node, key: "viewer-token-file", baseDirectory: baseDirectory)
                }),
            mediaRoots: try value(map, "media-roots", or: nil) { node throws(ConfigError) in
                let list = try sequence(node, key: "media-roots")
                guard !list.isEmpty else { throw invalid(node, "media-roots", "must name at least one folder") }
                var roots: [String] = []
                for (index, item) in list.enumerated() {
                    roots.append(try path(item, key: "media-roots[\(index)]", baseDirectory: baseDirectory))
                }
                return roots
            },
            startHorizon: try value(map, "start-horizon", or: defaults.startHorizon) { node throws(ConfigError) in
                let horizon = try duration(node, key: "start-horizon")
                guard horizon >= MediaTime(value: 1, timescale: 1) else {
                    throw invalid(node, "start-horizon", "must be at least 1s, got \(horizon.seconds) s")
                }
                return horizon
            },
            clockKeyFile: try value(map, "clock-key-file", or: nil) { node throws(ConfigError) in
                try path(node, key: "clock-key-file", baseDirectory: baseDirectory)
            },
            playlist: try value(map, "playlist", or: []) { node throws(ConfigError) in
                try playlist(node, baseDirectory: baseDirectory)
            },
            autoplay: try value(map, "autoplay", or: false) { node throws(ConfigError) in
                try bool(node, key: "autoplay")
            },
            stateDirectory: try value(map, "state-directory", or: nil) { node throws(ConfigError) in
                try path(node, key: "state-directory", baseDirectory: baseDirectory)
            },
            still: try value(map, "still", or: nil) { node throws(ConfigError) in
                try media(node, key: "still", baseDirectory: baseDirectory)
            },
            nodes: nodes)
        wall.clockSources = clockSources
        wall.audioLanguages = try value(map, "audio-languages", or: []) { node throws(ConfigError) in
            try languages(node, key: "audio-languages")
        }
        wall.subtitleLanguages = try value(map, "subtitles", or: []) { node throws(ConfigError) in
            try languages(node, key: "subtitles")
        }
        wall.contentBandwidth = try value(map, "content-bandwidth", or: nil) { node throws(ConfigError) in
            let text = try string(node, key: "content-bandwidth")
            guard let rate = Self.bandwidth(text) else {
                throw invalid(
                    node, "content-bandwidth",
                    "must be a rate such as 20MB/s, 500kB/s or 1GB/s (bytes), got \"\(text)\"")
            }
            return rate
        }
        wall.controller = try value(map, "controller", or: nil) { node throws(ConfigError) in
            let controller = try mapping(node, key: "controller")
            try checkKeys(controller, allowed: ["listen", "library"], path: "controller.")
            let listenNode = try required(controller, "listen", in: node, path: "controller")
            let listen = try endpoint(listenNode, key: "controller.listen")
            if wall.security.tokenFile == nil, let endpoint = try? Endpoint(parsing: listen),
                !Self.isLoopback(host: endpoint.host)
            {
                throw invalid(
                    listenNode, "controller.listen",
                    "\(listen) is reachable beyond this machine, so the wall needs control-token-file (the daemon's "
                        + "content, console and show-control routes would be open to anyone on the network)")
            }
            let library = try value(controller, "library", or: nil) { node throws(ConfigError) in
                try path(node, key: "controller.library", baseDirectory: baseDirectory)
            }
            return ControllerConfig(listen: listen, library: library)
        }
        wall.contentGrace = try value(map, "content-grace", or: WallConfig.defaultContentGrace) {
            node throws(ConfigError) in try duration(node, key: "content-grace")
        }
        wall.schedule = try value(map, "schedule", or: nil) { node throws(ConfigError) in
            try schedule(node, baseDirectory: baseDirectory)
        }
        wall.cues = try value(map, "cues", or: [:]) { node throws(ConfigError) in
            try cues(node, baseDirectory: baseDirectory)
        }
        wall.showControl = try value(map, "show-control", or: nil) { node throws(ConfigError) in
            try showControl(node)
        }
        wall.ptp = try value(map, "ptp", or: nil) { node throws(ConfigError) in
            try ptp(node, baseDirectory: baseDirectory)
        }
        for (index, node) in nodes.enumerated() where node.showControl && wall.showControl == nil {
            throw invalid(nodeList[index], "nodes[\(index)].show-control", "needs the wall's show-control: section")
        }
        var relays: [String: String] = [:]
        for (index, node) in nodes.enumerated() {
            guard let relay = node.serveClock else { continue }
            let key = "nodes[\(index)].serve-clock"
            let entry = nodeList[index]
            if relay == clockSources[0] {
                throw invalid(entry, key, "\(relay) is the master's address (the first clock source)")
            }
            if let other = relays[relay] {
                throw invalid(entry, key, "\(relay) is already where node \(other) serves the clock")
            }
            relays[relay] = node.id
        }
        return wall
    }

    func playlist(_ node: Node, key name: String = "playlist", baseDirectory: String?) throws(ConfigError)
        -> [PlaylistItemConfig]
    {
        let list = try sequence(node, key: name)
        guard !list.isEmpty else { throw invalid(node, name, "must list at least one entry") }
        var items: [PlaylistItemConfig] = []
        for (index, item) in list.enumerated() {
            let key = "\(name)[\(index)]"
            let map = try mapping(item, key: key)
            try checkKeys(map, allowed: ["media", "in", "out", "repeat"], path: key + ".")
            items.append(try playlistItem(item, map, key: key, baseDirectory: baseDirectory))
        }
        return items
    }

    /// One playlist entry's `media`, `in`, `out` and `repeat` from `map` (the caller checks its keys).
    func playlistItem(_ item: Node, _ map: Node.Mapping, key: String, baseDirectory: String?) throws(ConfigError)
        -> PlaylistItemConfig
    {
        let media = try path(
            try required(map, "media", in: item, path: key), key: "\(key).media", baseDirectory: baseDirectory)
        let inPoint = try value(map, "in", or: MediaTime.zero) { node throws(ConfigError) in
            try duration(node, key: "\(key).in")
        }
        let outPoint = try value(map, "out", or: nil) { node throws(ConfigError) in
            let out = try duration(node, key: "\(key).out")
            guard out > inPoint else {
                throw invalid(node, "\(key).out", "must be after in (\(inPoint.seconds) s), got \(out.seconds) s")
            }
            return out
        }
        let repeats = try value(map, "repeat", or: 1) { node throws(ConfigError) -> Int? in
            if (try? string(node, key: "\(key).repeat")) == "forever" { return nil }
            return try integer(node, key: "\(key).repeat", minimum: 1)
        }
        return PlaylistItemConfig(media: media, inPoint: inPoint, outPoint: outPoint, repeats: repeats)
    }

    /// Bytes per second from `20MB/s`, `500kB/s`, `1GB/s` or a bare number of bytes per second.
    static func bandwidth(_ text: String) -> Double? {
        let units: [(String, Double)] = [("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3), ("B/s", 1)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value.isFinite, value > 0 else { return nil }
            return value * scale
        }
        guard let value = Double(text), value.isFinite, value > 0 else { return nil }
        return value
    }

    private func tls(_ node: Node, baseDirectory: String?) throws(ConfigError) -> ControlTLS {
        let map = try mapping(node, key: "control-tls")
        try checkKeys(map, allowed: ["certificate", "key", "trust-roots"], path: "control-tls.")
        return ControlTLS(
            certificate: try path(
                try required(map, "certificate", in: node, path: "control-tls"), key: "control-tls.certificate",
                baseDirectory: baseDirectory),
            key: try path(
                try required(map, "key", in: node, path: "control-tls"), key: "control-tls.key",
                baseDirectory: baseDirectory),
            trustRoots: try value(map, "trust-roots", or: nil) { node throws(ConfigError) in
                try path(node, key: "control-tls.trust-roots", baseDirectory: baseDirectory)
            })
    }

    private func node(_ node: Node, path: String) throws(ConfigError) -> NodeConfig {
        let map = try mapping(node, key: path)
        try checkKeys(map, allowed: Self.nodeKeys, path: path + ".")
        let idNode = try required(map, "id", in: node, path: path)
        let id = try string(idNode, key: "\(path).id")
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw invalid(idNode, "\(path).id", "must be letters, digits, - or _, got \"\(id)\"")
        }
        guard id.utf8.count <= Self.longestName else {
            throw invalid(
                idNode, "\(path).id", "must be at most \(Self.longestName) bytes, this one has \(id.utf8.count)")
        }
        let defaults = NodeConfig(id: id, control: "", tile: PixelRect(x: 0, y: 0, width: 1, height: 1))
        var config = NodeConfig(
            id: id,
            control: try endpoint(try required(map, "control", in: node, path: path), key: "\(path).control"),
            tile: try rect(try required(map, "tile", in: node, path: path), key: "\(path).tile"),
            output: try value(map, "output", or: nil) { node throws(ConfigError) in
                try size(node, key: "\(path).output")
            },
            gravity: try value(map, "gravity", or: defaults.gravity) { node throws(ConfigError) in
                try gravity(node, key: "\(path).gravity")
            },
            videoSink: try value(map, "video-sink", or: defaults.videoSink) { node throws(ConfigError) in
                try string(node, key: "\(path).video-sink")
            },
            audio: try value(map, "audio", or: defaults.audio) { node throws(ConfigError) in
                try bool(node, key: "\(path).audio")
            },
            audioSink: try value(map, "audio-sink", or: defaults.audioSink) { node throws(ConfigError) in
                try string(node, key: "\(path).audio-sink")
            },
            displayLatency: try value(map, "display-latency", or: defaults.displayLatency) { node throws(ConfigError) in
                try duration(node, key: "\(path).display-latency")
            },
            screen: try value(map, "screen", or: ScreenConfig()) { node throws(ConfigError) in
                try screen(node, key: "\(path).screen")
            },
            serveClock: try value(map, "serve-clock", or: nil) { node throws(ConfigError) in
                try endpoint(node, key: "\(path).serve-clock")
            })
        config.showControl = try value(map, "show-control", or: false) { node throws(ConfigError) in
            try bool(node, key: "\(path).show-control")
        }
        config.standby = try value(map, "standby", or: true) { node throws(ConfigError) in
            try bool(node, key: "\(path).standby")
        }
        return config
    }

    /// `clock`: one `HOST:PORT`, or a list of them in order of preference, without repeats.
    private func clockSources(_ node: Node) throws(ConfigError) -> [String] {
        guard case .sequence(let list) = node else { return [try endpoint(node, key: "clock")] }
        guard !list.isEmpty else { throw invalid(node, "clock", "the list of clock sources is empty") }
        var sources: [String] = []
        for (index, item) in list.enumerated() {
            let source = try endpoint(item, key: "clock[\(index)]")
            guard !sources.contains(source) else {
                throw invalid(item, "clock[\(index)]", "\(source) is listed twice")
            }
            sources.append(source)
        }
        return sources
    }

    private func screen(_ node: Node, key: String) throws(ConfigError) -> ScreenConfig {
        let map = try mapping(node, key: key)
        try checkKeys(map, allowed: Self.screenKeys, path: key + ".")
        let screen = ScreenConfig(
            display: try value(map, "display", or: nil) { node throws(ConfigError) in
                try string(node, key: "\(key).display")
            },
            monitor: try value(map, "monitor", or: nil) { node throws(ConfigError) in
                try string(node, key: "\(key).monitor")
            },
            window: try value(map, "window", or: nil) { node throws(ConfigError) in
                try rect(node, key: "\(key).window")
            },
            fullscreen: try value(map, "fullscreen", or: false) { node throws(ConfigError) in
                try bool(node, key: "\(key).fullscreen")
            },
            title: try value(map, "title", or: nil) { node throws(ConfigError) in
                try string(node, key: "\(key).title")
            },
            connector: try value(map, "connector", or: nil) { node throws(ConfigError) in
                try integer(node, key: "\(key).connector", minimum: 0)
            },
            plane: try value(map, "plane", or: nil) { node throws(ConfigError) in
                try integer(node, key: "\(key).plane", minimum: 0)
            },
            mode: try value(map, "mode", or: nil) { node throws(ConfigError) in
                let text = try string(node, key: "\(key).mode")
                guard let mode = ScreenConfig.ExpectedMode(text) else {
                    throw invalid(
                        node, "\(key).mode", "\"\(text)\" is not a display mode such as 1920x1080 or 1920x1080@60")
                }
                return mode
            })
        if screen.fullscreen, screen.window != nil, let windowNode = map[Node("window")] {
            throw invalid(
                windowNode, "\(key).window", "cannot be given with fullscreen: a fullscreen window fills its monitor")
        }
        return screen
    }

    // MARK: Whole-wall checks

    /// Checks what no single value shows: unique ids and control addresses, tiles on the canvas, a
    /// playlist a wall can play by itself.
    func check(_ config: WallConfig, root: Node) throws(ConfigError) {
        if let viewer = config.security.viewerTokenFile, let node = root["viewer-token-file"] {
            if config.security.tokenFile == nil {
                throw invalid(
                    node, "viewer-token-file",
                    "needs control-token-file: with no control token anyone logs in to act, and a viewer's token "
                        + "would guard nothing")
            }
            if viewer == config.security.tokenFile {
                throw invalid(
                    node, "viewer-token-file", "names the control token's file: a viewer's token must be another")
            }
        }
        if config.autoplay, let node = root["autoplay"], let schedule = config.schedule {
            if schedule.playlists.values.contains(where: { $0.items.contains { $0.outPoint == nil } }) {
                throw invalid(
                    node, "autoplay",
                    "needs an out point on every entry of the schedule's playlists: nodes playing by themselves "
                        + "must agree on every entry's length without asking each other")
            }
        } else if config.autoplay, let node = root["autoplay"] {
            guard !config.playlist.isEmpty else {
                throw invalid(node, "autoplay", "needs a playlist: the entries every node plays by itself")
            }
            if let index = config.playlist.firstIndex(where: { $0.outPoint == nil }) {
                throw invalid(
                    node, "autoplay",
                    "needs an out point on every playlist entry (playlist[\(index)] has none): nodes playing by "
                        + "themselves must agree on every entry's length without asking each other")
            }
        }
        let nodeNodes = (root["nodes"].map { (try? sequence($0, key: "nodes")) ?? [] }) ?? []
        var ids: [String: Int] = [:]
        var controls: [String: Int] = [:]
        for (index, node) in config.nodes.enumerated() {
            let where_ = index < nodeNodes.count ? nodeNodes[index] : root
            if let first = ids[node.id] {
                throw invalid(where_, "nodes[\(index)].id", "\"\(node.id)\" is already the id of nodes[\(first)]")
            }
            ids[node.id] = index
            if let first = controls[node.control] {
                throw invalid(
                    where_, "nodes[\(index)].control",
                    "\(node.control) is already the control address of nodes[\(first)]")
            }
            controls[node.control] = index
            if config.security.tokenFile == nil, let endpoint = try? Endpoint(parsing: node.control),
                !Self.isLoopback(host: endpoint.host)
            {
                throw invalid(
                    where_, "nodes[\(index)].control",
                    "\(node.control) is reachable beyond this machine, so the wall needs control-token-file "
                        + "(a file holding the token every control request must carry)")
            }
            let tile = node.tile
            if tile.x < 0 || tile.y < 0 || tile.x + tile.width > config.canvas.width
                || tile.y + tile.height > config.canvas.height
            {
                throw invalid(
                    where_, "nodes[\(index)].tile",
                    "(\(tile.x), \(tile.y), \(tile.width)x\(tile.height)) does not fit the "
                        + "\(config.canvas.width)x\(config.canvas.height) canvas")
            }
        }
    }

    /// The longest wall name and node id, in bytes: both name the node's state files, which must
    /// fit a file name (255 bytes) with room to spare.
    static let longestName = 100

    /// The wall's name: its identity in every request, timeline and state file name, so it must
    /// be text a log line and a file name can hold.
    func wallName(_ node: Node) throws(ConfigError) -> String {
        let name = try string(node, key: "name")
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw invalid(node, "name", "must not be empty: it is the wall's identity in every request")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw invalid(node, "name", "must not hold a line break, tab or other control character")
        }
        guard name.utf8.count <= Self.longestName else {
            throw invalid(node, "name", "must be at most \(Self.longestName) bytes, this one has \(name.utf8.count)")
        }
        return name
    }

    /// Whether `host` names this machine only: only then may the control API go without a token.
    static func isLoopback(host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    // MARK: Structure

    func mapping(_ node: Node, key: String) throws(ConfigError) -> Node.Mapping {
        guard case .mapping(let map) = node else { throw invalid(node, key, "must be a mapping of keys to values") }
        return map
    }

    func sequence(_ node: Node, key: String) throws(ConfigError) -> [Node] {
        guard case .sequence(let list) = node else { throw invalid(node, key, "must be a list") }
        return Array(list)
    }

    func required(_ map: Node.Mapping, _ key: String, in parent: Node, path: String? = nil) throws(ConfigError)
        -> Node
    {
        guard let value = map[Node(key)] else {
            throw .missing(file: file, line: parent.mark?.line, key: path.map { "\($0).\(key)" } ?? key)
        }
        return value
    }

    /// The value of an optional key read by `read`, or `fallback` when the key is absent or null.
    func value<T>(
        _ map: Node.Mapping, _ key: String, or fallback: T, _ read: (Node) throws(ConfigError) -> T
    ) throws(ConfigError) -> T {
        guard let node = optional(map, key) else { return fallback }
        return try read(node)
    }

    func optional(_ map: Node.Mapping, _ key: String) -> Node? {
        guard let value = map[Node(key)] else { return nil }
        if value.null != nil { return nil }
        return value
    }

    func checkKeys(_ map: Node.Mapping, allowed: [String], path: String) throws(ConfigError) {
        for (keyNode, _) in map {
            let key = keyNode.string ?? "\(keyNode)"
            guard !allowed.contains(key) else { continue }
            let suggestion = allowed.min { editDistance($0, key) < editDistance($1, key) }
                .flatMap { editDistance($0, key) <= 2 ? path + $0 : nil }
            throw .unknownKey(file: file, line: keyNode.mark?.line, key: path + key, suggestion: suggestion)
        }
    }

    // MARK: Values

    func string(_ node: Node, key: String) throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw invalid(node, key, "must be text") }
        return scalar.string
    }

    /// A list of language tags, BCP 47 or ISO 639 ("fr", "en-GB", "fra"), or `off` for none.
    private func languages(_ node: Node, key: String) throws(ConfigError) -> [String] {
        if case .scalar = node, (try? string(node, key: key)) == "off" { return [] }
        var tags: [String] = []
        for (index, item) in try sequence(node, key: key).enumerated() {
            let tag = try string(item, key: "\(key)[\(index)]")
            guard tag.range(of: "^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$", options: .regularExpression) != nil else {
                throw invalid(
                    item, "\(key)[\(index)]", "must be a language tag such as fr, en-GB or deu, got \"\(tag)\"")
            }
            tags.append(tag)
        }
        return tags
    }

    /// `ptp: {uds: /var/run/ptp4l, domain: 0, pmc: /usr/sbin/pmc}`, every key optional (`ptp: {}`).
    private func ptp(_ node: Node, baseDirectory: String?) throws(ConfigError) -> PTPConfig {
        let map = try mapping(node, key: "ptp")
        try checkKeys(map, allowed: ["uds", "domain", "pmc"], path: "ptp.")
        var config = PTPConfig()
        config.udsAddress = try value(map, "uds", or: config.udsAddress) { node throws(ConfigError) in
            let path = try self.path(node, key: "ptp.uds", baseDirectory: baseDirectory)
            // A Unix socket's path is at most 107 bytes (sun_path); the node checks it again once
            // {id} is its id.
            guard path.utf8.count <= PTPConfig.longestSocketPath else {
                throw invalid(
                    node, "ptp.uds",
                    "is too long for a Unix socket's path (\(PTPConfig.longestSocketPath) bytes at most)")
            }
            return path
        }
        config.domain = try value(map, "domain", or: 0) { node throws(ConfigError) in
            let domain = try integer(node, key: "ptp.domain", minimum: 0)
            guard domain <= 255 else { throw invalid(node, "ptp.domain", "must be 0 to 255, got \(domain)") }
            return domain
        }
        config.pmc = try value(map, "pmc", or: config.pmc) { node throws(ConfigError) in
            try self.path(node, key: "ptp.pmc", baseDirectory: baseDirectory)
        }
        return config
    }

    func bool(_ node: Node, key: String) throws(ConfigError) -> Bool {
        guard let value = node.bool else { throw invalid(node, key, "must be true or false, got \(describe(node))") }
        return value
    }

    func integer(_ node: Node, key: String, minimum: Int) throws(ConfigError) -> Int {
        guard case .scalar = node, let value = node.int else {
            throw invalid(node, key, "must be a whole number, got \(describe(node))")
        }
        guard value >= minimum else { throw invalid(node, key, "must be at least \(minimum), got \(value)") }
        return value
    }

    private func size(_ node: Node, key: String) throws(ConfigError) -> CanvasSize {
        let map = try mapping(node, key: key)
        try checkKeys(map, allowed: ["width", "height"], path: key + ".")
        return CanvasSize(
            width: try integer(try required(map, "width", in: node, path: key), key: "\(key).width", minimum: 1),
            height: try integer(try required(map, "height", in: node, path: key), key: "\(key).height", minimum: 1))
    }

    private func rect(_ node: Node, key: String) throws(ConfigError) -> PixelRect {
        let map = try mapping(node, key: key)
        try checkKeys(map, allowed: ["x", "y", "width", "height"], path: key + ".")
        return PixelRect(
            x: try integer(try required(map, "x", in: node, path: key), key: "\(key).x", minimum: 0),
            y: try integer(try required(map, "y", in: node, path: key), key: "\(key).y", minimum: 0),
            width: try integer(try required(map, "width", in: node, path: key), key: "\(key).width", minimum: 1),
            height: try integer(try required(map, "height", in: node, path: key), key: "\(key).height", minimum: 1))
    }

    private func gravity(_ node: Node, key: String) throws(ConfigError) -> TileGravity {
        let text = try string(node, key: key)
        guard let value = TileGravity(rawValue: text) else {
            let names = TileGravity.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid(node, key, "must be one of \(names), got \"\(text)\"")
        }
        return value
    }

    private func priority(_ node: Node) throws(ConfigError) -> Int32? {
        if (try? string(node, key: "realtime-priority")) == "none" { return nil }
        let value = try integer(node, key: "realtime-priority", minimum: 1)
        guard value <= 99 else { throw invalid(node, "realtime-priority", "must be 1 to 99 or none, got \(value)") }
        return Int32(value)
    }

    /// A file or folder path, resolved against the config's folder when relative.
    func path(_ node: Node, key: String, baseDirectory: String?) throws(ConfigError) -> String {
        let text = try string(node, key: key)
        guard !text.isEmpty else { throw invalid(node, key, "must name a file or folder") }
        return resolve(text, against: baseDirectory)
    }

    private func resolve(_ path: String, against baseDirectory: String?) -> String {
        guard let baseDirectory, !path.hasPrefix("/") else { return path }
        return URL(fileURLWithPath: baseDirectory).appendingPathComponent(path).standardizedFileURL.path
    }

    /// A file, or `{per-node: template}` with `{id}` in it: the media, and the still.
    func media(_ node: Node, key: String, baseDirectory: String?) throws(ConfigError) -> MediaSource {
        func resolve(_ path: String) -> String { self.resolve(path, against: baseDirectory) }
        if case .mapping(let map) = node {
            try checkKeys(map, allowed: ["per-node"], path: "\(key).")
            let template = try string(try required(map, "per-node", in: node, path: key), key: "\(key).per-node")
            guard template.contains("{id}") else {
                throw invalid(node, "\(key).per-node", "must contain {id}, which becomes each node's id")
            }
            return .perNode(template: resolve(template))
        }
        let path = try string(node, key: key)
        guard !path.isEmpty else {
            throw invalid(node, key, "must name \(key == "media" ? "a media" : "an image") file")
        }
        return .shared(path: resolve(path))
    }

    /// A `HOST:PORT` address: checked here for its form; resolving the host is the node's job.
    func endpoint(_ node: Node, key: String) throws(ConfigError) -> String {
        let text = try string(node, key: key)
        do {
            _ = try Endpoint(parsing: text)
        } catch {
            throw invalid(node, key, error.description)
        }
        return text
    }

    /// A duration: a number of seconds, or a number with a unit: "250ms", "1.5s", "20us", "0".
    func duration(_ node: Node, key: String) throws(ConfigError) -> MediaTime {
        let text = try string(node, key: key).trimmingCharacters(in: .whitespaces)
        guard let time = DurationSyntax.parse(text), time >= .zero else {
            throw invalid(node, key, "must be a duration such as 250ms, 1.5s or 0, got \"\(text)\"")
        }
        return time
    }

    func invalid(_ node: Node, _ key: String, _ message: String) -> ConfigError {
        .invalid(file: file, line: node.mark?.line, key: key, message: message)
    }

    func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): return "\"\(scalar.string)\""
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }
}

/// Levenshtein distance, for suggesting the key a typo meant.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    var previous = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...max(b.count, 1) where !b.isEmpty {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

/// Durations as people write them in configs and on command lines.
public enum DurationSyntax {
    /// "250ms" → 0.25 s exactly; a bare number is seconds. Units: s, ms, us, µs, ns.
    public static func parse(_ text: String) -> MediaTime? {
        let units: [(suffix: String, scale: Int64)] = [
            ("ms", 1_000), ("us", 1_000_000), ("µs", 1_000_000), ("ns", 1_000_000_000), ("s", 1),
        ]
        var number = text
        var scale: Int64 = 1
        for unit in units where text.hasSuffix(unit.suffix) {
            number = String(text.dropLast(unit.suffix.count)).trimmingCharacters(in: .whitespaces)
            scale = unit.scale
            break
        }
        guard let seconds = exactDecimal(number) else { return nil }
        return seconds.multiplied(byRatio: 1, scale)
    }

    /// A decimal number as an exact rational time in seconds: "1.25" → 125/100.
    private static func exactDecimal(_ text: String) -> MediaTime? {
        let negative = text.hasPrefix("-")
        let body = negative ? String(text.dropFirst()) : text
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !(whole.isEmpty && parts.count == 1),
            whole.allSatisfy(\.isNumber), parts.count == 1 || (parts[1].allSatisfy(\.isNumber) && parts[1].count <= 9)
        else { return nil }
        let fraction = parts.count == 2 ? String(parts[1]) : ""
        guard let value = Int64(String(whole) + fraction + (whole.isEmpty && fraction.isEmpty ? "0" : "")) else {
            return nil
        }
        var timescale: Int64 = 1
        for _ in 0..<fraction.count { timescale *= 10 }
        return MediaTime(value: negative ? -value : value, timescale: Int32(timescale))
    }
}
