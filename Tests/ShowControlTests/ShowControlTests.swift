import Foundation
import LockstepNet
import LockstepTime
import Logging
import NIOCore
import ShowControl
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class OSCTests: XCTestCase {
    func testMessage_roundTrips_withEveryArgumentType() throws {
        let message = OSCMessage(
            address: "/lockstep/cue",
            arguments: [
                .string("welcome"), .int32(-7), .float32(1.5), .blob([1, 2, 3]), .int64(1 << 40), .double(0.25),
                .timeTag(.immediately), .bool(true), .bool(false), .nil,
            ])
        let bytes = OSCPacket.message(message).encoded
        XCTAssertEqual(bytes.count % 4, 0)
        XCTAssertEqual(try OSCPacket(decoding: bytes), .message(message))
    }

    func testKnownBytes_decodeAsASenderWritesThem() throws {
        // "/lockstep/pause" with one float 1.0, as TouchOSC sends a button press.
        var bytes = Array("/lockstep/pause".utf8) + [0]
        bytes += [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
        bytes += Array(",f".utf8) + [0, 0]
        bytes += [0x3F, 0x80, 0, 0]
        XCTAssertEqual(
            try OSCPacket(decoding: bytes), .message(OSCMessage(address: "/lockstep/pause", arguments: [.float32(1)])))
    }

    func testBundle_givesEachMessageItsTimeTag() throws {
        let tag = OSCTimeTag(unixNanoseconds: 1_795_000_000_500_000_000)
        XCTAssertLessThanOrEqual(abs(tag.unixNanoseconds! - 1_795_000_000_500_000_000), 1, "to the nanosecond")
        let packet = OSCPacket.bundle(
            timeTag: tag,
            elements: [
                .message(OSCMessage(address: "/lockstep/cue", arguments: [.string("a")])),
                .bundle(timeTag: .immediately, elements: [.message(OSCMessage(address: "/lockstep/next"))]),
            ])
        let decoded = try OSCPacket(decoding: packet.encoded)
        XCTAssertEqual(decoded, packet)
        XCTAssertEqual(decoded.messages.map(\.message.address), ["/lockstep/cue", "/lockstep/next"])
        XCTAssertEqual(decoded.messages[0].timeTag, tag)
        XCTAssertNil(decoded.messages[1].timeTag?.unixNanoseconds, "immediately")
    }

    func testMalformedPackets_areErrorsNamingWhatIsWrong() {
        let good = OSCPacket.message(OSCMessage(address: "/lockstep/cue", arguments: [.string("welcome")])).encoded
        var cases: [(String, [UInt8])] = [
            ("empty", []),
            ("not aligned", Array(good.dropLast())),
            ("no NUL", Array("/lockstep".utf8) + [0x41, 0x42, 0x43]),
            ("no slash", OSCPacket.message(OSCMessage(address: "/x")).encoded.enumerated().map { $0 == 0 ? 0x78 : $1 }),
            ("too large", [UInt8](repeating: 0x2F, count: OSCPacket.largestSize + 4)),
            ("truncated argument", Array(good.prefix(good.count - 4))),
            ("trailing bytes", good + [0, 0, 0, 0]),
        ]
        var unknownType = Array("/a".utf8) + [0, 0] + Array(",q".utf8) + [0, 0]
        cases.append(("unknown type", unknownType))
        unknownType = Array("#bundle".utf8) + [0] + [UInt8](repeating: 0, count: 8) + [0x7F, 0xFF, 0xFF, 0xFC]
        cases.append(("element past the end", unknownType))
        var deep = OSCPacket.message(OSCMessage(address: "/a"))
        for _ in 0...OSCPacket.deepestNesting { deep = .bundle(timeTag: .immediately, elements: [deep]) }
        cases.append(("nested too deep", deep.encoded))
        for (name, bytes) in cases {
            XCTAssertThrowsError(try OSCPacket(decoding: bytes), name) { error in
                XCTAssertFalse("\(error)".isEmpty, name)
            }
        }
    }

    func testRandomBytes_neverCrash() {
        var generator = SplitMix64(seed: 31)
        for length in 0..<2000 {
            let bytes = (0..<(length % 300)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var slashed = bytes
            if !slashed.isEmpty { slashed[0] = UInt8(ascii: length % 2 == 0 ? "/" : "#") }
            _ = try? OSCPacket(decoding: slashed)
        }
    }
}

final class ShowCommandTests: XCTestCase {
    func testOSCAddresses_readAsCommands() throws {
        XCTAssertEqual(
            try ShowCommand(osc: OSCMessage(address: "/lockstep/cue", arguments: [.string("welcome")])), .cue("welcome")
        )
        XCTAssertEqual(try ShowCommand(osc: OSCMessage(address: "/lockstep/cue/chapter-2")), .cue("chapter-2"))
        XCTAssertEqual(try ShowCommand(osc: OSCMessage(address: "/lockstep/pause", arguments: [.float32(1)])), .pause)
        XCTAssertNil(
            try ShowCommand(osc: OSCMessage(address: "/lockstep/pause", arguments: [.float32(0)])), "a button's release"
        )
        for command in [ShowCommand.cue("a.b_c-1"), .pause, .resume, .next, .previous, .black, .stop] {
            XCTAssertEqual(try ShowCommand(osc: command.osc), command)
        }
        for bad in [
            OSCMessage(address: "/other/cue"), OSCMessage(address: "/lockstep/cue"),
            OSCMessage(address: "/lockstep/cue", arguments: [.int32(3)]),
            OSCMessage(address: "/lockstep/cue", arguments: [.string("no spaces")]),
            OSCMessage(address: "/lockstep/launch"), OSCMessage(address: "/lockstep/cue/a/b"),
        ] {
            XCTAssertThrowsError(try ShowCommand(osc: bad), bad.address)
        }
    }

    func testLines_readAsCommands() throws {
        XCTAssertEqual(try ShowCommand(line: "cue welcome\r\n"), .cue("welcome"))
        XCTAssertEqual(try ShowCommand(line: "  PAUSE "), .pause)
        XCTAssertEqual(try ShowCommand(line: "next"), .next)
        for bad in ["", "cue", "cue a b", "launch", "pause now", "cue ../etc", String(repeating: "x", count: 300)] {
            XCTAssertThrowsError(try ShowCommand(line: Substring(bad)), bad) { XCTAssertFalse("\($0)".isEmpty) }
        }
    }

    func testAddressRanges() throws {
        let lan = try AddressRange(parsing: "10.1.0.0/16")
        XCTAssertTrue(lan.contains(SocketAddress(numericHost: "10.1.200.3", port: 9)!))
        XCTAssertFalse(lan.contains(SocketAddress(numericHost: "10.2.0.1", port: 9)!))
        XCTAssertTrue(lan.contains(SocketAddress(numericHost: "::ffff:10.1.0.9", port: 9)!), "IPv4 on a v6 socket")
        XCTAssertTrue(try AddressRange(parsing: "fd00::/8").contains(SocketAddress(numericHost: "fd12::1", port: 0)!))
        XCTAssertTrue(try AddressRange(parsing: "0.0.0.0/0").contains(SocketAddress(numericHost: "8.8.8.8", port: 0)!))
        XCTAssertFalse(
            try AddressRange(parsing: "192.0.2.7").contains(SocketAddress(numericHost: "192.0.2.8", port: 0)!))
        XCTAssertEqual("\(try AddressRange(parsing: "10.1.2.3/16"))", "10.1.0.0/16")
        for bad in ["10.0.0.0/33", "fd00::/129", "example.com", "10.0.0.0/x", ""] {
            XCTAssertThrowsError(try AddressRange(parsing: bad), bad)
        }
    }
}

/// The inputs on real sockets: what is taken, what is refused, and that a flood changes nothing.
final class ShowInputTests: XCTestCase {
    private func start(_ settings: ShowInputSettings, _ received: LockedList) async throws -> (
        ShowInput, Task<Void, Error>, [String: Int]
    ) {
        let input = ShowInput(settings: settings, logger: Logger(label: "test")) { request in
            received.append(request.command)
            return nil
        }
        let ports = AsyncStream<[String: Int]>.makeStream()
        let task = Task { try await input.run { ports.continuation.yield($0) } }
        var iterator = ports.stream.makeAsyncIterator()
        guard let bound = await iterator.next() else { throw XCTSkip("input did not start") }
        return (input, task, bound)
    }

    private func send(_ bytes: [UInt8], to port: Int) throws {
        let socket = try UDPSocket(family: .ipv4)
        _ = try bytes.withUnsafeBytes { try socket.send($0, to: .ipv4Loopback(port: UInt16(port))) }
    }

    private func waitFor(_ condition: () -> Bool) async throws {
        let end = Date().addingTimeInterval(5)
        while !condition(), Date() < end { try await Task.sleep(for: .milliseconds(20)) }
    }

    func testOSCAndUDPAndTCP_takeCommands_andAnswerTCPLines() async throws {
        let received = LockedList()
        let (_, task, ports) = try await start(
            ShowInputSettings(osc: "127.0.0.1:0", udp: "127.0.0.1:0", tcp: "127.0.0.1:0", rate: 100), received)
        defer { task.cancel() }
        try send(OSCPacket.message(ShowCommand.cue("welcome").osc).encoded, to: ports["osc"]!)
        try await waitFor { received.items.count == 1 }
        try send(Array("pause".utf8), to: ports["udp"]!)
        try await waitFor { received.items.count == 2 }
        let answers = try tcpExchange(port: ports["tcp"]!, lines: ["cue map", "launch", "resume"])
        XCTAssertEqual(answers.count, 3, "\(answers)")
        XCTAssertEqual(answers.first, "OK cue map")
        XCTAssertTrue(answers[1].hasPrefix("ERR unknown command"), answers[1])
        XCTAssertEqual(answers.last, "OK resume")
        XCTAssertEqual(received.items, [.cue("welcome"), .pause, .cue("map"), .resume])
    }

    func testSendersNotAllowed_andFloods_changeNothing() async throws {
        let received = LockedList()
        let (input, task, ports) = try await start(
            ShowInputSettings(osc: "127.0.0.1:0", udp: "127.0.0.1:0", allow: [try AddressRange(parsing: "10.0.0.0/8")]),
            received)
        defer { task.cancel() }
        for _ in 0..<200 { try send(OSCPacket.message(ShowCommand.pause.osc).encoded, to: ports["osc"]!) }
        try await waitFor { input.counts.refused >= 200 }
        XCTAssertEqual(input.counts.refused, 200)
        XCTAssertTrue(received.items.isEmpty, "a sender not allowed is not heard")

        let open = LockedList()
        let (limited, task2, ports2) = try await start(
            ShowInputSettings(osc: "127.0.0.1:0", udp: "127.0.0.1:0", rate: 5), open)
        defer { task2.cancel() }
        var generator = SplitMix64(seed: 5)
        for index in 0..<500 {
            let junk = (0..<(index % 64 * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try send(junk, to: ports2[index % 2 == 0 ? "osc" : "udp"]!)
        }
        try await waitFor { limited.counts.refused >= 500 }
        XCTAssertTrue(open.items.isEmpty, "\(open.items)")
        // Still listening, and the rate limit lets a sender in again once its bucket refills.
        try await Task.sleep(for: .milliseconds(400))
        try send(OSCPacket.message(ShowCommand.next.osc).encoded, to: ports2["osc"]!)
        try await waitFor { open.items.count == 1 }
        XCTAssertEqual(open.items, [.next])
        for _ in 0..<20 { try send(Array("black".utf8), to: ports2["udp"]!) }
        try await waitFor { limited.counts.refused + limited.counts.taken >= 521 }
        XCTAssertLessThanOrEqual(open.items.count, 1 + 5 + 1, "a burst over the rate is cut")
    }

    func testAnOSCBundle_countsEachOfItsMessagesAgainstTheRate() async throws {
        let received = LockedList()
        let (_, task, ports) = try await start(ShowInputSettings(osc: "127.0.0.1:0", rate: 10), received)
        defer { task.cancel() }
        let bundle = OSCPacket.bundle(
            timeTag: .immediately, elements: (0..<60).map { _ in .message(ShowCommand.next.osc) })
        try send(bundle.encoded, to: ports["osc"]!)
        try await waitFor { received.items.count >= 10 }
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(received.items.count, 10, "60 messages in one datagram, 10 a second at most")
    }

    func testAnOSCBundleOfSeveralKilobytes_isReadWhole() async throws {
        let received = LockedList()
        let (_, task, ports) = try await start(ShowInputSettings(osc: "127.0.0.1:0", rate: 1000), received)
        defer { task.cancel() }
        // The most elements a bundle takes (64), each a cue with a long name: about 5.6 KB, past
        // NIO's default 2 KiB read.
        let names = (0..<OSCPacket.mostArguments).map { "cue-\($0)-" + String(repeating: "x", count: 54) }
        let bundle = OSCPacket.bundle(
            timeTag: .immediately, elements: names.map { .message(ShowCommand.cue($0).osc) })
        XCTAssertGreaterThan(bundle.encoded.count, 4096)
        XCTAssertLessThanOrEqual(bundle.encoded.count, OSCPacket.largestSize)
        try send(bundle.encoded, to: ports["osc"]!)
        try await waitFor { received.items.count == names.count }
        XCTAssertEqual(received.items, names.map { .cue($0) })
    }

    func testTCP_aSenderNotAllowed_isAnsweredAndClosed_andSeventeenConnectionsLeaveItServing() async throws {
        let received = LockedList()
        let (_, outsiders, closedPorts) = try await start(
            ShowInputSettings(tcp: "127.0.0.1:0", allow: [try AddressRange(parsing: "10.0.0.0/8")]), received)
        defer { outsiders.cancel() }
        let refused = try tcpExchange(port: closedPorts["tcp"]!, lines: ["pause"])
        XCTAssertEqual(refused.count, 1, "\(refused)")
        XCTAssertTrue(refused[0].hasPrefix("ERR 127.0.0.1:"), refused[0])
        XCTAssertTrue(refused[0].hasSuffix(" is not in show-control.allow"), refused[0])
        XCTAssertTrue(received.items.isEmpty)

        let (_, task, ports) = try await start(ShowInputSettings(tcp: "127.0.0.1:0", rate: 1000), received)
        defer { task.cancel() }
        // Hold more than the input keeps, then open and close more in bursts: it lives, and answers.
        let held = try (0..<ShowInputSettings.mostConnections + 1).map { _ in
            try RawHTTP.Connection(port: ports["tcp"]!)
        }
        for _ in 0..<5 {
            let burst = try (0..<ShowInputSettings.mostConnections + 1).map { _ in
                try RawHTTP.Connection(port: ports["tcp"]!)
            }
            withExtendedLifetime(burst) {}
        }
        XCTAssertEqual(try tcpExchange(port: ports["tcp"]!, lines: ["next"]), ["OK next"])
        withExtendedLifetime(held) {}
    }

    private func tcpExchange(port: Int, lines: [String]) throws -> [String] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(connected, 0)
        let text = lines.map { $0 + "\r\n" }.joined()
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), 0) }
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.split(separator: "\n").count < lines.count {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return received.split(separator: "\n").map(String.init)
    }
}

final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [ShowCommand] = []
    func append(_ value: ShowCommand) { lock.withLock { values.append(value) } }
    var items: [ShowCommand] { lock.withLock { values } }
}
