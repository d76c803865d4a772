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
