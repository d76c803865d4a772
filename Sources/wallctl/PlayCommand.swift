import ArgumentParser
import Foundation
import LockstepTime
import WallControl
import WallProtocol
import WallTimeline

/// `wallctl play`: a new timeline every node follows, keeps, and comes back to after a restart.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play the config's playlist (or the given media) on every node, as a timeline they keep.",
        discussion: """
            Builds a new timeline version from the config's playlist (or its media, or --media files in \
            order), starting at one master time --lead seconds ahead, and sends it to every node. Each node \
            stores it, prepares the entry it calls for and presents its first frame at that time; it follows \
            the timeline from then on (loops, entries, rejoining after a restart) with no controller. An entry \
            without an out point plays for the shortest of the nodes' files for it.
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Option(
        name: .customLong("media"),
        help: "A media file (or a template with {id}) to play instead of the config's playlist; repeat for several.")
    var media: [String] = []

    @Option(
        name: .customLong("loop"), help: "Whether the playlist starts again after its last entry (default: config's loop).")
    var loop: Bool?

    func run() async throws {
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            let playlist = Playlist(entries: try await control.entries(items(wall.config)), loops: loop ?? wall.config.loop)
            let current = try await control.current().timeline
            let epoch = try await control.epoch()
            let at = try await control.effectiveTime(lead: MediaTime.maximum(edit.leadTime, wall.config.startMargin))
            let timeline: Timeline
            do {
                timeline = try Timeline(
                    wall: wall.config.name, version: (current?.version ?? 0) + 1, epoch: epoch, playlist: playlist,
                    start: at)
            } catch {
                throw ControlError.timeline("\(error)")
            }
            try await control.send(timeline)
            TimelineControl.describe(timeline, at: at, what: "play")
            try await control.confirm(timeline, at: at)
        }
    }

    /// What to play: --media files, else the config's playlist, else its media.
    private func items(_ config: WallConfig) -> [PlaylistItemConfig] {
        if !media.isEmpty {
            let folder = FileManager.default.currentDirectoryPath
            return media.map { PlaylistItemConfig(media: $0.hasPrefix("/") ? $0 : folder + "/" + $0) }
        }
        return config.playlistItems
    }
}
