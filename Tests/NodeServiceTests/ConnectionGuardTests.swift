import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
@testable import NodeService
import XCTest

/// The control API's connection cap: idle connections make room for a client with something to ask;
/// only when every connection is being served is a newcomer refused, with a 503 that says why.
final class ConnectionGuardTests: XCTestCase {
    private let limits = ConnectionGuard.Limits(maximumConnections: 2, requestDeadline: .seconds(10))

    private func connect() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ConnectionGuard(limits: limits))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    private func ask(_ channel: EmbeddedChannel) throws {
        let head = HTTPRequest(method: .get, scheme: nil, authority: "node", path: "/status")
        try channel.writeInbound(HTTPRequestPart.head(head))
    }

    private func answer(_ channel: EmbeddedChannel) throws {
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
    }

    func testAtTheCap_theOldestIdleConnectionMakesRoom() throws {
        let oldest = try connect()
        let newer = try connect()
        let newcomer = try connect()
        XCTAssertFalse(oldest.isActive, "the oldest idle connection was closed to make room")
        XCTAssertTrue(newer.isActive)
        try ask(newcomer)
        XCTAssertNotNil(try newcomer.readInbound(as: HTTPRequestPart.self), "the newcomer's request goes through")
    }

    func testAtTheCap_aConnectionBeingServedIsNeverClosed_andOneAnsweredMayMakeRoom() throws {
        let first = try connect()
        try ask(first)
        let second = try connect()
        try ask(second)
        let refused = try connect()
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
        let admitted = try connect()
        XCTAssertFalse(first.isActive)
        XCTAssertTrue(second.isActive, "still being served")
        try ask(admitted)
        XCTAssertNotNil(try admitted.readInbound(as: HTTPRequestPart.self))
    }

    func testClosedConnections_leaveTheCount() throws {
        for _ in 0..<5 {
            let channel = try connect()
            try ask(channel)
            _ = try channel.finish()
        }
        let first = try connect()
        try ask(first)
        let second = try connect()
        try ask(second)
        XCTAssertNotNil(try second.readInbound(as: HTTPRequestPart.self), "closed ones no longer count")
    }
}
