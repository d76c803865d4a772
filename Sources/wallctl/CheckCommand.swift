import ArgumentParser
import Foundation
import LockstepCLI
import LockstepTime
import WallControl
import WallProtocol

/// `wallctl check`: everything that can be known about a show before it starts.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check the config and every node before a show.",
        discussion: """
            Checks the config's tiles (overlapping screens and canvas pixels no screen shows are named, \
            as warnings: blending projectors overlap and bezels leave strips on purpose), then asks every \
            node at once: is it reachable, which Lockstep version does it run, is its config the same \
            file (SHA-256), can GStreamer build its sinks, and does it have every media file the \
            playlist names (each probed, with its duration), is its clock locked and can it follow every \
            clock source the config lists for it, and can it play the config's show (a schedule needs a master \
            serving real time, the show's files found here that a push would send must fit its content store, its \
            display must be in the mode the config expects). Day parts of the schedule that will not play as written in the coming year are \
            warned of (see wallctl schedule). Exits 0 when nothing stands in the way \
            of a show, 1 when something does (named per node).
            """)

    @OptionGroup var options: WallOptions

    func run() async throws {
        let problems = try await options.withWall { wall in
            let config = wall.config
            Output.line("config \(options.config): \(config.nodes.count) nodes, SHA-256 \(config.digest ?? "-")")
            for warning in WallCheck.warnings(TileLayout(config: config)) { Output.line(warning) }
            if let schedule = config.schedule {
                let now = MediaTime(nanoseconds: Int64(Date().timeIntervalSince1970 * 1e9))
                for warning in schedule.calendar.warnings(from: now, days: 366) {
                    Output.line("warning: schedule: \(warning)")
                }
            }
            // What `play` would push of the show: each node's files by content, to see that they fit.
            let show = config.schedule?.media ?? config.playlistItems.map(\.media)
            let pushing = try ContentPush.needs(show, nodes: wall.clients.map(\.id)).needs
            let results = await WallCheck.gather(wall)
            var problems = 0
            for id in wall.clients.map(\.id) {
                switch results[id] {
                case .failure(let error):
                    Output.line("node \(id): unreachable: \(error)")
                    problems += 1
                case .success(let findings):
                    let judgement = WallCheck.judge(
                        id, findings, config: (options.config, config.digest), version: LockstepVersion.current,
                        pushing: pushing[id] ?? [])
                    Output.line(judgement.text)
                    problems += judgement.problems.count
                case nil: continue
                }
            }
            return problems
        }
        if problems > 0 {
            Output.line("check: \(problems) problem\(problems == 1 ? "" : "s") stand in the way of a show")
            throw ExitCode(1)
        }
        Output.line("check: ready")
    }
}
