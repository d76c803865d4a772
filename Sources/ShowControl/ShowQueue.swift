/// The commands waiting to be carried out, in order of arrival, at most `depth`: past it the
/// oldest is dropped. A cue waiting when another cue arrives behind it is overtaken before it was
/// sent: it would be on the screens for no longer than the wall takes to send one edit (less
/// than a frame), so it is dropped rather than sent, and a burst of cues costs the wall one edit.
/// A cue with a time tag keeps its time, and a command between two cues keeps both.
public struct ShowQueue: Sendable {
    public let depth: Int
    private var waiting: [ShowRequest] = []

    public init(depth: Int) {
        precondition(depth > 0, "a queue holds at least one command")
        self.depth = depth
    }

    public var count: Int { waiting.count }

    /// Queues `request`; returns the oldest one dropped to make room, if one was.
    public mutating func push(_ request: ShowRequest) -> ShowRequest? {
        waiting.append(request)
        return waiting.count > depth ? waiting.removeFirst() : nil
    }

    /// The next command to carry out, and the cues it overtook (dropped unsent), oldest first;
    /// nil when none waits.
    public mutating func next() -> (request: ShowRequest, overtaken: [ShowRequest])? {
        guard !waiting.isEmpty else { return nil }
        var request = waiting.removeFirst()
        var overtaken: [ShowRequest] = []
        while Self.isUntimedCue(request), let following = waiting.first, Self.isUntimedCue(following) {
            overtaken.append(request)
            request = waiting.removeFirst()
        }
        return (request, overtaken)
    }

    private static func isUntimedCue(_ request: ShowRequest) -> Bool {
        if case .cue = request.command { return request.timeTagUnixNanoseconds == nil }
        return false
    }
}
