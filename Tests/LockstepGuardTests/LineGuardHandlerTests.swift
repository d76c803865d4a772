import LockstepGuard
import LockstepNet
import Logging
import NIOCore
import NIOEmbedded
import XCTest

/// The show-control TCP input's guard, in simulated time: refusals answer and close (never leave a
/// connection half open), idle connections make room, a line must end in time and within bounds.
final class LineGuardHandlerTests: XCTestCase {
    private let loop = EmbeddedEventLoop()

    private func makeGuard(maximum: Int = 2, perSource: Int = 2, rate: Double? = nil) throws -> ConnectionGuard {
        ConnectionGuard(
            surface: "show control",
            policy: GuardPolicy(
                allow: [try AddressRange(parsing: "10.0.0.0/8")], maximumConnections: maximum,
                maximumPerSource: perSource, idleDeadline: .seconds(300), messageDeadline: .seconds(10),
                messageRate: rate, allowSetting: "show-control.allow"),
            logger: Logger(label: "test"))
    }

    /// A connection whose lines are answered "OK <line>" by a handler behind the guard.
    private func connect(_ connections: ConnectionGuard, from host: String = "10.0.0.5") throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        channel.remoteAddress = try SocketAddress(ipAddress: host, port: 50_000)
        try channel.pipeline.syncOperations.addHandlers(
            LineGuardHandler(guard: connections, longestLine: 16), Echo())
        try channel.connect(to: SocketAddress(ipAddress: "10.0.0.1", port: 1)).wait()
        return channel
    }

    private func send(_ channel: EmbeddedChannel, _ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    private func answers(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    func testLines_areHandedOnAndAnswered_inAnyChunking() throws {
        let channel = try connect(try makeGuard())
        try send(channel, "cue a\r\npau")
        try send(channel, "se\n\n  \r\nnext\n")
        XCTAssertEqual(try answers(channel), "OK cue a\nOK pause\nOK next\n")
    }

    func testASenderOutsideTheAllowList_isAnsweredAndClosed() throws {
        let connections = try makeGuard()
        let channel = try connect(connections, from: "192.0.2.1")
        XCTAssertEqual(try answers(channel), "ERR 192.0.2.1:50000 is not in show-control.allow\n")
        XCTAssertFalse(channel.isActive)
        XCTAssertEqual(connections.openConnections, 0)
    }

    func testAtTheBound_theOldestWaitingMakesRoom_idleOrMidLine() throws {
        let connections = try makeGuard(maximum: 2, perSource: 2)
        let slowloris = try connect(connections)
        try send(slowloris, "cue")
        let idle = try connect(connections, from: "10.0.0.6")
        let newcomer = try connect(connections, from: "10.0.0.7")
        XCTAssertFalse(slowloris.isActive, "the oldest, mid-line for long, made room")
        XCTAssertTrue(idle.isActive)
        try send(newcomer, "pause\n")
        XCTAssertEqual(try answers(newcomer), "OK pause\n")
        let another = try connect(connections, from: "10.0.0.8")
        XCTAssertFalse(idle.isActive, "then the oldest idle one")
        XCTAssertTrue(newcomer.isActive)
        try send(another, "next\n")
        XCTAssertEqual(try answers(another), "OK next\n")
    }

    func testSeventeenConnectionsAndBursts_neverBreakTheGuard() throws {
        let connections = try makeGuard(maximum: 16, perSource: 16)
        var channels = try (0..<17).map { _ in try connect(connections) }
        XCTAssertEqual(connections.openConnections, 16)
        XCTAssertEqual(channels.filter(\.isActive).count, 16, "the 17th took the oldest idle's place")
        for _ in 0..<5 {
            for channel in channels where channel.isActive { _ = try? channel.finish() }
            channels = try (0..<17).map { _ in try connect(connections) }
        }
        XCTAssertEqual(connections.openConnections, 16)
    }

    func testALineNotEndedWithinTheDeadline_andAnIdleConnection_areClosed() throws {
        let connections = try makeGuard()
        let trickle = try connect(connections)
        for character in "cue" {
            try send(trickle, String(character))
            loop.advanceTime(by: .seconds(3))
        }
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(trickle.isActive, "a line begun 10 s ago and not ended")

        let idle = try connect(connections)
        try send(idle, "next\n")
        loop.advanceTime(by: .seconds(299))
        XCTAssertTrue(idle.isActive)
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(idle.isActive, "silent for the idle deadline")
    }

    func testALineTooLong_endsTheConnectionWithTheReason() throws {
        let connections = try makeGuard()
        let channel = try connect(connections)
        try send(channel, String(repeating: "x", count: 17))
        XCTAssertEqual(try answers(channel), "ERR line too long (at most 16 bytes)\n")
        XCTAssertFalse(channel.isActive)
        let complete = try connect(connections)
        try send(complete, String(repeating: "y", count: 17) + "\n")
        XCTAssertFalse(complete.isActive, "a whole line over the bound in one chunk too")
    }

    func testMessageRate_countsEveryMessage() throws {
        let connections = try makeGuard(rate: 5)
        let sender = try SocketAddress(ipAddress: "10.0.0.9", port: 1)
        let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let taken = (0..<60).filter { _ in connections.admitMessage(from: sender, via: "osc", now: now) == nil }.count
        XCTAssertEqual(taken, 5, "a burst of the rate, then nothing")
        XCTAssertEqual(
            connections.admitMessage(from: sender, via: "osc", now: now + .milliseconds(200)), nil,
            "refilled at 5 a second")
        let outsider = try SocketAddress(ipAddress: "192.0.2.1", port: 1)
        XCTAssertEqual(
            "\(connections.admitMessage(from: outsider, via: "osc", now: now)!)",
            "192.0.2.1:1 is not in show-control.allow")
    }
}

/// Answers each line as "OK <line>".
private final class Echo: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = String(buffer: unwrapInboundIn(data))
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "OK \(line)\n")), promise: nil)
    }
}
