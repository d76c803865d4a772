/// One request and its reply: the four timestamps of an exchange.
///
/// Client times are on the local clock, server times on the master clock, all in nanoseconds. The
/// request left at or after `clientSend` and the reply arrived at or before `clientReceive`; the
/// server received at or before `serverReceive` and replied at or after `serverSend`. So, whatever the
/// network did, the master's offset (master − local) satisfied
/// `offset(clientSend) <= serverReceive - clientSend` and
/// `offset(clientReceive) >= serverSend - clientReceive`: two hard constraints.
struct ClockSample: Hashable, Sendable {
    var clientSend: Int64
    var serverReceive: Int64
    var serverSend: Int64
    var clientReceive: Int64

    /// The largest magnitude a time may have: far beyond any real clock (146 years), and small
    /// enough that the differences below cannot overflow.
    static let timeLimit: Int64 = 1 << 62

    /// A sample from times checked to be possible, or nil: a time beyond `timeLimit`, a reply
    /// received before its request was sent, or a server that replied before it received.
    static func checked(clientSend: Int64, serverReceive: Int64, serverSend: Int64, clientReceive: Int64)
        -> ClockSample?
    {
        for time in [clientSend, serverReceive, serverSend, clientReceive] where time.magnitude >= Self.timeLimit {
            return nil
        }
        guard clientReceive >= clientSend, serverSend >= serverReceive else { return nil }
        // The server cannot have held the request longer than the whole round trip took, give or
        // take the two clocks' rate difference (at most 0.1 %) and a microsecond: a reply claiming
        // so (a wild or forged server time) gives a delay far below zero, found by the fuzzer to
        // overflow the round-trip statistics.
        let roundTrip = clientReceive - clientSend
        guard serverSend - serverReceive <= roundTrip + roundTrip / 1000 + 1000 else { return nil }
        return ClockSample(
            clientSend: clientSend, serverReceive: serverReceive, serverSend: serverSend, clientReceive: clientReceive)
    }

    /// Time on the network: the round trip less the server's turnaround.
    var delay: Int64 { (clientReceive - clientSend) - (serverSend - serverReceive) }

    /// The offset at `clientSend` is at most this.
    var upperOffset: Int64 { serverReceive - clientSend }

    /// The offset at `clientReceive` is at least this.
    var lowerOffset: Int64 { serverSend - clientReceive }

    /// The classic NTP offset estimate: exact when both directions take equally long.
    var midpointOffset: Int64 { upperOffset / 2 + lowerOffset / 2 + (upperOffset % 2 + lowerOffset % 2) / 2 }

    /// The local time `midpointOffset` refers to.
    var localMidpoint: Int64 { clientSend + (clientReceive - clientSend) / 2 }
}
