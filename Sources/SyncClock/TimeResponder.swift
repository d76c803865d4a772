/// The stateless heart of a clock server: turns one request datagram into one reply, or into a
/// counted refusal. No sockets and no clock reads of its own, so it is tested byte for byte.
struct TimeResponder: Sendable {
    /// What became of a datagram.
    enum Outcome: Hashable, Sendable {
        /// A reply of `count` bytes (never more than the request) was written.
        case reply(WireFormat, count: Int)
        /// Not a request this server answers.
        case rejected(PacketRejection)
        /// The master time cannot be written in the request's format (below zero for GStreamer's
        /// unsigned times).
        case unrepresentableMasterTime
        /// The request came from a time server's port: answering could make two servers answer each
        /// other forever (a spoofed source is all it takes), so it is dropped.
        case fromServerPort
        /// A valid request whose source address is over the server's rate limit (`ReplyRateLimit`):
        /// decided by the server after `respond`, and not answered.
        case rateLimited
        /// A valid request to a relay that follows no master at the moment: not answered.
        case notFollowing
    }

    let identity: UInt64
    let epoch: UInt64
    let flags: LockstepTimePacket.Flags
    /// What a master's replies say of the timeline: its own, at stratum 0, exact.
    var asMaster: ServedTimeline {
        ServedTimeline(master: identity, epoch: epoch, flags: flags, rootErrorBound: 0, stratum: 0, upstream: 0)
    }
    /// Source ports never answered: GStreamer's port and the server's own. Clients send from
    /// ephemeral ports.
    let serverPorts: Set<UInt16>
    /// With a key, only Lockstep requests carrying a valid code are answered, and replies are signed.
    var authenticator: PacketAuthenticator? = nil
    /// Whether GStreamer's 16-byte requests are answered. They carry no authentication code; a keyed
    /// server still answers them (for stock `GstNetClientClock`s) unless told not to.
    var answersGStreamer = true

    /// Writes the reply to `request` into `reply`, all but the send time, which the caller reads just
    /// before sending and writes with `stamp`.
    ///
    /// - Parameters:
    ///   - request: the stored bytes; `length` is the datagram's real length.
    ///   - receiveTime: master time of arrival (ns), the kernel's stamp when `kernelStamped`.
    ///   - reply: where the reply is written; at least 96 bytes.
    ///   - served: the timeline the reply describes: this server's own as a master (nil), or the one a
    ///     relay follows.
    func respond(
        to request: UnsafeRawBufferPointer, length: Int, sourcePort: UInt16, receiveTime: Int64, kernelStamped: Bool,
        serving served: ServedTimeline? = nil, into reply: UnsafeMutableRawBufferPointer
    ) -> Outcome {
        switch ClockPacket.decode(request, length: length) {
        case .rejected(let reason):
            return .rejected(reason)
        case .packet(.lockstep(let packet)):
            guard packet.kind == .request else { return .rejected(.unexpectedKind) }
            guard !serverPorts.contains(sourcePort) else { return .fromServerPort }
            if let authenticator, !authenticator.isAuthentic(request) { return .rejected(.unauthenticated) }
            let served = served ?? asMaster
            var answer = packet
            answer.kind = .reply
            answer.flags = kernelStamped ? served.flags.union(.kernelReceiveTimestamp) : served.flags
            answer.serverReceiveTime = receiveTime
            answer.serverIdentity = served.master
            answer.epoch = served.epoch
            answer.rootErrorBound = served.rootErrorBound
            answer.stratum = served.stratum
            answer.relayIdentity = identity
            answer.upstreamIdentity = served.upstream
            answer.encode(into: reply)
            return .reply(.lockstep, count: LockstepTimePacket.size)
        case .packet(.gstreamer(let packet)):
            guard answersGStreamer else { return .rejected(.formatDisabled) }
            guard !serverPorts.contains(sourcePort) else { return .fromServerPort }
            NetTimePacket(localTime: packet.localTime, remoteTime: 0).encode(into: reply)
            return .reply(.gstreamer, count: NetTimePacket.size)
        }
    }

    /// Writes the send time into a reply `respond` prepared, and with a key signs it.
    ///
    /// GStreamer's format has one time for the whole stay in the server: the middle of arrival and
    /// departure, which is what the client's midpoint of send and receive corresponds to.
    ///
    /// Signing follows the send time it covers, so it delays the reply's departure past that time (by
    /// about a microsecond); the client signs its requests after their send time alike, so the two
    /// delays fall one on each leg and cancel in the offset. Both keep timestamps causal.
    ///
    /// - Returns: false when that time cannot be written (below zero in GStreamer's unsigned format):
    ///   the reply must not be sent.
    func stamp(_ reply: UnsafeMutableRawBufferPointer, format: WireFormat, receiveTime: Int64, sendTime: Int64)
        -> Bool
    {
        switch format {
        case .lockstep:
            reply.storeBytes(
                of: sendTime.bigEndian, toByteOffset: LockstepTimePacket.serverSendTimeOffset, as: Int64.self)
            authenticator?.sign(reply)
            return true
        case .gstreamer:
            let middle = receiveTime / 2 + sendTime / 2 + (receiveTime % 2 + sendTime % 2) / 2
            guard middle >= 0 else { return false }
            reply.storeBytes(of: UInt64(middle).bigEndian, toByteOffset: 8, as: UInt64.self)
            return true
        }
    }
}

/// What a reply says of the timeline it serves: whose it is and how far this server is from it.
struct ServedTimeline: Sendable, Hashable {
    /// The master's identity (a relay passes on its master's).
    var master: UInt64
    var epoch: UInt64
    var flags: LockstepTimePacket.Flags
    /// How far the served time may be from the master's, ns, saturating.
    var rootErrorBound: UInt32
    var stratum: UInt8
    /// The relay identity of the server followed; 0 for a master.
    var upstream: UInt64
}
