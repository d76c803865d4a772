import Foundation
import LockstepTime
import WallProtocol
import WallTimeline

/// Everything that can be known about a show before it starts, and which of it stands in the way:
/// what `wallctl check` asks every node and how it judges the answers.
public enum WallCheck {
    /// What one node answered.
    public struct NodeFindings: Sendable {
        public var check: NodeCheck
        /// How the node follows the clock, and each of its clock sources.
        public var clock: ClockReport
        /// Each playlist media with its duration on the node, or why the node cannot play it.
        public var media: [(name: String, outcome: Result<MediaTime, ControlError>)]
        /// The timeline the wall plays now, as the node holds it: its version and the files it
        /// names that the node lacks.
        public var timeline: TimelineReport?
        /// The content the node holds and fetches.
        public var content: ContentReport?
        /// What the node says it cannot do (`NodeStatus.problems`).
        public var problems: [ServiceProblem]
        /// How its machine is (`NodeStatus.health`).
        public var health: MachineHealth?

        public init(
            check: NodeCheck, clock: ClockReport, media: [(name: String, outcome: Result<MediaTime, ControlError>)],
            timeline: TimelineReport? = nil, content: ContentReport? = nil, problems: [ServiceProblem] = [],
            health: MachineHealth? = nil
        ) {
            self.health = health
            self.check = check
            self.clock = clock
            self.media = media
            self.timeline = timeline
            self.content = content
            self.problems = problems
        }
    }

    /// What is fine about a node (lines to print) and what stands in the way of a show.
    public struct Judgement: Sendable, Equatable {
        public var lines: [String] = []
        public var problems: [String] = []

        /// The node's report: its lines, then each problem.
        public var text: String { (lines + problems.map { "  problem: \($0)" }).joined(separator: "\n") }
    }

