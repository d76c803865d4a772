import Foundation
import LockstepTime
import ShowControl
import WallProtocol
import WallTimeline

/// Show control: cues by name and the transport verbs, from `wallctl cue` or from the inputs a
/// control daemon or a node listens on (`ShowInput`), each carried out as a timeline edit at one
/// master time, like every other verb.
public struct CueControl: Sendable {
    public let control: TimelineControl
    /// The config's cues, their clips' lengths resolved (the nodes asked once).
    private let resolved: [String: Cue]

    /// Resolves every cue of the wall's config (asking the nodes the lengths of clips without an
    /// out point): an unknown length is an error naming the cue.
    public static func prepare(_ wall: Wall) async throws -> CueControl {
        let control = TimelineControl(wall: wall)
        let cues = wall.config.cues
        let media = Array(Set(cues.values.flatMap(\.media))).sorted()
        let lengths = media.isEmpty ? [:] : try await control.lengths(of: media)
        var resolved: [String: Cue] = [:]
        for (name, config) in cues {
            guard let cue = config.cue(lengths: lengths) else {
                throw ControlError.timeline("cue \(name): a node does not know its clip's length; give it an out point")
            }
            resolved[name] = cue
        }
        return CueControl(control: control, resolved: resolved)
    }

    private init(control: TimelineControl, resolved: [String: Cue]) {
        self.control = control
        self.resolved = resolved
    }

    /// The cues it knows, by name.
    public var names: [String] { resolved.keys.sorted() }

    /// The timeline edit `command` asks for, or an error naming what is wrong (an unknown cue).
    public func edit(for command: ShowCommand) throws(ControlError) -> TimelineEdit {
        switch command {
        case .cue(let name):
            guard let cue = resolved[name] else {
                let known = names.isEmpty ? "the config has no cues:" : "its cues are \(names.joined(separator: ", "))"
                throw .timeline("no cue \"\(name)\" in wall \(control.wall.config.name): \(known)")
            }
            return .cue(name: name, cue)
        case .pause: return .pause
        case .resume: return .resume
        case .next: return .next
        case .previous: return .previous
        case .black: return .black
        case .stop: return .stop
        }
    }

    /// Carries `command` out on every screen at one master time `lead` ahead, or at `at` (a master
    /// time an OSC bundle named) when that is later; with `confirming`, returns once every node
    /// carries it out, else once every node holds it.
    @discardableResult
    public func perform(
        _ command: ShowCommand, lead: MediaTime, at: MediaTime? = nil, confirming: Bool = true
    ) async throws -> Timeline {
        let edit = try edit(for: command)
        return try await control.carryOut("\(command)", lead: lead, at: at, confirming: confirming) { _, _ in edit }
    }
}
