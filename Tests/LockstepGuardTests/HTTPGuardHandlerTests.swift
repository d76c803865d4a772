import HTTPTypes
import LockstepGuard
import LockstepNet
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import XCTest

/// The HTTP surfaces' guard, in simulated time: idle connections make room for a client with
/// something to ask; only when every connection is being served is a newcomer refused, with a 503
/// that says why; idle, slowloris and slow-body connections are closed; one address cannot hold
/// every place.
final class HTTPGuardHandlerTests: XCTestCase {
    private let loop = EmbeddedEventLoop()

    private func makeGuard(
        maximum: Int = 2, perSource: Int? = nil, allow: [AddressRange]? = nil
    ) -> ConnectionGuard {
        ConnectionGuard(
            surface: "control",
            policy: GuardPolicy(allow: allow, maximumConnections: maximum, maximumPerSource: perSource ?? maximum),
            logger: Logger(label: "test"))
    }

    private func connect(_ connections: ConnectionGuard, from host: String = "127.0.0.1") throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        channel.remoteAddress = try SocketAddress(ipAddress: host, port: 40_000)
        try channel.pipeline.syncOperations.addHandler(HTTPGuardHandler(guard: connections))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    private func ask(_ channel: EmbeddedChannel, end: Bool = false) throws {
        let head = HTTPRequest(method: .get, scheme: nil, authority: "node", path: "/status")
        try channel.writeInbound(HTTPRequestPart.head(head))
        if end { try channel.writeInbound(HTTPRequestPart.end(nil)) }
    }

    private func answer(_ channel: EmbeddedChannel) throws {
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
    }

    func testAtTheCap_theOldestIdleConnectionMakesRoom() throws {
        let connections = makeGuard()
        let oldest = try connect(connections)
        let newer = try connect(connections)
        let newcomer = try connect(connections)
        XCTAssertFalse(oldest.isActive, "the oldest idle connection was closed to make room")
        XCTAssertTrue(newer.isActive)
        try ask(newcomer)
        XCTAssertNotNil(try newcomer.readInbound(as: HTTPRequestPart.self), "the newcomer's request goes through")
    }

    func testAtTheCap_aConnectionBeingServedIsNeverClosed_andOneAnsweredMayMakeRoom() throws {
        let connections = makeGuard()
        let first = try connect(connections)
        try ask(first)
        let second = try connect(connections)
        try ask(second)
        let refused = try connect(connections)
        try ask(refused)
        XCTAssertNil(try refused.readInbound(as: HTTPRequestPart.self), "the request is not handed on")
        guard case .head(let head) = try refused.readOutbound(as: HTTPResponsePart.self) else {
            return XCTFail("a 503 head")
        }
        XCTAssertEqual(head.status, .serviceUnavailable)
        XCTAssertEqual(head.headerFields[.retryAfter], "1")
        guard case .body(let body) = try refused.readOutbound(as: HTTPResponsePart.self) else {
            return XCTFail("a body saying why")
        }
        XCTAssertTrue(String(buffer: body).contains("too many control connections are being served (at most 2)"))
        XCTAssertTrue(first.isActive)
        XCTAssertTrue(second.isActive)

        try answer(first)  // first now waits for its next request: the next newcomer may take its place
        let admitted = try connect(connections)
        XCTAssertFalse(first.isActive)
        XCTAssertTrue(second.isActive, "still being served")
        try ask(admitted)
        XCTAssertNotNil(try admitted.readInbound(as: HTTPRequestPart.self))
    }

    func testClosedConnections_leaveTheCount() throws {
        let connections = makeGuard()
        for _ in 0..<5 {
            let channel = try connect(connections)
            try ask(channel)
            _ = try channel.finish()
        }
        XCTAssertEqual(connections.openConnections, 0)
        let first = try connect(connections)
        try ask(first)
        let second = try connect(connections)
        try ask(second)
        XCTAssertNotNil(try second.readInbound(as: HTTPRequestPart.self), "closed ones no longer count")
    }

