import LockstepTime
import WallTimeline
import Yams

/// A config's `schedule:`: named playlists in day parts on a place's clocks, dated exceptions, and
/// what the screens show outside them. `wallctl play` sends it to the wall as a timeline (entries
/// without an out point take their media's length, as the nodes report it); with `autoplay`, every
/// node plays it by itself.
///
///     schedule:
///       time-zone: Europe/Paris
///       outside: black                      # or stopped, or {still: closed.png}
///       playlists:
///         museum: [{media: loop.mp4}]
///         event: {loop: false, entries: [{media: reel.mp4}]}
///       day-parts:
///         - {playlist: museum, days: [mon, tue, wed, thu, fri], from: "09:00", to: "17:00"}
///         - {playlist: event, days: [sat], from: "10:00", to: "18:00", dates: {from: 2026-12-01, to: 2026-12-31}}
///       exceptions:
///         - {name: Christmas, dates: 2026-12-25}                 # closed all day
///         - {name: New Year's Eve, dates: 2026-12-31, day-parts: [{playlist: event, from: "20:00", to: "00:30"}]}
public struct ScheduleConfig: Sendable, Hashable {
    public var timeZone: String
    public var playlists: [String: (items: [PlaylistItemConfig], loops: Bool)]
    public var dayParts: [DayPart]
    public var exceptions: [ScheduleException]
    public var outside: TimelineShow

    /// Every media file its playlists name.
    public var media: [String] {
        Array(Set(playlists.values.flatMap { $0.items.map(\.media) })).sorted()
    }

    /// The schedule, each entry ending at its own out point or at `lengths[media]`; nil when an
    /// entry's length is known neither way.
    ///
    /// - Parameter distributed: for media the wall distributes, each node's content ID by node id.
    public func schedule(lengths: [String: MediaTime] = [:], distributed: [String: [String: ContentID]] = [:])
        -> Schedule?
    {
        var resolved: [String: Playlist] = [:]
        for (name, playlist) in playlists {
            var entries: [TimelineEntry] = []
            for item in playlist.items {
                guard let outPoint = item.outPoint ?? lengths[item.media] else { return nil }
                var entry = item.entry(outPoint: outPoint)
                entry.distribute(distributed[item.media] ?? [:])
                entries.append(entry)
            }
            resolved[name] = Playlist(entries: entries, loops: playlist.loops)
        }
        return Schedule(
            timeZone: timeZone, playlists: resolved, dayParts: dayParts, exceptions: exceptions, outside: outside)
    }

    /// The schedule as a calendar: when its day parts begin and end does not depend on its files'
    /// lengths, so listings and warnings take each as a second long and ask no node.
    public var calendar: Schedule {
        // Every entry's file is in `media`: each has a length.
        schedule(lengths: Dictionary(uniqueKeysWithValues: media.map { ($0, MediaTime(value: 1, timescale: 1)) }))!
    }

    public static func == (a: ScheduleConfig, b: ScheduleConfig) -> Bool {
        a.timeZone == b.timeZone && a.dayParts == b.dayParts && a.exceptions == b.exceptions && a.outside == b.outside
            && a.playlists.keys.sorted() == b.playlists.keys.sorted()
            && a.playlists.allSatisfy { name, playlist in
                b.playlists[name].map { $0.items == playlist.items && $0.loops == playlist.loops } ?? false
            }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(timeZone)
        hasher.combine(dayParts)
        hasher.combine(playlists.keys.sorted())
    }
}

extension PlaylistItemConfig {
    /// The timeline entry this config entry plays, ending at `outPoint` (its own, or the media's
    /// length the nodes reported).
    public func entry(outPoint: MediaTime) -> TimelineEntry {
        TimelineEntry(
            media: media, inPoint: inPoint, outPoint: outPoint, repeats: repeats.map { .times($0) } ?? .forever)
    }
}

extension ConfigReader {
    static let scheduleKeys = ["time-zone", "outside", "playlists", "day-parts", "exceptions"]

