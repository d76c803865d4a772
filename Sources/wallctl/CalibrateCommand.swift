import ArgumentParser
import Foundation
import LockstepTime
import WallCalibration
import WallControl
import WallProtocol
import WallTimeline

/// `wallctl calibrate`: the glass measured by a camera. Without --video it shows the timing pattern
/// on every screen; with --video it reads a film of the wall and says how far apart the screens'
/// light is, and the display-latency that cancels it.
struct CalibrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract:
            "Show a timing pattern on every screen; from a camera's film of it, measure the screens on the glass.",
        discussion: """
            Without --video: renders the pattern clip for the config's canvas (each screen its own number, a frame \
            counter and a moving mark, with the ffmpeg command), pushes it to the nodes and plays it in a loop. Film the \
            whole wall with a phone's slow motion (240 fps, or 120) for 10 seconds, held steady, the screens filling \
            most of the picture. With --video: finds each screen in the film, reads its frame counter in every picture \
            and reports when each screen's light changes against the others', with its uncertainty, and each node's \
            display-latency that cancels the difference (--write puts it in the config). A phone reads its picture top \
            to bottom (a rolling shutter), and most screens show theirs top to bottom too; one film cannot tell the two \
            apart when screens sit at different heights: film a second time with the phone upside down and give both \
            films (--video A --video B). What stays: screens whose outputs are not genlocked show a frame at their own \
            next refresh, so they stay apart by a part of a refresh that drifts; film again to check.
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var edit: EditOptions
    @OptionGroup var origin: OriginOptions

    @Option(
        name: .customLong("video"),
        help: "A camera's film of the wall showing the pattern; repeat for a second film taken upside down.")
    var videos: [String] = []

    @Option(help: "The screens' refresh rate, in frames a second: the pattern's frame rate (the same when reading).")
    var rate: Int = 60

    @Flag(help: "With --video: write each node's new display-latency into the config file.")
    var write = false

    @Option(help: "Where the pattern clip is rendered (default: a folder under the system's temporary folder).")
    var clipFolder: String?

    func validate() throws {
        guard (10...240).contains(rate) else {
            throw ValidationError("--rate must be 10 to 240 frames a second, got \(rate)")
        }
        guard videos.count <= 4 else { throw ValidationError("--video at most 4 times, got \(videos.count)") }
        guard !write || !videos.isEmpty else {
            throw ValidationError("--write needs --video: there is nothing to write yet")
        }
        for video in videos where !FileManager.default.isReadableFile(atPath: video) {
            throw ValidationError("--video \(video): no such file, or it cannot be read")
        }
    }

    func run() async throws {
        if videos.isEmpty {
            try await show()
        } else {
            try measure()
        }
    }

    /// Renders the pattern clip and plays it on every node, looping.
    private func show() async throws {
        let config = try loadConfig(options.config)
        guard config.nodes.count <= CalibrationPattern.screenCount else {
            throw ValidationError(
                "the pattern numbers at most \(CalibrationPattern.screenCount) screens and this wall has "
                    + "\(config.nodes.count): calibrate cannot show it")
        }
        let folder =
            clipFolder ?? FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-calibrate").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let media: String
        switch config.media {
        case .shared:
            let size = PatternClip.size(canvasWidth: config.canvas.width, height: config.canvas.height)
            let tiles = config.nodes.enumerated().map { index, node in
                let tile = node.tile.normalized(in: config.canvas)
                return PatternCanvas.Tile(x: tile.x, y: tile.y, width: tile.width, height: tile.height, screen: index)
            }
            media = "\(folder)/calibration-\(size.width)x\(size.height)-\(rate)fps.mp4"
            Output.line("calibrate: rendering the pattern, \(size.width)x\(size.height) at \(rate) fps")
            try PatternClip.render(
                PatternCanvas(width: size.width, height: size.height, tiles: tiles), rate: rate, to: media)
        case .perNode:
            // Each node shows the whole of its own file: one clip per node, its tile's pattern alone.
            media = "\(folder)/calibration-{id}-\(rate)fps.mp4"
            Output.line("calibrate: rendering the pattern for each of \(config.nodes.count) nodes at \(rate) fps")
            for (index, node) in config.nodes.enumerated() {
                let size = PatternClip.size(canvasWidth: node.tile.width, height: node.tile.height)
                let canvas = PatternCanvas(
                    width: size.width, height: size.height,
                    tiles: [PatternCanvas.Tile(x: 0, y: 0, width: 1, height: 1, screen: index)])
                try PatternClip.render(canvas, rate: rate, to: media.replacingOccurrences(of: "{id}", with: node.id))
            }
        }
        try await options.withWall { wall in
            let control = TimelineControl(wall: wall)
            let distributed = try await origin.push(wall).distribute([media])
            let playlist = Playlist(
                entries: try await control.entries([PlaylistItemConfig(media: media)], distributed: distributed),
                loops: true)
            try await control.play(
                "calibrate", playlist: playlist, lead: edit.leadTime)
        }
        Output.line(
            """
            calibrate: the pattern is on every screen, looping. Film the whole wall for 10 s in slow motion (240 fps, \
            or 120), the phone held steady and the screens filling most of the picture. If the screens sit at \
            different heights, film a second time with the phone upside down. Then:
              wallctl calibrate --config \(options.config) --video FILM [--video UPSIDE-DOWN-FILM] [--write]
            """)
    }

    /// Reads the films and reports the screens' offsets on the glass.
    private func measure() throws {
        let config = try loadConfig(options.config)
        var films: [GlassTiming.Video] = []
        for video in videos {
            Output.line("calibrate: reading \(video)")
            let film = try CameraAnalysis.reads(of: CameraVideo(path: video))
            Output.line(
                String(format: "  %.1f pictures a second, %d clean band reads", film.frameRate, film.reads.count))
            films.append(film)
        }
        let result = try GlassTiming.solve(films, framePeriod: 1 / Double(rate))
        let report = try GlassReport(result: result, config: config, rate: rate)
        for line in report.lines { Output.line(line) }
        guard write else { return }
        let text = try String(contentsOfFile: options.config, encoding: .utf8)
        let edited = try ConfigFileEdit.settingNodeKey(
            "display-latency", to: report.latencies.mapValues(GlassReport.duration), in: text, file: options.config)
        try edited.write(toFile: options.config, atomically: true, encoding: .utf8)
        Output.line("calibrate: wrote display-latency for \(report.latencies.count) nodes into \(options.config)")
    }
}
