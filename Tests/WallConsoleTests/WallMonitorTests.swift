import Foundation
import Hummingbird
import HummingbirdTesting
import LockstepLocks
import LockstepTime
import WallConsole
import WallControl
import WallProtocol
import XCTest

/// The daemon asks the nodes nothing while no console is open: its watch starts with the first
/// console and stops a grace period after the last (a node here is a server that counts requests).
final class WallMonitorTests: XCTestCase {
    func testMonitor_asksNothingUntilAConsoleOpens_andStopsAfterTheLastCloses() async throws {
        let hits = Mutex(0)
        let router = Router()
        router.get("/status") { _, _ -> Response in
            hits.withLock { $0 += 1 }
            return Response(status: .serviceUnavailable)
        }
        try await Application(router: router).test(.live) { client in
            let port = try XCTUnwrap(client.port)
            let config = try WallConfig.consoleTest("monitor", nodes: [("a", port)])

            let wall = try Wall(config: config, waitLimit: MediaTime(value: 1, timescale: 1))
            let monitor = WallMonitor(wall: wall, idleGrace: .milliseconds(500))
            let running = Task { await monitor.run() }
            let count = { hits.withLock { $0 } }

            try await Task.sleep(for: .seconds(1))
            XCTAssertEqual(count(), 0, "no console, no request")
            let info = try JSONDecoder().decode(
                WallInfo.self,
                from: Data(
                    (#"{"name":"monitor","canvasWidth":160,"canvasHeight":90,"tiles":[],"playlist":[],"loops":true,"#
                        + #""cues":{},"schedule":[],"csrf":"","uploadLimitBytes":0}"#).utf8))
            // The stream is held as a page holds it: dropping it closes the console.
            let (id, events) = monitor.subscribe(wallInfo: info)
            try await Task.sleep(for: .seconds(1))
            XCTAssertEqual(monitor.consoles, 1)
            XCTAssertGreaterThanOrEqual(count(), 4, "a status every 150 ms while a console is open")
            let node = try XCTUnwrap(monitor.view("a"))
            XCTAssertFalse(node.reachable, "a node answering 503 is not taken for reachable")
            XCTAssertNotNil(node.polledAtUnixMs)

            withExtendedLifetime(events) { monitor.unsubscribe(id) }
            try await Task.sleep(for: .milliseconds(1500))
            let stopped = count()
            try await Task.sleep(for: .seconds(1))
            XCTAssertEqual(count(), stopped, "no request once the grace after the last console is over")

            // A console opened after the pause is greeted with nothing seen before it: the node is
            // being asked, not shown as it was.
            let (again, stream) = monitor.subscribe(wallInfo: info)
            var iterator = stream.makeAsyncIterator()
            let first = await iterator.next()
            let hello = try XCTUnwrap(first)
            XCTAssertTrue(hello.hasPrefix("event: hello\n"), hello)
            XCTAssertFalse(hello.contains("polledAtUnixMs"), "the view before the pause: \(hello)")
            monitor.unsubscribe(again)

            running.cancel()
            await running.value
            try await wall.shutdown()
        }
    }
}
