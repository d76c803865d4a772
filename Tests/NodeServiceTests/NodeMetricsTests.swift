import LockstepTime
import NodeService
import WallProtocol
import XCTest

final class NodeMetricsTests: XCTestCase {
    /// Each node measured directly has its own gauges, labelled with its id; one no longer measured
    /// reads NaN (nan) rather than its last figure.
    func testPeerClocks_areGaugesPerPeer_andNaNOnceNoLongerMeasured() {
        let metrics = NodeMetrics(wall: "lobby", node: "a")
        let measured = status(peers: [
            PeerClockReport(
                node: "b", offset: MediaTime(nanoseconds: -20_000), guaranteedErrorBound: MediaTime(nanoseconds: 30_000)
            ),
            PeerClockReport(
                node: "c", offset: MediaTime(nanoseconds: 400_000), guaranteedErrorBound: MediaTime(nanoseconds: 50_000)
            ),
        ])
        let text = metrics.render(status: measured, process: nil)
        XCTAssertTrue(text.contains(#"lockstep_clock_peer_bound_seconds{wall="lobby",node="a",peer="b"} 5e-05"#), text)
        XCTAssertTrue(
            text.contains(#"lockstep_clock_peer_offset_seconds{wall="lobby",node="a",peer="c"} 0.0004"#), text)
        let later = metrics.render(status: status(peers: [measured.clock.peers![0]]), process: nil)
        XCTAssertTrue(later.contains(#"lockstep_clock_peer_bound_seconds{wall="lobby",node="a",peer="c"} nan"#), later)
    }

    /// The machine's health as gauges in base units; what the machine does not say reads NaN.
    func testMachineHealth_isGauges_NaNWhereTheMachineDoesNotSay() {
        let metrics = NodeMetrics(wall: "lobby", node: "a")
        var reported = status(peers: [])
        var health = MachineHealth(version: "1.0", configSHA256: "c0ffee", cores: 4)
        health.cpuBusy = 0.25
        health.memoryTotalBytes = 8_000_000_000
        health.storeFreeBytes = 500_000_000
        reported.health = health
        let text = metrics.render(status: reported, process: nil)
        for line in [
            #"lockstep_machine_cpu_busy_ratio{wall="lobby",node="a"} 0.25"#,
            #"lockstep_machine_cores{wall="lobby",node="a"} 4.0"#,
            #"lockstep_machine_memory_total_bytes{wall="lobby",node="a"} 8000000000.0"#,
            #"lockstep_store_free_bytes{wall="lobby",node="a"} 500000000.0"#,
            #"lockstep_machine_temperature_celsius{wall="lobby",node="a"} nan"#,
            #"lockstep_display_refresh_hertz{wall="lobby",node="a"} nan"#,
        ] {
            XCTAssertTrue(text.contains(line), "\(line) in\n\(text)")
        }
    }

    private func status(peers: [PeerClockReport]) -> NodeStatus {
        NodeStatus(
            id: "a", masterTime: .zero,
            clock: ClockReport(state: .locked, usable: true, server: "127.0.0.1:5637", peers: peers),
            player: PlayerReport(
                status: "readyToPlay", media: nil, itemStatus: nil, timeControlStatus: "paused", waitingReason: nil,
                rate: 0, position: .zero, prerolled: false, framesPresented: 0, framesLate: 0, framesDropped: 0,
                renderThread: "SCHED_OTHER", error: nil))
    }
}
