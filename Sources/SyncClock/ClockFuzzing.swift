/// Datagrams fed to a clock server and a clock client as they are on the wire, for the fuzzer
/// (`lockstep-fuzz`): whatever the bytes, each side must answer, count or drop them, never trap.
@_spi(Fuzzing) public enum ClockFuzzing {
    /// A clock server given `datagram` as a request: its reply, if it answers, stamped.
    public static func serve(_ datagram: [UInt8], sourcePort: UInt16, receiveTime: Int64) -> [UInt8]? {
        let responder = TimeResponder(
            identity: 0x5EED, epoch: 7, flags: [], serverPorts: [SyncClockServer.Configuration.defaultPort])
        var reply = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        let outcome = datagram.withUnsafeBytes { request in
            reply.withUnsafeMutableBytes { out in
                responder.respond(
                    to: request, length: datagram.count, sourcePort: sourcePort, receiveTime: receiveTime,
                    kernelStamped: false, into: out)
            }
        }
        guard case .reply(let format, let count) = outcome else { return nil }
        let stamped = reply.withUnsafeMutableBytes { out in
            responder.stamp(out, format: format, receiveTime: receiveTime, sendTime: receiveTime &+ 1000)
        }
        return stamped ? Array(reply.prefix(count)) : nil
    }

    /// A clock client that has sent a few requests, given `replies` as they arrive (each with the
    /// local time it arrives at). With `matching`, each reply's echo fields are set to the
    /// request's first, so it gets past the matching to the sample checks and the estimator.
    /// Returns the client's status afterwards, as a node would report it.
    public static func receive(
        _ replies: [(datagram: [UInt8], arrival: Int64)], format: WireFormat, matching: Bool
    ) -> ClockStatus {
        var configuration = ClockClientEngine.Configuration()
        configuration.format = format
        var engine = ClockClientEngine(configuration: configuration, firstSequence: 0x1000)
        var request = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        var sent: [(sequence: UInt32, nonce: UInt32, at: Int64)] = []
        for (index, reply) in replies.enumerated() {
            let sendTime = Int64(index) * 20_000_000
            let nonce = UInt32(truncatingIfNeeded: index &* 0x9E37)
            request.withUnsafeMutableBytes { buffer in
                _ = engine.prepareRequest(into: buffer, nonce: nonce)
                engine.stampRequest(buffer, sentAt: sendTime)
            }
            engine.recordRequest(sentAt: sendTime)
            sent.append((0x1000 &+ UInt32(index), nonce, sendTime))
            var datagram = reply.datagram
            if matching { echo(sent[index], into: &datagram, format: format) }
            datagram.withUnsafeBytes { bytes in
                _ = engine.receive(bytes, length: datagram.count, at: reply.arrival, now: reply.arrival)
            }
            _ = engine.advance(to: reply.arrival)
        }
        return engine.status(at: replies.last?.arrival ?? 0)
    }

    private static func echo(
        _ request: (sequence: UInt32, nonce: UInt32, at: Int64), into datagram: inout [UInt8], format: WireFormat
    ) {
        switch format {
        case .lockstep where datagram.count >= LockstepTimePacket.size:
            datagram.withUnsafeMutableBytes { buffer in
                buffer.storeBytes(of: LockstepTimePacket.magic.bigEndian, toByteOffset: 0, as: UInt32.self)
                buffer.storeBytes(of: LockstepTimePacket.version, toByteOffset: 4, as: UInt8.self)
                buffer.storeBytes(of: LockstepTimePacket.Kind.reply.rawValue, toByteOffset: 5, as: UInt8.self)
                buffer.storeBytes(of: request.sequence.bigEndian, toByteOffset: 8, as: UInt32.self)
                buffer.storeBytes(of: request.nonce.bigEndian, toByteOffset: 12, as: UInt32.self)
                buffer.storeBytes(
                    of: request.at.bigEndian, toByteOffset: LockstepTimePacket.clientSendTimeOffset, as: Int64.self)
            }
        case .gstreamer where datagram.count >= NetTimePacket.size:
            datagram.withUnsafeMutableBytes { buffer in
                buffer.storeBytes(of: UInt64(bitPattern: request.at).bigEndian, toByteOffset: 0, as: UInt64.self)
            }
        default:
            break
        }
    }
}
