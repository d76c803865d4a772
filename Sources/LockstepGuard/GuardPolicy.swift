import LockstepNet
import NIOCore

/// What one listening surface lets its clients hold and send: who may connect, how many
/// connections in all and from one address, how long a connection may wait and a message may take,
/// and how many messages one address may send a second. Every surface (a node's control API, the
/// control daemon's HTTP port with its console and content, the show-control inputs) has one,
/// enforced by one `ConnectionGuard`.
public struct GuardPolicy: Sendable {
    /// Who may connect or send, checked when a connection opens (and for each datagram); nil: any
    /// address, where a token guards the surface.
    public var allow: [AddressRange]?
    /// Connections held at once, in all. At the bound, the oldest connection waiting for a message
    /// makes room for a new one; only when none waits is the new one refused.
    public var maximumConnections: Int
    /// Connections one address holds at once; past it, that address's own oldest waiting connection
    /// makes room, so one sender cannot hold every place.
    public var maximumPerSource: Int
    /// How long a connection may wait for its next message, from opening or from the last answer.
    /// An HTTP request's head must be whole by then too (slowloris).
    public var idleDeadline: TimeAmount
    /// How long a message may take from its first byte (a line of text). For an HTTP body, the
    /// window over which it must average `minimumBodyRate`.
    public var messageDeadline: TimeAmount
    /// Bytes a second an HTTP body must average over each `messageDeadline`.
    public var minimumBodyRate: Int
    /// Messages a second one address may send (each message of an OSC bundle counts), with bursts
    /// of as many; nil: no bound.
    public var messageRate: Double?
    /// Where the config sets the allow list and the rate, as refusals name them.
    public var allowSetting: String
    public var rateSetting: String

    public init(
        allow: [AddressRange]? = nil, maximumConnections: Int, maximumPerSource: Int? = nil,
        idleDeadline: TimeAmount = .seconds(10), messageDeadline: TimeAmount = .seconds(10),
        minimumBodyRate: Int = 1024, messageRate: Double? = nil, allowSetting: String = "the allow list",
        rateSetting: String = "the rate"
    ) {
        self.allowSetting = allowSetting
        self.rateSetting = rateSetting
        self.allow = allow
        self.maximumConnections = max(1, maximumConnections)
        self.maximumPerSource = max(1, min(maximumPerSource ?? max(1, maximumConnections / 2), self.maximumConnections))
        self.idleDeadline = idleDeadline
        self.messageDeadline = messageDeadline
        self.minimumBodyRate = minimumBodyRate
        self.messageRate = messageRate
    }

    /// An HTTP surface within an open-file limit (`FileLimit.connections(within:)`): its
    /// connections served at once, half of them from one address; 10 s for a request's head and
    /// between requests.
    public static func http(fileLimit: UInt64) -> GuardPolicy {
        GuardPolicy(maximumConnections: FileLimit.connections(within: fileLimit).served)
    }
}