    func schedule(_ node: Node, baseDirectory: String?) throws(ConfigError) -> ScheduleConfig {
        let map = try mapping(node, key: "schedule")
        try checkKeys(map, allowed: Self.scheduleKeys, path: "schedule.")
        let zoneNode = try required(map, "time-zone", in: node, path: "schedule")
        let zone = try string(zoneNode, key: "schedule.time-zone")
        if let problem = CivilClock.nameProblem(zone) { throw invalid(zoneNode, "schedule.time-zone", problem) }
        let playlistsNode = try required(map, "playlists", in: node, path: "schedule")
        var playlists: [String: (items: [PlaylistItemConfig], loops: Bool)] = [:]
        for (nameNode, value) in try mapping(playlistsNode, key: "schedule.playlists") {
            let name = try string(nameNode, key: "schedule.playlists")
            let key = "schedule.playlists.\(name)"
            guard !name.isEmpty, name.utf8.count <= 256 else {
                throw invalid(nameNode, key, "a name of 1 to 256 bytes")
            }
            if case .mapping(let playlist) = value {
                try checkKeys(playlist, allowed: ["entries", "loop"], path: key + ".")
                let items = try self.playlist(
                    try required(playlist, "entries", in: value, path: key), key: key + ".entries",
                    baseDirectory: baseDirectory)
                let loops = try self.value(playlist, "loop", or: true) { node throws(ConfigError) in
                    try bool(node, key: key + ".loop")
                }
                playlists[name] = (items, loops)
            } else {
                playlists[name] = (try self.playlist(value, key: key, baseDirectory: baseDirectory), true)
            }
        }
        guard !playlists.isEmpty else { throw invalid(playlistsNode, "schedule.playlists", "must name a playlist") }
        let known = playlists.keys.sorted()
        var dayParts: [DayPart] = []
        let partList: [Node] = try value(map, "day-parts", or: []) { node throws(ConfigError) in
            try sequence(node, key: "schedule.day-parts")
        }
        for (index, part) in partList.enumerated() {
            dayParts.append(try dayPart(part, key: "schedule.day-parts[\(index)]", playlists: known))
        }
        var exceptions: [ScheduleException] = []
        let exceptionList: [Node] = try value(map, "exceptions", or: []) { node throws(ConfigError) in
            try sequence(node, key: "schedule.exceptions")
        }
        for (index, item) in exceptionList.enumerated() {
            exceptions.append(try exception(item, key: "schedule.exceptions[\(index)]", playlists: known))
        }
        for (what, count) in [("day-parts", dayParts.count), ("exceptions", exceptions.count)]
        where count > Schedule.mostParts {
            throw invalid(node, "schedule.\(what)", "\(count): at most \(Schedule.mostParts)")
        }
        let outside = try value(map, "outside", or: TimelineShow.black) { node throws(ConfigError) in
            try outsideShow(node, baseDirectory: baseDirectory)
        }
        return ScheduleConfig(
            timeZone: zone, playlists: playlists, dayParts: dayParts, exceptions: exceptions, outside: outside)
    }

    private func dayPart(_ node: Node, key: String, playlists: [String]) throws(ConfigError) -> DayPart {
        let map = try mapping(node, key: key)
        try checkKeys(map, allowed: ["playlist", "days", "from", "to", "dates"], path: key + ".")
        let (playlist, from, to) = try span(node, map, key: key, playlists: playlists)
        let daysNode = try required(map, "days", in: node, path: key)
        var days: Set<Weekday> = []
        let names = Weekday.allCases.map(\.rawValue)
        let list = (try? sequence(daysNode, key: key + ".days")) ?? [daysNode]
        for (index, day) in list.enumerated() {
            let text = try string(day, key: "\(key).days[\(index)]").lowercased()
            switch text {
            case "every day", "daily": days.formUnion(Weekday.allCases)
            case "weekdays": days.formUnion([.monday, .tuesday, .wednesday, .thursday, .friday])
            case "weekends": days.formUnion([.saturday, .sunday])
            default:
                guard let weekday = Weekday(rawValue: String(text.prefix(3))), text.count >= 3,
                    weekday.rawValue == text || Self.longNames[weekday] == text
                else {
                    throw invalid(
                        day, "\(key).days[\(index)]",
                        "\"\(text)\" is not a day: \(names.joined(separator: ", ")), weekdays, weekends or daily")
                }
                days.insert(weekday)
            }
        }
        guard !days.isEmpty else { throw invalid(daysNode, key + ".days", "must name at least one day") }
        let dates = try value(map, "dates", or: nil) { node throws(ConfigError) in
            try dateRange(node, key: key + ".dates")
        }
        return DayPart(playlist: playlist, days: days, from: from, to: to, dates: dates)
    }

