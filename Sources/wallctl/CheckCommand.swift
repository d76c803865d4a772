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
            clock source the config lists for it. Exits 0 when nothing stands in the way \
            of a show, 1 when something does (named per node).
            """)

    @OptionGroup var options: WallOptions

    /// What one node answered.
    private struct NodeFindings: Sendable {
        var check: NodeCheck
        /// How the node follows the clock, and each of its clock sources.
        var clock: ClockReport
        /// Each playlist media with its duration on the node, or why the node cannot play it.
        var media: [(name: String, outcome: Result<MediaTime, ControlError>)]
        /// The timeline the wall plays now, as the node holds it: its version and the files it
        /// names that the node lacks.
        var timeline: TimelineReport?
        /// The content the node holds and fetches.
        var content: ContentReport?
    }

    func run() async throws {
        let problems = try await options.withWall { wall in
            var problems = 0
            let config = wall.config
            Output.line("config \(options.config): \(config.nodes.count) nodes, SHA-256 \(config.digest ?? "-")")
            reportLayout(TileLayout(config: config))
            let names = config.playlistItems.map(\.media)
            let results = await wall.eachNode { client throws(ControlError) in
                let check = try await client.check()
                let status = try await client.status().status
                let clock = status.clock
                let content = try? await client.content()
                var media: [(String, Result<MediaTime, ControlError>)] = []
                for name in names {
                    do throws(ControlError) {
                        media.append((name, .success(try await client.mediaDurations([name]).first ?? .invalid)))
                    } catch {
                        media.append((name, .failure(error)))
                    }
                }
                return NodeFindings(
                    check: check, clock: clock, media: media, timeline: status.timeline, content: content)
            }
            for id in wall.clients.map(\.id) {
                guard let result = results[id] else { continue }
                switch result {
                case .failure(let error):
                    Output.line("node \(id): unreachable: \(error)")
                    problems += 1
                case .success(let findings):
                    problems += report(id, findings, expectedDigest: config.digest)
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

    private func reportLayout(_ layout: TileLayout) {
        for overlap in layout.overlaps {
            let area = overlap.area
            Output.line(
                "warning: tiles \(overlap.first) and \(overlap.second) overlap in \(area.width)x\(area.height) "
                    + "at (\(area.x), \(area.y)): both screens show those pixels")
        }
        if !layout.uncovered.isEmpty {
            let share = Double(layout.uncoveredPixels) / Double(max(1, layout.canvasPixels)) * 100
            let largest = layout.uncovered.prefix(4).map { "\($0.width)x\($0.height) at (\($0.x), \($0.y))" }
            Output.line(
                "warning: no screen shows \(layout.uncoveredPixels) canvas pixels (\(String(format: "%.1f", share)) %), "
                    + "largest: \(largest.joined(separator: ", "))\(layout.uncovered.count > 4 ? ", ..." : "")")
        }
    }

    /// A node whose clock is not locked cannot start; a clock source it cannot follow is a failover
    /// that would not happen, and a source on another timeline a master that would not be followed.
    private func clockProblems(_ clock: ClockReport, lines: inout [String]) -> [String] {
        var problems: [String] = []
        if !clock.usable {
            problems.append("its clock is \(clock.state) (following \(clock.server)): it cannot start a show")
        } else {
            lines.append("  clock: locked to \(clock.server)\(clock.relaying.map { ", relaying on \($0)" } ?? "")")
        }
        for source in clock.sources ?? [] where source.standing != "followed" && source.standing != "standby" {
            let why = "clock source \(source.source): \(source.standing)"
            if source.standing.hasPrefix("follows this node") {
                lines.append("  \(why)")
            } else {
                problems.append("\(why): the node could not fall back on it")
            }
        }
        return problems
    }

    /// Prints one node's findings; returns how many of them stand in the way of a show.
    private func report(_ id: String, _ findings: NodeFindings, expectedDigest: String?) -> Int {
        var problems: [String] = []
        let check = findings.check
        var lines = ["node \(id): Lockstep \(check.version)"]
        if check.version != LockstepVersion.current {
            lines.append("  note: wallctl is \(LockstepVersion.current)")
        }
        if check.configSHA256 != expectedDigest {
            problems.append(
                "its config differs from \(options.config) (SHA-256 \(check.configSHA256 ?? "unknown")): "
                    + "copy the file and restart the node")
        }
        for sink in check.sinks {
            if let problem = sink.problem {
                problems.append("its \(sink.role) sink \"\(sink.description)\" cannot be built: \(problem)")
            } else {
                lines.append("  \(sink.role) sink \"\(sink.description)\": ok")
            }
        }
        if let still = check.still {
            if let problem = check.stillProblem {
                problems.append("its still \(still) cannot be shown: \(problem)")
            } else {
                lines.append("  still \(still): ok")
            }
        }
        if let cost = check.frameCost {
            let name = URL(fileURLWithPath: cost.media).lastPathComponent
            if let share = cost.share, share > FrameCostReport.warningShare {
                lines.append(
                    "  warning: a frame of \(name) costs \(cost.sentence) to decode and bring to this screen: less than "
                        + "a third is left for the sink, a busy moment and a cut's preparation; expect late frames "
                        + "(a lighter encoding, a smaller tile or a faster machine)")
            } else {
                lines.append("  frame cost (\(name), decode to the screen's size): \(cost.sentence)")
            }
        }
        problems += clockProblems(findings.clock, lines: &lines)
        for (name, outcome) in findings.media {
            switch outcome {
            case .success(let duration):
                lines.append("  media \(name): \(String(format: "%.3f", duration.seconds)) s")
            case .failure(let error):
                problems.append("media \(name): \(error)")
            }
        }
        if let timeline = findings.timeline {
            let missing = timeline.missingMedia ?? []
            if missing.isEmpty {
                lines.append("  timeline version \(timeline.version): every file it names is here")
            } else {
                problems.append(
                    "timeline version \(timeline.version) names files not here yet: \(missing.joined(separator: ", "))")
            }
        }
        if let content = findings.content {
            let held = content.held.reduce(UInt64(0)) { $0 + $1.size }
            var line = "  content store: \(content.held.count) files, \(String(format: "%.1f", Double(held) / 1e6)) MB"
            if let free = content.freeBytes { line += ", \(String(format: "%.1f", Double(free) / 1e9)) GB free" }
            lines.append(line)
            for transfer in content.transfers {
                let text =
                    "fetching \(transfer.name): \(String(format: "%.1f", Double(transfer.have) / 1e6))/"
                    + "\(String(format: "%.1f", Double(transfer.id.size) / 1e6)) MB"
                    + (transfer.problem.map { " (\($0))" } ?? "")
                if transfer.problem != nil { problems.append(text) } else { lines.append("  \(text)") }
            }
        }
        lines += problems.map { "  problem: \($0)" }
        Output.line(lines.joined(separator: "\n"))
        return problems.count
    }
}
