import Foundation
import LockstepNet
import LockstepTime
import ShowControl
import WallTimeline
import Yams

/// One of a config's `cues:`: what a show controller's button cuts the wall to, and what follows.
///
///     cues:
///       welcome: {media: welcome.mp4, then: return}         # a clip, then back to the loop where it was
///       reel: {playlist: [{media: a.mp4}, {media: b.mp4, out: 4s}], then: hold}
///       chapter-2: {entry: 1, at: 12.5s, then: next}        # a point of the playlist, playing on
///       logo: {still: logo.png, for: 10s, then: return}
///       dark: black                                          # black until the next command
///       hold: pause
///       go: resume
///
/// `then` is `return` (the default: the playlist the cue interrupted, from where it was), `hold`
/// (the clip's last frame, or the still, until the next command) or `next` (the interrupted
/// playlist's next entry). A cue's name is 1 to 64 letters, digits, `-`, `_` and `.`.
public struct CueConfig: Sendable, Hashable {
    public enum Target: Sendable, Hashable {
        case clip([PlaylistItemConfig])
        case entry(index: Int, at: MediaTime?)
        case still(image: String)
        case black
        case pause
        case resume

        /// Whether the cue cuts to a playing clip or entry: what a node can hold prerolled.
        public var cutsToVideo: Bool {
            switch self {
            case .clip, .entry: return true
            case .still, .black, .pause, .resume: return false
            }
        }
    }

    public var target: Target
    public var after: Cue.After
    /// For a still or black: how long before `after`.
    public var duration: MediaTime?
    /// Whether every node keeps the cue's first frame prerolled on a pipeline of its own
    /// (`standby:`, default true for a clip or an entry), so the cue cuts a few frames after its
    /// trigger; false: it cuts at the edit lead, as any verb. Each costs a pipeline per node.
    public var standby: Bool

    /// At most this many cues are kept in standby: each costs every node a pipeline (about 150 MB
    /// at 1080p).
    public static let standbyLimit = 4

    public init(target: Target, after: Cue.After = .return, duration: MediaTime? = nil, standby: Bool? = nil) {
        self.target = target
        self.after = after
        self.duration = duration
        self.standby = standby ?? target.cutsToVideo
    }

    /// The cues kept in standby, by name: those of `cues` that cut to video and ask for it.
    public static func standbyNames(_ cues: [String: CueConfig]) -> [String] {
        cues.filter { $0.value.standby && $0.value.target.cutsToVideo }.keys.sorted()
    }

    /// Media files its clip names.
    public var media: [String] {
        if case .clip(let items) = target { return items.map(\.media) }
        return []
    }

    /// Media files its clip names without an out point: those whose length the nodes must tell.
    public var mediaOfUnknownLength: [String] {
        if case .clip(let items) = target { return items.filter { $0.outPoint == nil }.map(\.media) }
        return []
    }

    /// The cue, its clip's entries ending at their own out points or at `lengths[media]`; nil when
    /// an entry's length is known neither way.
    public func cue(lengths: [String: MediaTime] = [:], distributed: [String: [String: ContentID]] = [:]) -> Cue? {
        let target: Cue.Target
        switch self.target {
        case .clip(let items):
            var entries: [TimelineEntry] = []
            for item in items {
                guard let outPoint = item.outPoint ?? lengths[item.media] else { return nil }
                var entry = item.entry(outPoint: outPoint)
                entry.distribute(distributed[item.media] ?? [:])
                entries.append(entry)
            }
            target = .playlist(Playlist(entries: entries, loops: false))
        case .entry(let index, let at): target = .entry(index: index, itemTime: at)
        case .still(let image): target = .still(image: image)
        case .black: target = .black
        case .pause: target = .pause
        case .resume: target = .resume
        }
        return Cue(target: target, after: after, duration: duration)
    }
}

