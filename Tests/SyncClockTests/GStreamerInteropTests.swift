import Foundation
import LockstepNet
import LockstepTime
import TestSupport
import XCTest

@testable import SyncClock

/// Stock GStreamer on the other end (GstNetTimeProvider, GstNetClientClock), through
/// scripts/gst-netclock.py.
final class GStreamerInteropTests: XCTestCase {
    override func setUp() async throws {
        guard ChildProcess.hasGStreamerPython else {
            throw XCTSkip(
                "/usr/bin/python3 lacks GStreamer's bindings (python3-gi, gir1.2-gstreamer-1.0): run make setup")
        }
    }

    func testOurClient_locksToAStockGstNetTimeProvider() async throws {
        let provider = try ChildProcess(
            "/usr/bin/python3", [ChildProcess.gstNetClockScript, "provider", "--port", "0", "--duration", "30"])
        let ready = try XCTUnwrap(provider.readJSON(), "the provider did not start")
        let port = try XCTUnwrap(ready["port"] as? Int)
        let client = SyncClockClient(
            server: Endpoint(host: "127.0.0.1", port: UInt16(port)), configuration: .init(format: .gstreamer),
            clock: .monotonic)
        try await LoopbackClock.following(client) {
            _ = try await client.waitUntilLocked(timeout: MediaTime(value: 5, timescale: 1))
            // The provider serves GStreamer's system clock: CLOCK_MONOTONIC itself.
            let (error, bound) = LoopbackClock.error(of: client) { $0 }
            XCTAssertLessThanOrEqual(abs(error), bound)
            XCTAssertLessThan(abs(error), 1_000_000)
        }
        XCTAssertGreaterThan(client.status.counters.samplesUsed, 8)
    }

    func testStockGstNetClientClock_locksToOurServer() throws {
        let server = LoopbackClock.server()
        let address = try server.start()[0]
        defer { server.stop() }
        let client = try ChildProcess(
            "/usr/bin/python3",
            [
                ChildProcess.gstNetClockScript, "client", "--port", String(address.port), "--duration", "5",
                "--interval", "50",
            ])
        var settled: [Int64] = []
        while let sample = client.readJSON() {
            guard let mono = sample["monoNs"] as? Int64, let time = sample["clockNs"] as? Int64,
                let elapsed = sample["elapsedNs"] as? Int64, elapsed > 3_000_000_000
            else { continue }
            XCTAssertEqual(sample["synced"] as? Bool, true)
            settled.append(time - LoopbackClock.masterClock.localNanoseconds(atMonotonic: mono))
        }
        XCTAssertGreaterThan(settled.count, 20, "samples after GStreamer's own settling time")
        XCTAssertLessThan(settled.map { abs($0) }.max() ?? .max, 1_000_000, "within 1 ms of the master")
        // Once synced GstNetClientClock polls about once a second.
        XCTAssertGreaterThan(server.statistics.gstreamerReplies, 4)
    }
}
