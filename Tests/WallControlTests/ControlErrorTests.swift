import AsyncHTTPClient
import LockstepTime
import NIOPosix
import WallControl
import XCTest

/// What a daemon answers when it relays an error: the request's fault a 4xx, the nodes' a 5xx.
final class ControlErrorTests: XCTestCase {
    func testTheRequestsOwnFault_is4xx_andTheNodes_is5xx() {
        let clientFaults: [ControlError] = [
            .unplayable(node: "a", reason: "\"/etc/x.png\" is not inside the media roots"),
            .timeline("the time asked for is 283824000 s ahead, past start-horizon (300 s)"),
            .refused(node: "a", command: "PUT /timeline", reason: "HTTP 422"), .unknownNodes(["z"]), .config("bad"),
        ]
        for error in clientFaults { XCTAssertEqual(error.httpStatus / 100, 4, "\(error)") }
        let serverFaults: [ControlError] = [
            .unreachable(node: "a", address: "http://10.0.0.1:7700", reason: "connection refused"),
            .unauthorized(node: "a", tokenSent: true), .otherWall(node: "a", wall: "x", expected: "y"),
            .protocolViolation(node: "a", detail: "?"), .notReady(nodes: ["a": "no clock"]),
        ]
        for error in serverFaults { XCTAssertEqual(error.httpStatus / 100, 5, "\(error)") }
        // A command some nodes failed: the request's fault only when each node's failure is.
        XCTAssertEqual(ControlError.httpStatus(of: WallFailure(failures: ["a": clientFaults[0]])), 422)
        XCTAssertEqual(
            ControlError.httpStatus(of: WallFailure(failures: ["a": clientFaults[0], "b": serverFaults[0]])), 502)
        XCTAssertEqual(
            ControlError.httpStatus(of: WallFailure(failures: ["a": clientFaults[0]], succeeded: ["b"])), 502,
            "some nodes took it: the wall is split, the request was not simply refused")
        XCTAssertTrue(
            WallFailure(failures: ["a": clientFaults[0]], succeeded: ["b"]).description.contains(
                "b carried it out, so the wall is split"))
        XCTAssertEqual(ControlError.httpStatus(of: clientFaults[2]), 422)
        XCTAssertEqual(ControlError.httpStatus(of: CancellationError()), 500)
    }

    func testARefusedConnection_namesWhatShouldBeListeningThere() async throws {
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        let origin = NodeClient(
            id: "http://127.0.0.1:9", base: "http://127.0.0.1:9", wall: "w", http: http,
            timeout: MediaTime(value: 2, timescale: 1))
        do {
            _ = try await origin.content()
            XCTFail("port 9 answered")
        } catch {
            XCTAssertTrue(
                "\(error)".contains("is the control daemon (wallctl serve) or a push's origin running there?"),
                "\(error)")
        }
        try await http.shutdown()
    }
}