extension ConfigReader {
    func cues(_ node: Node, baseDirectory: String?) throws(ConfigError) -> [String: CueConfig] {
        var cues: [String: CueConfig] = [:]
        let entries = try mapping(node, key: "cues")
        guard entries.count <= 256 else { throw invalid(node, "cues", "\(entries.count) cues: at most 256") }
        for (nameNode, value) in entries {
            let name = try string(nameNode, key: "cues")
            let key = "cues.\(name)"
            guard ShowCommand.isValidCueName(Substring(name)) else {
                throw invalid(nameNode, key, "a cue's name is 1 to 64 letters, digits, -, _ and .")
            }
            cues[name] = try cue(value, key: key, baseDirectory: baseDirectory)
        }
        let standby = CueConfig.standbyNames(cues)
        if standby.count > CueConfig.standbyLimit {
            throw invalid(
                node, "cues",
                "\(standby.count) cues are kept in standby (\(standby.joined(separator: ", "))): at most "
                    + "\(CueConfig.standbyLimit), each a pipeline on every node; give the others standby: false"
            )
        }
        return cues
    }

    private func cue(_ node: Node, key: String, baseDirectory: String?) throws(ConfigError) -> CueConfig {
        if let word = try? string(node, key: key) {
            switch word {
            case "black": return CueConfig(target: .black, after: .hold)
            case "pause": return CueConfig(target: .pause)
            case "resume": return CueConfig(target: .resume)
            default:
                throw invalid(node, key, "\"\(word)\" is not a cue: black, pause, resume, or a mapping ({media: ...})")
            }
        }
        let map = try mapping(node, key: key)
        try checkKeys(
            map,
            allowed: ["media", "in", "out", "playlist", "entry", "at", "still", "black", "for", "then", "standby"],
            path: key + ".")
        let targets = ["media", "playlist", "entry", "still", "black"].filter { optional(map, $0) != nil }
        guard targets.count == 1 else {
            throw invalid(
                node, key,
                targets.isEmpty
                    ? "names no target: media, playlist, entry, still or black"
                    : "names \(targets.joined(separator: " and ")): one target a cue")
        }
        let after = try value(map, "then", or: nil) { node throws(ConfigError) -> Cue.After? in
            let text = try string(node, key: key + ".then")
            guard let after = Cue.After(rawValue: text) else {
                throw invalid(node, key + ".then", "\"\(text)\" is not return, hold or next")
            }
            return after
        }
        let duration = try value(map, "for", or: nil) { node throws(ConfigError) -> MediaTime? in
            try self.duration(node, key: key + ".for")
        }
        let target: CueConfig.Target
        switch targets[0] {
        case "media":
            // One clip: a playlist entry's own keys, played once.
            target = .clip([try playlistItem(node, map, key: key, baseDirectory: baseDirectory)])
        case "playlist":
            target = .clip(try playlist(map["playlist"]!, key: key + ".playlist", baseDirectory: baseDirectory))
        case "entry":
            let index = try integer(map["entry"]!, key: key + ".entry", minimum: 0)
            let at = try value(map, "at", or: nil) { node throws(ConfigError) -> MediaTime? in
                try self.duration(node, key: key + ".at")
            }
            target = .entry(index: index, at: at)
        case "still":
            target = .still(image: try path(map["still"]!, key: key + ".still", baseDirectory: baseDirectory))
        default:
            guard try bool(map["black"]!, key: key + ".black") else {
                throw invalid(node, key + ".black", "write black: true, or leave it out")
            }
            target = .black
        }
        switch target {
        case .still, .black:
            if after != nil && after != .hold && duration == nil {
                throw invalid(node, key + ".then", "a still or black that returns or moves on needs for: DURATION")
            }
        default:
            if duration != nil { throw invalid(node, key + ".for", "only a still or black shows for a while") }
        }
        for field in ["in", "out"] where optional(map, field) != nil && targets[0] != "media" {
            throw invalid(node, key + "." + field, "goes with media:")
        }
        if optional(map, "at") != nil, targets[0] != "entry" { throw invalid(node, key + ".at", "goes with entry:") }
        let defaultAfter: Cue.After
        switch target {
        case .still, .black: defaultAfter = duration == nil ? .hold : .return
        default: defaultAfter = .return
        }
        let standby = try value(map, "standby", or: nil) { node throws(ConfigError) -> Bool? in
            try bool(node, key: key + ".standby")
        }
        if standby == true, !target.cutsToVideo {
            throw invalid(node, key + ".standby", "only a clip or an entry is kept in standby")
        }
        return CueConfig(target: target, after: after ?? defaultAfter, duration: duration, standby: standby)
    }

