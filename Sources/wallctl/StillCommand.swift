import ArgumentParser
import WallControl
import WallTimeline

/// `wallctl still`: an image on the whole wall.
struct StillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "still",
        abstract: "Show an image on the wall at one master time: each screen its tile of it (or its own, with {id}).",
        discussion: "The image is a file in every node's media roots (PNG or JPEG); it stays until the next command.")

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Argument(help: "The image file, or a template with {id} for one image per screen.")
    var image: String

    func run() async throws {
        let image = absolute(self.image)
        try await options.withWall { wall in
            try await WallVerb.still(image: image).carryOut(on: TimelineControl(wall: wall), lead: edit.leadTime)
        }
    }
}
