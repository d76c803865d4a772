import ArgumentParser
import WallControl
import WallProtocol
import WallTimeline

/// `wallctl load`: new content for the whole wall, without touching a node's config.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Replace the playlist on every screen at one master time (new content, no config change).")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions
    @OptionGroup var origin: OriginOptions

    @Argument(
        help: ArgumentHelp(
            "Media files (or templates with {id}), played in order: a file on this machine is sent to every node "
                + "that lacks it (see push), any other each node must find in its media roots."))
    var media: [String]

    @Option(name: .customLong("loop"), help: "Whether the new playlist loops (default: the config's loop).")
    var loop: Bool?

    func validate() throws {
        guard !media.isEmpty else { throw ValidationError("name at least one media file") }
    }

    func run() async throws {
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            let items = media.map { PlaylistItemConfig(media: absolute($0)) }
            let distributed = try await origin.push(wall).distribute(items.map(\.media))
            let playlist = Playlist(
                entries: try await control.entries(items, distributed: distributed), loops: loop ?? wall.config.loop)
            try await control.carryOut("load", lead: edit.leadTime) { _, _ in .replacePlaylist(playlist) }
        }
    }
}