    func showControl(_ node: Node) throws(ConfigError) -> ShowInputSettings {
        let map = try mapping(node, key: "show-control")
        try checkKeys(map, allowed: ["osc", "udp", "tcp", "allow", "rate", "lead"], path: "show-control.")
        var settings = ShowInputSettings()
        settings.osc = try value(map, "osc", or: nil) { node throws(ConfigError) -> String? in
            try endpoint(node, key: "show-control.osc")
        }
        settings.udp = try value(map, "udp", or: nil) { node throws(ConfigError) -> String? in
            try endpoint(node, key: "show-control.udp")
        }
        settings.tcp = try value(map, "tcp", or: nil) { node throws(ConfigError) -> String? in
            try endpoint(node, key: "show-control.tcp")
        }
        if let allowNode = optional(map, "allow") {
            let list = (try? sequence(allowNode, key: "show-control.allow")) ?? [allowNode]
            settings.allow = []
            for (index, item) in list.enumerated() {
                let text = try string(item, key: "show-control.allow[\(index)]")
                do {
                    settings.allow.append(try AddressRange(parsing: text))
                } catch {
                    throw invalid(item, "show-control.allow[\(index)]", error.description)
                }
            }
            guard !settings.allow.isEmpty else { throw invalid(allowNode, "show-control.allow", "names nobody") }
        }
        settings.rate = try value(map, "rate", or: ShowInputSettings.defaultRate) {
            node throws(ConfigError) -> Double in
            let text = try string(node, key: "show-control.rate")
            guard let rate = Double(text.hasSuffix("/s") ? String(text.dropLast(2)) : text), rate >= 1, rate <= 1000
            else {
                throw invalid(
                    node, "show-control.rate", "commands a second from one sender, 1 to 1000, got \"\(text)\"")
            }
            return rate
        }
        settings.cueLead = try value(map, "lead", or: nil) { node throws(ConfigError) -> MediaTime? in
            let lead = try duration(node, key: "show-control.lead")
            guard lead >= CueLeadLimits.least, lead <= CueLeadLimits.most else {
                throw invalid(
                    node, "show-control.lead",
                    "a cue held in standby takes effect 5 ms to 2 s ahead, got \(lead.seconds) s")
            }
            return lead
        }
        return settings
    }
}

/// The fixed lead `show-control.lead` may give cues held in standby.
public enum CueLeadLimits {
    /// Less could not reach a node and start its player before the cut.
    public static let least = MediaTime(value: 5, timescale: 1000)
    public static let most = MediaTime(value: 2, timescale: 1)
}

extension CueConfig: CustomStringConvertible {
    /// "clip welcome.mp4, then return", as `wallctl cue --list` shows it.
    public var description: String {
        let what: String
        switch target {
        case .clip(let items):
            what = "clip " + items.map { ($0.media as NSString).lastPathComponent }.joined(separator: ", ")
        case .entry(let index, let at): what = "entry \(index)" + (at.map { " at \($0.seconds) s" } ?? "")
        case .still(let image): what = "still \((image as NSString).lastPathComponent)"
        case .black: what = "black"
        case .pause: return "pause"
        case .resume: return "resume"
        }
        return what + (duration.map { " for \($0.seconds) s" } ?? "") + ", then \(after.rawValue)"
    }
}