    private static let longNames: [Weekday: String] = [
        .monday: "monday", .tuesday: "tuesday", .wednesday: "wednesday", .thursday: "thursday", .friday: "friday",
        .saturday: "saturday", .sunday: "sunday",
    ]

    private func exception(_ node: Node, key: String, playlists: [String]) throws(ConfigError) -> ScheduleException {
        let map = try mapping(node, key: key)
        try checkKeys(map, allowed: ["name", "dates", "day-parts"], path: key + ".")
        let name = try value(map, "name", or: nil) { node throws(ConfigError) in try string(node, key: key + ".name") }
        let dates = try dateRange(try required(map, "dates", in: node, path: key), key: key + ".dates")
        var parts: [ScheduleException.Part] = []
        let partList: [Node] = try value(map, "day-parts", or: []) { node throws(ConfigError) in
            try sequence(node, key: key + ".day-parts")
        }
        for (index, part) in partList.enumerated() {
            let partKey = "\(key).day-parts[\(index)]"
            let partMap = try mapping(part, key: partKey)
            try checkKeys(partMap, allowed: ["playlist", "from", "to"], path: partKey + ".")
            let (playlist, from, to) = try span(part, partMap, key: partKey, playlists: playlists)
            parts.append(.init(playlist: playlist, from: from, to: to))
        }
        return ScheduleException(name: name, dates: dates, dayParts: parts)
    }

    /// A part's playlist and times.
    private func span(_ node: Node, _ map: Node.Mapping, key: String, playlists: [String]) throws(ConfigError)
        -> (String, CivilTime, CivilTime)
    {
        let playlistNode = try required(map, "playlist", in: node, path: key)
        let playlist = try string(playlistNode, key: key + ".playlist")
        guard playlists.contains(playlist) else {
            throw invalid(
                playlistNode, key + ".playlist",
                "\"\(playlist)\" is not one of schedule.playlists (\(playlists.joined(separator: ", ")))")
        }
        let from = try civilTime(try required(map, "from", in: node, path: key), key: key + ".from")
        let to = try civilTime(try required(map, "to", in: node, path: key), key: key + ".to")
        guard from.seconds < 86_400 else { throw invalid(node, key + ".from", "24:00 is the end of a day: use 00:00") }
        guard from != to else { throw invalid(node, key, "begins and ends at \(from)") }
        return (playlist, from, to)
    }

    private func civilTime(_ node: Node, key: String) throws(ConfigError) -> CivilTime {
        let text = try string(node, key: key)
        guard let time = CivilTime(text) else {
            throw invalid(node, key, "must be a time of day HH:MM (00:00 to 24:00), got \"\(text)\"")
        }
        return time
    }

    /// A date, or `{from: DATE, to: DATE}`, both included.
    private func dateRange(_ node: Node, key: String) throws(ConfigError) -> DateRange {
        func date(_ node: Node, key: String) throws(ConfigError) -> CivilDate {
            let text = try string(node, key: key)
            guard let date = CivilDate(text) else {
                throw invalid(node, key, "must be a date YYYY-MM-DD, got \"\(text)\"")
            }
            return date
        }
        guard case .mapping(let map) = node else {
            let day = try date(node, key: key)
            return DateRange(first: day, last: day)
        }
        try checkKeys(map, allowed: ["from", "to"], path: key + ".")
        let first = try date(try required(map, "from", in: node, path: key), key: key + ".from")
        let last = try date(try required(map, "to", in: node, path: key), key: key + ".to")
        guard last >= first else { throw invalid(node, key, "ends (\(last)) before it begins (\(first))") }
        return DateRange(first: first, last: last)
    }

    private func outsideShow(_ node: Node, baseDirectory: String?) throws(ConfigError) -> TimelineShow {
        if case .mapping(let map) = node {
            try checkKeys(map, allowed: ["still"], path: "schedule.outside.")
            let image = try path(
                try required(map, "still", in: node, path: "schedule.outside"), key: "schedule.outside.still",
                baseDirectory: baseDirectory)
            return .still(image: image)
        }
        switch try string(node, key: "schedule.outside") {
        case "black": return .black
        case "stopped": return .stopped
        case let other:
            throw invalid(
                node, "schedule.outside",
                "must be black, stopped (each node's still) or {still: FILE}, got \"\(other)\"")
        }
    }
}
