import Foundation
import LockstepTime
import ShowControl
import WallTimeline

/// The wall's transport verbs as one value, each a timeline edit at a master time: what `wallctl`'s
/// commands and the operator console both carry out, so the two cannot come to differ.
public enum WallVerb: Sendable, Hashable {
    case pause
    case resume
    case next
    case previous
    case black
    case stop
    /// To `itemTime` in `entry`, or in the entry the wall is in at the edit's time.
    case seek(entry: Int?, itemTime: MediaTime)
    /// An image in every node's media roots, each screen its tile of it.
    case still(image: String)
    /// The test card for `duration`, then what was on before.
    case identify(duration: MediaTime)

    /// The transport verb a show-control command names; nil for a cue.
    public init?(_ command: ShowCommand) {
        switch command {
        case .cue: return nil
        case .pause: self = .pause
        case .resume: self = .resume
        case .next: self = .next
        case .previous: self = .previous
        case .black: self = .black
        case .stop: self = .stop
        }
    }

    /// The verb's name, as the command line spells it.
    public var name: String {
        switch self {
        case .pause: "pause"
        case .resume: "resume"
        case .next: "next"
        case .previous: "previous"
        case .black: "black"
        case .stop: "stop"
        case .seek: "seek"
        case .still: "still"
        case .identify: "identify"
        }
    }

    /// The edit this verb makes of `timeline` at master time `at`.
    public func edit(of timeline: Timeline, at: MediaTime) -> TimelineEdit {
        switch self {
        case .pause: .pause
        case .resume: .resume
        case .next: .next
        case .previous: .previous
        case .black: .black
        case .stop: .stop
        case .seek(let entry, let itemTime):
            .seek(entry: entry ?? timeline.position(at: at).entryIndex, itemTime: itemTime)
        case .still(let image): .still(image: image)
        case .identify(let duration): .identify(duration: duration)
        }
    }

    /// Carries the verb out on every screen at one master time `lead` ahead; with `confirming`,
    /// returns once every node carries it out, else once every node holds it.
    @discardableResult
    public func carryOut(on control: TimelineControl, lead: MediaTime, confirming: Bool = true) async throws
        -> Timeline
    {
        try await control.carryOut(name, lead: lead, confirming: confirming) { timeline, at in
            edit(of: timeline, at: at)
        }
    }
}
