import ArgumentParser
import ShowControl
import WallControl
import WallTimeline

/// `wallctl cue`: a show-control cue from the command line, as a button would send it.
struct CueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cue",
        abstract: "Cut every screen to a cue the config names (cues:), at one master time (a timeline edit).",
        discussion: """
            The cue's target (a clip, a point of the playlist, a still, black, pause or resume) goes on every screen \
            at one master time, and what its then: says follows (return: the playlist it interrupted, from where it \
            was; hold; next). Show controllers send the same over OSC, UDP or TCP to wallctl serve or to a node with \
            show-control: true (docs/SHOW-CONTROL.md); with --list, the cues and what each does.
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions

    @Argument(help: "The cue's name, as the config's cues: section gives it.")
    var name: String?

    @Flag(help: "List the config's cues and exit.")
    var list = false

    func validate() throws {
        guard list || name != nil else { throw ValidationError("name a cue, or --list the config's cues") }
        if let name, !ShowCommand.isValidCueName(Substring(name)) {
            throw ValidationError("\"\(name)\" is not a cue name: 1 to 64 letters, digits, -, _ and .")
        }
    }

    func run() async throws {
        if list {
            let cues = try loadConfig(options.config).cues
            guard !cues.isEmpty else { throw ControlError.config("\(options.config) has no cues: section") }
            for (name, cue) in cues.sorted(by: { $0.key < $1.key }) { Output.line("\(name): \(cue)") }
            return
        }
        try await options.withWall { wall in
            try await CueControl.prepare(wall, only: name).perform(.cue(name!), lead: edit.leadTime)
        }
    }
}
