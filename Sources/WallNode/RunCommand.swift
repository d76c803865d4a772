import ArgumentParser
import CLockstepNetShims
import LockstepCLI
import LockstepTime
import Logging
import NodeService
import WallProtocol

extension WallNode {
    /// `wallnode run --config FILE --id ID`: the node daemon.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run one screen of a wall: follow the master clock, play, and answer the controller.")

        @Option(help: "The wall's config file (YAML).")
        var config: String

        @Option(help: "This node's id in the config.")
        var id: String

        @Option(help: "Master clock HOST:PORT, instead of the config's.")
        var clock: String?

        @Option(help: "Control API ADDR:PORT to listen on, instead of the config's.")
        var control: String?

        @Option(help: "Media file to play, instead of the config's.")
        var media: String?

        @Option(
            name: .customLong("video-sink"),
            help: "GStreamer bin description of the video sink, instead of the config's.")
        var videoSink: String?

        @Option(name: .customLong("audio-sink"), help: "GStreamer bin description of the audio sink (turns audio on).")
        var audioSink: String?

        @Option(
            name: .customLong("state-directory"),
            help: "Folder the node keeps its timeline in across restarts, instead of the config's state-directory.")
        var stateDirectory: String?

        @Flag(name: .customLong("serve-clock"), help: "Also serve the master clock, on the clock address's port.")
        var serveClock = false

        @Flag(
            name: .customLong("use-local-clock"),
            help: ArgumentHelp(
                "Test option: run on this machine's clock instead of following the master clock; nodes on one "
                    + "machine then share CLOCK_MONOTONIC exactly (the benchmark baseline)."))
        var useLocalClock = false

        @OptionGroup var simulatedClock: SimulatedClockOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            // A node runs for months while GStreamer's streaming threads come and go: with glibc's
            // default of up to 8 arenas a core, their arenas keep pages, and resident memory rose
            // 1.28 MB over an hour of looping where the heap in use was flat; with two arenas,
            // 0.62 MB (docs/BENCHMARKS.md, "Memory while looping").
            lockstep_limit_malloc_arenas(2)
            logging.bootstrap()
            // From now on a stop (SIGSTOP, a paused machine) is logged, and not counted as time a
            // preparation or a preroll took.
            _ = StandStillMonitor.process
            try simulatedClock.apply()
            let logger = Logger(label: "lockstep.node")
            let settings: NodeSettings
            do {
                let wall = try WallConfig.load(path: config)
                settings = try NodeSettings(
                    config: wall, id: id,
                    overrides: NodeSettings.Overrides(
                        clock: clock, control: control, media: media, videoSink: videoSink, audioSink: audioSink,
                        serveClock: serveClock, useLocalClock: useLocalClock, stateDirectory: stateDirectory))
            } catch let error as ConfigError {
                throw CommandFailure(error.description)
            } catch let error as NodeError {
                throw CommandFailure(error.description)
            }
            try await NodeDaemon(settings: settings, logger: logger).run()
        }
    }
}
