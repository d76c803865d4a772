/// What a clock server has received and answered since it started.
public struct ServerStatistics: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Every datagram received.
    public var datagrams = 0
    /// Replies sent in Lockstep's format.
    public var lockstepReplies = 0
    /// Replies sent in GStreamer's 16-byte format.
    public var gstreamerReplies = 0
    /// Datagrams not answered because they are not valid requests, by reason.
    public var rejected: [PacketRejection: Int] = [:]
    /// Requests not answered because the master time cannot be written in their format.
    public var unrepresentableMasterTime = 0
    /// Requests not answered because they came from a time server's port.
    public var fromServerPort = 0
    /// Valid requests not answered because this server, a relay, did not follow a master then.
    public var notFollowing = 0
    /// Valid requests not answered because their source address was over the rate limit.
    public var rateLimited = 0
    /// Replies the kernel refused to send.
    public var sendFailures = 0
    /// Datagrams that came without a kernel receive stamp (their receive time includes the
    /// server thread's wake-up latency).
    public var userSpaceReceiveTimes = 0

    public init() {}

    /// Datagrams not answered as malformed, of any reason.
    public var rejectedTotal: Int { rejected.values.reduce(0, +) }

    mutating func record(_ outcome: TimeResponder.Outcome) {
        datagrams += 1
        switch outcome {
        case .reply(.lockstep, _): lockstepReplies += 1
        case .reply(.gstreamer, _): gstreamerReplies += 1
        case .rejected(let reason): rejected[reason, default: 0] += 1
        case .unrepresentableMasterTime: unrepresentableMasterTime += 1
        case .fromServerPort: fromServerPort += 1
        case .rateLimited: rateLimited += 1
        case .notFollowing: notFollowing += 1
        }
    }

    public var description: String {
        var parts = [
            "\(datagrams) datagrams", "\(lockstepReplies) Lockstep replies", "\(gstreamerReplies) GStreamer replies",
            "\(rejectedTotal) rejected",
        ]
        let reasons = PacketRejection.allCases.compactMap { reason in
            rejected[reason].map { "\(reason.rawValue) \($0)" }
        }
        if !reasons.isEmpty { parts[parts.count - 1] += " (\(reasons.joined(separator: ", ")))" }
        if unrepresentableMasterTime > 0 {
            parts.append("\(unrepresentableMasterTime) unanswerable (master time below zero for GStreamer's format)")
        }
        if fromServerPort > 0 { parts.append("\(fromServerPort) from a server port (dropped)") }
        if notFollowing > 0 { parts.append("\(notFollowing) while following no master (not answered)") }
        if rateLimited > 0 { parts.append("\(rateLimited) over the rate limit (dropped)") }
        if sendFailures > 0 { parts.append("\(sendFailures) send failures") }
        if userSpaceReceiveTimes > 0 { parts.append("\(userSpaceReceiveTimes) without kernel receive stamp") }
        return parts.joined(separator: ", ")
    }
}