    /// Asks every node at once for what a check judges: its check, status, content, and the length
    /// of each playlist file.
    public static func gather(_ wall: Wall) async -> [String: Result<NodeFindings, ControlError>] {
        let names = wall.config.playlistItems.map(\.media)
        return await wall.eachNode { client throws(ControlError) in
            let check = try await client.check()
            let status = try await client.status().status
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
                check: check, clock: status.clock, media: media, timeline: status.timeline, content: content,
                problems: status.problems ?? [], health: status.health)
        }
    }

    /// The layout's warnings: tiles that overlap, canvas pixels no screen shows (blending projectors
    /// overlap and bezels leave strips on purpose, so neither stands in the way).
    public static func warnings(_ layout: TileLayout) -> [String] {
        var warnings: [String] = []
        for overlap in layout.overlaps {
            let area = overlap.area
            warnings.append(
                "warning: tiles \(overlap.first) and \(overlap.second) overlap in \(area.width)x\(area.height) "
                    + "at (\(area.x), \(area.y)): both screens show those pixels")
        }
        if !layout.uncovered.isEmpty {
            let share = Double(layout.uncoveredPixels) / Double(max(1, layout.canvasPixels)) * 100
            let largest = layout.uncovered.prefix(4).map { "\($0.width)x\($0.height) at (\($0.x), \($0.y))" }
            warnings.append(
                "warning: no screen shows \(layout.uncoveredPixels) canvas pixels (\(String(format: "%.1f", share)) %), "
                    + "largest: \(largest.joined(separator: ", "))\(layout.uncovered.count > 4 ? ", ..." : "")")
        }
        return warnings
    }

    /// Judges node `id`'s findings.
    ///
    /// - Parameters:
    ///   - config: the config file the controller reads, as the user named it, and its SHA-256.
    ///   - version: the controller's Lockstep version: a node on another is noted, not a problem.
    ///   - pushing: the files a push of the show would send this node (`ContentPush.needs`).
    public static func judge(
        _ id: String, _ findings: NodeFindings, config: (path: String, digest: String?), version: String,
        pushing: [ContentNeed] = []
    ) -> Judgement {
        var judgement = Judgement()
        let check = findings.check
        judgement.lines = ["node \(id): Lockstep \(check.version)"]
        if check.version != version { judgement.lines.append("  note: wallctl is \(version)") }
        if check.configSHA256 != config.digest {
            judgement.problems.append(
                "its config differs from \(config.path) (SHA-256 \(check.configSHA256 ?? "unknown")): "
                    + "copy the file and restart the node")
        }
        for sink in check.sinks {
            if let problem = sink.problem {
                judgement.problems.append("its \(sink.role) sink \"\(sink.description)\" cannot be built: \(problem)")
            } else {
                judgement.lines.append("  \(sink.role) sink \"\(sink.description)\": ok")
            }
        }
        if let still = check.still {
            if let problem = check.stillProblem {
                judgement.problems.append("its still \(still) cannot be shown: \(problem)")
            } else {
                judgement.lines.append("  still \(still): ok")
            }
        }
        if let cost = check.frameCost {
            let name = URL(fileURLWithPath: cost.media).lastPathComponent
            if let share = cost.share, share > FrameCostReport.warningShare {
                judgement.lines.append(
                    "  warning: a frame of \(name) costs \(cost.sentence) to decode and bring to this screen: less than "
                        + "a third is left for the sink, a busy moment and a cut's preparation; expect late frames "
                        + "(a lighter encoding, a smaller tile or a faster machine)")
            } else {
                judgement.lines.append("  frame cost (\(name), decode to the screen's size): \(cost.sentence)")
            }
        }
        judge(findings.clock, into: &judgement)
        if let display = findings.health?.display { judgement.lines.append("  display: \(display)") }
        for (name, outcome) in findings.media {
            switch outcome {
            case .success(let duration):
                judgement.lines.append("  media \(name): \(String(format: "%.3f", duration.seconds)) s")
            case .failure(let error):
                judgement.problems.append("media \(name): \(error)")
            }
        }
        if let timeline = findings.timeline {
            let missing = timeline.missingMedia ?? []
            if missing.isEmpty {
                judgement.lines.append("  timeline version \(timeline.version): every file it names is here")
            } else {
                judgement.problems.append(
                    "timeline version \(timeline.version) names files not here yet: \(missing.joined(separator: ", "))")
            }
        }
        if let content = findings.content { judge(content, into: &judgement) }
        if let problem = fitProblem(pushing, content: findings.content) { judgement.problems.append(problem) }
        for problem in findings.problems { judgement.problems.append("its \(problem.service): \(problem.problem)") }
        return judgement
    }

    /// Why the files a push of the show would send a node do not fit its content store: those of
    /// `pushing` it does not hold (by content), against what is free for the store; nil when they
    /// fit, or when the node does not say what it holds.
    public static func fitProblem(_ pushing: [ContentNeed], content: ContentReport?) -> String? {
        guard let content, let free = content.freeBytes else { return nil }
        let held = Set(content.held)
        var lacking = Set<ContentID>()
        for need in pushing where !held.contains(need.id) { lacking.insert(need.id) }
        let bytes = lacking.reduce(UInt64(0)) { $0 + $1.size }
        guard bytes > free else { return nil }
        return "the show's files it lacks (\(lacking.count), \(ByteCount.text(bytes))) do not "
            + "fit its content store (\(ByteCount.text(free)) free): make room, or a smaller show"
    }

    /// A node whose clock is not usable cannot start; a clock source it cannot follow is a failover
    /// that would not happen, and a source on another timeline a master that would not be followed.
    static func judge(_ clock: ClockReport, into judgement: inout Judgement) {
        if !clock.usable {
            judgement.problems.append("its clock is \(clock.state) (following \(clock.server)): it cannot start a show")
        } else {
            judgement.lines.append(
                "  clock: locked to \(clock.server)\(clock.relaying.map { ", relaying on \($0)" } ?? "")")
        }
        for source in clock.sources ?? [] where source.kind != .followed && source.kind != .standby {
            let why = "clock source \(source.source): \(source.standing)"
            if source.kind == .loop {
                judgement.lines.append("  \(why)")
            } else {
                judgement.problems.append("\(why): the node could not fall back on it")
            }
        }
    }

    /// What the node holds; a transfer with a problem stands in the way (the show's files may
    /// never arrive).
    static func judge(_ content: ContentReport, into judgement: inout Judgement) {
        let held = content.held.reduce(UInt64(0)) { $0 + $1.size }
        var line = "  content store: \(content.held.count) files, \(String(format: "%.1f", Double(held) / 1e6)) MB"
        if let free = content.freeBytes { line += ", \(ByteCount.text(free)) free" }
        judgement.lines.append(line)
        for transfer in content.transfers {
            let text =
                "fetching \(transfer.name): \(String(format: "%.1f", Double(transfer.have) / 1e6))/"
                + "\(String(format: "%.1f", Double(transfer.id.size) / 1e6)) MB"
                + (transfer.problem.map { " (\($0))" } ?? "")
            if transfer.problem != nil { judgement.problems.append(text) } else { judgement.lines.append("  \(text)") }
        }
    }
}
