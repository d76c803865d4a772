import Foundation

/// A line of the console's event log: something that changed on a screen, as read from two of its
/// successive views (the nodes keep no event history the console could ask for).
public struct ConsoleEvent: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case unreachable, reachable, restart, rejoin, clockSource, clockState, contentArrived, transition, outOfStep,
            inStep
        case action
    }

    public var atUnixMs: Int64
    public var node: String?
    public var kind: Kind
    public var text: String

    public init(atUnixMs: Int64, node: String?, kind: Kind, text: String) {
        self.atUnixMs = atUnixMs
        self.node = node
        self.kind = kind
        self.text = text
    }

    /// What changed from `before` to `after` on one node, in the order an operator reads it.
    public static func changes(from before: NodeView, to after: NodeView, at now: Int64) -> [ConsoleEvent] {
        var events: [ConsoleEvent] = []
        func add(_ kind: Kind, _ text: String) {
            events.append(ConsoleEvent(atUnixMs: now, node: after.id, kind: kind, text: text))
        }
        // A node the console has not heard from yet (it opened, or the daemon restarted, while the
        // node was down) is said not to answer as well: it is no less unreachable for that.
        if before.reachable || before.polledAtUnixMs == nil, !after.reachable {
            let how = before.reachable ? "stopped answering" : "does not answer"
            add(.unreachable, "\(after.id) \(how): \(after.problem ?? "no reason given")")
        }
        guard after.reachable else { return events }
        if !before.reachable {
            add(.reachable, "\(after.id) answers" + (before.polledAtUnixMs == nil ? "" : " again"))
        }
        if after.restarts > before.restarts {
            add(.restart, "\(after.id) restarted: its frame count began again")
        }
        if let rejoins = after.rejoins, let old = before.rejoins, rejoins > old {
            add(.rejoin, "\(after.id) rejoined the wall's timeline (\(rejoins) rejoin\(rejoins == 1 ? "" : "s"))")
        }
        if let source = after.clockSource, let old = before.clockSource, source != old {
            add(.clockSource, "\(after.id) follows clock source \(source) (was \(old))")
        }
        if let state = after.clockState, let old = before.clockState, state != old {
            add(.clockState, "\(after.id) clock \(old) → \(state)")
        }
        if let held = after.contentHeld, let old = before.contentHeld, held > old {
            add(
                .contentArrived,
                "\(after.id) holds \(held - old) new file\(held - old == 1 ? "" : "s") (\(held) in all)")
        }
        if before.version != nil, after.version != before.version {
            add(.transition, "\(after.id) on timeline version \(after.version.map(String.init) ?? "none")")
        } else if before.version != nil, after.entry != before.entry || after.show != before.show {
            let what = after.show.flatMap { $0 == "playlist" ? nil : $0 } ?? "entry \(after.entry ?? 0)"
            add(.transition, "\(after.id) moved to \(what)")
        }
        if before.inStep == true, after.inStep == false {
            add(.outOfStep, "\(after.id) out of step" + (after.problem.map { ": \($0)" } ?? ""))
        } else if before.inStep != true, after.inStep == true, before.version != nil || before.reachable {
            add(.inStep, "\(after.id) in step")
        }
        return events
    }
}
