import LockstepNet
import XCTest

@testable import SyncClock

final class TimeResponderTests: XCTestCase {
    private static let key = try! ClockKey(bytes: Array(0..<32))
    private var responder = TimeResponder(
        identity: 0xABCD, epoch: 0xE90C, flags: [.simulatedClock], serverPorts: [5637, 6000])

    /// Answers `request` as the server does: prepare, then stamp the send time.
    private func answer(_ request: [UInt8], sourcePort: UInt16 = 40_000, receiveTime: Int64, sendTime: Int64)
        -> (TimeResponder.Outcome, [UInt8])
    {
        var reply = [UInt8](repeating: 0, count: 100)
        var outcome = request.withUnsafeBytes { requestBytes in
            reply.withUnsafeMutableBytes { replyBytes in
                responder.respond(
                    to: requestBytes, length: request.count, sourcePort: sourcePort, receiveTime: receiveTime,
                    kernelStamped: true, into: replyBytes)
            }
        }
        if case .reply(let format, let count) = outcome {
            let stamped = reply.withUnsafeMutableBytes {
                responder.stamp($0, format: format, receiveTime: receiveTime, sendTime: sendTime)
            }
            if !stamped { outcome = .unrepresentableMasterTime }
            reply = Array(reply.prefix(count))
        }
        return (outcome, reply)
    }

