import XCTest

@testable import SyncClock

final class WireFormatTests: XCTestCase {
    private func decode(_ bytes: [UInt8], length: Int? = nil) -> ClockPacket.Decoded {
        bytes.withUnsafeBytes { ClockPacket.decode($0, length: length ?? bytes.count) }
    }

    private func encoded(_ packet: LockstepTimePacket) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        bytes.withUnsafeMutableBytes { packet.encode(into: $0) }
        return bytes
    }

    func testLockstepPacket_roundTrips() {
        let packet = LockstepTimePacket(
            kind: .reply, flags: [.realtimeTimescale, .kernelReceiveTimestamp], sequence: 0xDEAD_BEEF,
            nonce: 0xFACE_B00C, clientSendTime: -3_600_000_000_123, serverReceiveTime: 42, serverSendTime: Int64.max,
            serverIdentity: 0x0123_4567_89AB_CDEF, epoch: UInt64.max, rootErrorBound: 123_456, stratum: 2,
            relayIdentity: 0x7777, upstreamIdentity: 0x8888)
        XCTAssertEqual(decode(encoded(packet)), .packet(.lockstep(packet)))
    }

    func testLockstepPacket_layoutIsBigEndianAsDocumented() {
        let bytes = encoded(
            LockstepTimePacket(
                kind: .request, flags: [.simulatedClock], sequence: 0x0102_0304, nonce: 0x0506_0708,
                clientSendTime: 0x1112_1314_1516_1718,
                serverReceiveTime: 0x2122_2324_2526_2728, serverSendTime: 0x3132_3334_3536_3738,
                serverIdentity: 0x4142_4344_4546_4748, epoch: 0x5152_5354_5556_5758, rootErrorBound: 0x6162_6364,
                stratum: 0x65, relayIdentity: 0x7172_7374_7576_7778, upstreamIdentity: 0x8182_8384_8586_8788))
        XCTAssertEqual(bytes.count, 96)
        XCTAssertEqual(Array(bytes[0..<4]), Array("LSCK".utf8))
        XCTAssertEqual(bytes[4], 3, "version")
        XCTAssertEqual(bytes[5], 1, "kind: request")
        XCTAssertEqual(Array(bytes[6..<8]), [0, 4], "flags: simulated clock")
        XCTAssertEqual(Array(bytes[8..<12]), [1, 2, 3, 4], "sequence")
        XCTAssertEqual(Array(bytes[12..<16]), [5, 6, 7, 8], "nonce")
        XCTAssertEqual(bytes[16], 0x11, "client send time")
        XCTAssertEqual(bytes[24], 0x21, "server receive time")
        XCTAssertEqual(bytes[32], 0x31, "server send time")
        XCTAssertEqual(bytes[40], 0x41, "server identity")
        XCTAssertEqual(bytes[48], 0x51, "epoch")
        XCTAssertEqual(bytes[55], 0x58)
        XCTAssertEqual(Array(bytes[56..<60]), [0x61, 0x62, 0x63, 0x64], "root error bound")
        XCTAssertEqual(Array(bytes[60..<64]), [0x65, 0, 0, 0], "stratum, then zero")
        XCTAssertEqual(bytes[64], 0x71, "relay identity")
        XCTAssertEqual(bytes[72], 0x81, "upstream identity")
        XCTAssertEqual(bytes[79], 0x88)
        XCTAssertEqual(Array(bytes[80..<96]), [UInt8](repeating: 0, count: 16), "authentication code: none yet")
    }

    func testNetTimePacket_roundTripsAsTwoBigEndianWords() {
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBytes {
            NetTimePacket(localTime: 0x0102_0304_0506_0708, remoteTime: 0x1112_1314_1516_1718).encode(into: $0)
        }
        XCTAssertEqual(bytes, [1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18])
        XCTAssertEqual(
            decode(bytes),
            .packet(.gstreamer(NetTimePacket(localTime: 0x0102_0304_0506_0708, remoteTime: 0x1112_1314_1516_1718))))
    }

    func testDecode_whenShorterThanAnyPacket_rejectsAsTooShort() {
        for length in [0, 1, 8, 15] {
            XCTAssertEqual(decode([UInt8](repeating: 0, count: length)), .rejected(.tooShort), "\(length) bytes")
        }
    }

    func testDecode_whenBetweenTheTwoSizes_rejectsAsTooShort() {
        let request = encoded(LockstepTimePacket(kind: .request, sequence: 1, clientSendTime: 1))
        for length in [17, 32, 55, 56, 71, 72, 95] {
            XCTAssertEqual(decode(Array(request.prefix(length))), .rejected(.tooShort), "\(length) bytes")
        }
    }

    func testDecode_whenLongerThanLockstepPacket_rejectsAsOversized() {
        let request = encoded(LockstepTimePacket(kind: .request, sequence: 1, clientSendTime: 1))
        XCTAssertEqual(decode(request + [0]), .rejected(.oversized))
        XCTAssertEqual(decode(request, length: 70_000), .rejected(.oversized), "truncated by the receive buffer")
    }

    func testDecode_whenMagicIsWrong_rejectsAsBadMagic() {
        var request = encoded(LockstepTimePacket(kind: .request, sequence: 1, clientSendTime: 1))
        request[0] = UInt8(ascii: "X")
        XCTAssertEqual(decode(request), .rejected(.badMagic))
    }

    func testDecode_whenVersionIsUnknown_rejectsAsUnsupportedVersion() {
        var request = encoded(LockstepTimePacket(kind: .request, sequence: 1, clientSendTime: 1))
        for version: UInt8 in [0, 1, 2, 255] {
            request[4] = version
            XCTAssertEqual(decode(request), .rejected(.unsupportedVersion), "version \(version)")
        }
        request[4] = 1
        XCTAssertEqual(
            decode(Array(request.prefix(56))), .rejected(.unsupportedVersion), "a version 1 packet, 56 bytes")
    }

    func testDecode_whenKindIsUnknown_rejectsAsUnknownKind() {
        var request = encoded(LockstepTimePacket(kind: .request, sequence: 1, clientSendTime: 1))
        for kind: UInt8 in [0, 3, 200] {
            request[5] = kind
            XCTAssertEqual(decode(request), .rejected(.unknownKind), "kind \(kind)")
        }
    }

    func testRejection_describesItselfInASentence() {
        for reason in PacketRejection.allCases {
            XCTAssertFalse(reason.description.isEmpty)
            XCTAssertNotEqual(reason.description, reason.rawValue)
        }
    }
}
