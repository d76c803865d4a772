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
        abstract:
            "Play the config's schedule or playlist (or the given media) on every node, as a timeline they keep.",
        discussion: """
            Waits (up to --timeout) until every node answers with its clock locked and holds every file, then \
            builds a new timeline version from the config's playlist (or its media, or --media files in order), \
            starting at one master time --lead seconds ahead, and sends it to every node. Each node stores it, \
            prepares the entry it calls for and presents its first frame at that time; it follows the timeline \
            from then on (loops, entries, rejoining after a restart) with no controller. An entry without an out \
            point plays for the shortest of the nodes' files for it. With a schedule: section (and no --media), the \
            wall plays the schedule: every node computes its transitions on the master's UTC by itself, which needs \
            a master serving real time (wallctl clock serve --realtime). Exits 0 once every screen is in step.
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions
    @OptionGroup var origin: OriginOptions

    @Option(
        name: .customLong("media"),
        help: "A media file (or a template with {id}) to play instead of the config's playlist; repeat for several.")
    var media: [String] = []

    @Option(
        name: .customLong("loop"),
        help: "Whether the playlist starts again after its last entry (default: config's loop).")
    var loop: Bool?

    func run() async throws {
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            guard !media.isEmpty else {
                // The schedule's files found here go to the nodes that lack them, named by content.
                try await control.playShow(lead: edit.leadTime, loops: loop) { media in
                    try await origin.push(wall).distribute(media)
                }
                return
            }
            // Files given here are sent to the nodes that lack them; the config's are in their media roots.
            let items = media.map { PlaylistItemConfig(media: absolute($0)) }
            let distributed = try await origin.push(wall).distribute(items.map(\.media))
            let playlist = Playlist(
                entries: try await control.entries(items, distributed: distributed), loops: loop ?? wall.config.loop)
            try await control.play("play", playlist: playlist, lead: edit.leadTime)
        }
    }
}

/// `path` from the working folder, as every node resolves it in its media roots.
func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}