    func testOneAddress_cannotHoldEveryPlace() throws {
        let connections = makeGuard(maximum: 4, perSource: 2)
        let flood = try (0..<2).map { _ in try connect(connections, from: "10.0.0.66") }
        for channel in flood { try ask(channel) }
        let third = try connect(connections, from: "10.0.0.66")
        try ask(third)
        guard case .head(let head) = try third.readOutbound(as: HTTPResponsePart.self) else { return XCTFail("a 503") }
        XCTAssertEqual(head.status, .serviceUnavailable, "a third from one address, the first two being served")
        let other = try connect(connections, from: "10.0.0.7")
        try ask(other)
        XCTAssertNotNil(try other.readInbound(as: HTTPRequestPart.self), "another address still has room")
        // An address at its bound makes room among its own idle connections, not the others'.
        try answer(flood[0])
        let again = try connect(connections, from: "10.0.0.66")
        XCTAssertFalse(flood[0].isActive)
        XCTAssertTrue(other.isActive)
        try ask(again)
        XCTAssertNotNil(try again.readInbound(as: HTTPRequestPart.self))
    }

    func testAnAddressOutsideTheAllowList_isClosedWhenItConnects() throws {
        let connections = makeGuard(allow: [try AddressRange(parsing: "10.1.0.0/16")])
        let outsider = try connect(connections, from: "192.0.2.9")
        loop.run()
        XCTAssertFalse(outsider.isActive)
        XCTAssertEqual(connections.openConnections, 0, "never counted")
        XCTAssertEqual(connections.refusals.counts.refused, 1)
        let insider = try connect(connections, from: "10.1.2.3")
        XCTAssertTrue(insider.isActive)
    }

    func testIdleAndSlowlorisConnections_areClosedAtTheIdleDeadline() throws {
        let connections = makeGuard()
        let idle = try connect(connections)
        loop.advanceTime(by: .seconds(9))
        XCTAssertTrue(idle.isActive)
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(idle.isActive, "no request head within 10 s")

        let served = try connect(connections)
        try ask(served, end: true)
        loop.advanceTime(by: .seconds(60))
        XCTAssertTrue(served.isActive, "a request being answered has no deadline (an event stream)")
        try answer(served)
        loop.advanceTime(by: .seconds(10))
        XCTAssertFalse(served.isActive, "idle again after the answer")
    }

    func testABodySlowerThanTheMinimumRate_isClosed_andAFastOneIsNot() throws {
        let connections = makeGuard()
        let slow = try connect(connections)
        try ask(slow)
        for _ in 0..<3 {
            try slow.writeInbound(HTTPRequestPart.body(ByteBuffer(bytes: [1])))
            loop.advanceTime(by: .seconds(3))
        }
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(slow.isActive, "3 bytes in 10 s: under 1 KiB/s")

        let upload = try connect(connections)
        try ask(upload)
        for _ in 0..<30 {
            try upload.writeInbound(HTTPRequestPart.body(ByteBuffer(repeating: 0, count: 4096)))
            loop.advanceTime(by: .seconds(1))
        }
        XCTAssertTrue(upload.isActive, "a long upload at 4 KiB/s goes on")
        try upload.writeInbound(HTTPRequestPart.end(nil))
        loop.advanceTime(by: .seconds(30))
        XCTAssertTrue(upload.isActive, "being answered")
    }

    func testABodyStillArrivingAfterTheAnswer_keepsItsDeadline_andThenTheConnectionIdles() throws {
        let connections = makeGuard()
        let refusedUpload = try connect(connections)
        try ask(refusedUpload)
        try answer(refusedUpload)  // a 401 before the body: the body still comes, and must keep up
        loop.advanceTime(by: .seconds(11))
        XCTAssertFalse(refusedUpload.isActive, "a body that stopped coming after the answer")

        let finished = try connect(connections)
        try ask(finished)
        try answer(finished)
        try finished.writeInbound(HTTPRequestPart.body(ByteBuffer(repeating: 0, count: 20_000)))
        try finished.writeInbound(HTTPRequestPart.end(nil))
        loop.advanceTime(by: .seconds(9))
        XCTAssertTrue(finished.isActive)
        loop.advanceTime(by: .seconds(1))
        XCTAssertFalse(finished.isActive, "answered and ended: idle, closed at the idle deadline")
    }
}