    private func request(
        sequence: UInt32, nonce: UInt32 = 0, clientSendTime: Int64, signedWith authenticator: PacketAuthenticator? = nil
    ) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        bytes.withUnsafeMutableBytes {
            LockstepTimePacket(kind: .request, sequence: sequence, nonce: nonce, clientSendTime: clientSendTime)
                .encode(into: $0)
            authenticator?.sign($0)
        }
        return bytes
    }

    func testRespond_toLockstepRequest_echoesAndFillsTimesIdentityAndEpoch() throws {
        let (outcome, reply) = answer(
            request(sequence: 77, nonce: 0x5EED_1234, clientSendTime: -5), receiveTime: 1_000, sendTime: 1_250)
        XCTAssertEqual(outcome, .reply(.lockstep, count: LockstepTimePacket.size))
        guard
            case .packet(.lockstep(let packet)) = reply.withUnsafeBytes({
                ClockPacket.decode($0, length: LockstepTimePacket.size)
            })
        else {
            return XCTFail("the reply is not a Lockstep packet")
        }
        XCTAssertEqual(packet.kind, .reply)
        XCTAssertEqual(packet.sequence, 77)
        XCTAssertEqual(packet.nonce, 0x5EED_1234, "the nonce is echoed")
        XCTAssertEqual(Array(reply[80..<96]), [UInt8](repeating: 0, count: 16), "no key, no code")
        XCTAssertEqual(packet.clientSendTime, -5)
        XCTAssertEqual(packet.serverReceiveTime, 1_000)
        XCTAssertEqual(packet.serverSendTime, 1_250)
        XCTAssertEqual(packet.serverIdentity, 0xABCD)
        XCTAssertEqual(packet.epoch, 0xE90C)
        XCTAssertEqual(packet.flags, [.simulatedClock, .kernelReceiveTimestamp])
    }

    func testRespond_toGStreamerRequest_echoesAndStampsTheMiddleOfItsStay() {
        var request = [UInt8](repeating: 0, count: 16)
        request.withUnsafeMutableBytes { NetTimePacket(localTime: 0xFEED, remoteTime: 9).encode(into: $0) }
        let (outcome, reply) = answer(request, receiveTime: 1_000, sendTime: 1_300)
        XCTAssertEqual(outcome, .reply(.gstreamer, count: 16))
        XCTAssertEqual(
            reply.withUnsafeBytes { NetTimePacket(decoding: $0) }, NetTimePacket(localTime: 0xFEED, remoteTime: 1_150))
    }

    func testStamp_whenMasterTimeIsNegative_refusesTheGStreamerReply() {
        let request = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(answer(request, receiveTime: -2_000, sendTime: -1_000).0, .unrepresentableMasterTime)
        XCTAssertEqual(
            answer(self.request(sequence: 1, clientSendTime: 0), receiveTime: -2_000, sendTime: -1_000).0,
            .reply(.lockstep, count: LockstepTimePacket.size), "Lockstep's format carries negative times")
    }

    func testRespond_withAKey_answersOnlySignedRequests_andSignsItsReplies() throws {
        let authenticator = try PacketAuthenticator(key: Self.key)
        responder.authenticator = authenticator
        let unsigned = request(sequence: 3, nonce: 9, clientSendTime: 7)
        XCTAssertEqual(answer(unsigned, receiveTime: 1, sendTime: 2).0, .rejected(.unauthenticated))
        let otherKey = try PacketAuthenticator(key: ClockKey(bytes: [UInt8](repeating: 7, count: 32)))
        let wrong = request(sequence: 3, nonce: 9, clientSendTime: 7, signedWith: otherKey)
        XCTAssertEqual(answer(wrong, receiveTime: 1, sendTime: 2).0, .rejected(.unauthenticated))
        var altered = request(sequence: 3, nonce: 9, clientSendTime: 7, signedWith: authenticator)
        altered[20] ^= 1
        XCTAssertEqual(answer(altered, receiveTime: 1, sendTime: 2).0, .rejected(.unauthenticated))

        let signed = request(sequence: 3, nonce: 9, clientSendTime: 7, signedWith: authenticator)
        let (outcome, reply) = answer(signed, receiveTime: 1_000, sendTime: 1_250)
        XCTAssertEqual(outcome, .reply(.lockstep, count: LockstepTimePacket.size))
        XCTAssertTrue(reply.withUnsafeBytes { authenticator.isAuthentic($0) }, "the reply is signed")
        XCTAssertFalse(reply.withUnsafeBytes { otherKey.isAuthentic($0) })
        XCTAssertNotEqual(Array(reply[80..<96]), Array(signed[80..<96]), "the reply has its own code")
    }

    func testRespond_withAKey_stillAnswersGStreamer_unlessTheFormatIsDisabled() throws {
        responder.authenticator = try PacketAuthenticator(key: Self.key)
        let request = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(answer(request, receiveTime: 10, sendTime: 20).0, .reply(.gstreamer, count: 16))
        responder.answersGStreamer = false
        XCTAssertEqual(answer(request, receiveTime: 10, sendTime: 20).0, .rejected(.formatDisabled))
    }

    func testRespond_toAVersion1Request_rejectsAsUnsupportedVersion() {
        var old = Array(request(sequence: 1, clientSendTime: 1).prefix(56))
        old[4] = 1
        XCTAssertEqual(answer(old, receiveTime: 1, sendTime: 2).0, .rejected(.unsupportedVersion))
    }

    func testRespond_toAReply_rejectsAsUnexpectedKind() {
        var reply = request(sequence: 1, clientSendTime: 1)
        reply[5] = LockstepTimePacket.Kind.reply.rawValue
        XCTAssertEqual(answer(reply, receiveTime: 1, sendTime: 2).0, .rejected(.unexpectedKind))
    }

    func testRespond_fromAServerPort_dropsSoServersCannotPingPong() {
        XCTAssertEqual(
            answer([UInt8](repeating: 0, count: 16), sourcePort: 5637, receiveTime: 1, sendTime: 2).0, .fromServerPort)
        XCTAssertEqual(
            answer(request(sequence: 1, clientSendTime: 1), sourcePort: 6000, receiveTime: 1, sendTime: 2).0,
            .fromServerPort)
    }

    func testRespond_toRandomDatagrams_neverRepliesLargerAndCountsEveryRejection() {
        var random = SplitMix64(seed: 3)
        var statistics = ServerStatistics()
        let valid = request(sequence: 5, clientSendTime: 5)
        for round in 0..<20_000 {
            var bytes: [UInt8]
            switch round % 4 {
            case 0:
                bytes = (0..<Int.random(in: 0...120, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            case 1:
                // A valid request with one byte of the header corrupted.
                bytes = valid
                bytes[Int.random(in: 0..<16, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 2:
                bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            default:
                bytes = valid + (0..<Int.random(in: 1...8, using: &random)).map { _ in 0 }
            }
            let (outcome, reply) = answer(bytes, receiveTime: 10, sendTime: 20)
            statistics.record(outcome)
            if case .reply = outcome {
                XCTAssertLessThanOrEqual(reply.count, bytes.count, "a reply is never larger than its request")
            }
        }
        XCTAssertEqual(statistics.datagrams, 20_000)
        XCTAssertEqual(
            statistics.datagrams,
            statistics.lockstepReplies + statistics.gstreamerReplies + statistics.rejectedTotal
                + statistics.unrepresentableMasterTime + statistics.fromServerPort)
        XCTAssertGreaterThan(statistics.rejected[.oversized, default: 0], 0)
        XCTAssertGreaterThan(statistics.rejected[.tooShort, default: 0], 0)
        XCTAssertGreaterThan(statistics.rejected[.badMagic, default: 0], 0)
        XCTAssertGreaterThan(statistics.rejected[.unsupportedVersion, default: 0], 0)
    }
}
