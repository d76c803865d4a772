import XCTest

@testable import WallCalibration

/// The display-latency a film gives each node: the earliest screen keeps its own, each later one
/// gets its offset from the earliest on top; nodes the film did not show are left alone.
final class GlassCorrectionTests: XCTestCase {
    private func result(_ offsets: [(screen: Int, offset: Double)]) -> GlassTiming.Result {
        GlassTiming.Result(
            screens: offsets.map {
                GlassTiming.ScreenOffset(screen: $0.screen, offset: $0.offset, uncertainty: 0.0004, reads: 40)
            },
            readout: 0.012, scanOut: nil, framePeriods: [1.0 / 60], bands: [], assumption: .screensShowRowsAtOnce)
    }

    func testLaterScreens_getTheirOffsetFromTheEarliest_onTopOfWhatTheyHave() throws {
        let correction = try GlassCorrection(
            result([(0, -0.010), (1, 0.0134), (2, -0.0019)]),
            nodes: [(id: "left", latency: 0), (id: "middle", latency: 0.010), (id: "right", latency: 0.002)])
        XCTAssertEqual(correction.screens.map(\.node), ["left", "middle", "right"])
        XCTAssertEqual(correction.latencies["left"]!, 0, accuracy: 1e-12, "the earliest keeps its own")
        XCTAssertEqual(correction.latencies["middle"]!, 0.010 + 0.0234, accuracy: 1e-12)
        XCTAssertEqual(correction.latencies["right"]!, 0.002 + 0.0081, accuracy: 1e-12)
        XCTAssertEqual(correction.screens[1].latency, 0.010)
        XCTAssertTrue(correction.unseen.isEmpty)
    }

    func testNodesTheFilmDidNotShow_areNamed_andGetNoChange() throws {
        let correction = try GlassCorrection(
            result([(1, 0.001), (3, -0.001)]),
            nodes: [(id: "a", latency: 0.005), (id: "b", latency: 0), (id: "c", latency: 0), (id: "d", latency: 0)])
        XCTAssertEqual(correction.unseen, ["a", "c"])
        XCTAssertEqual(Set(correction.latencies.keys), ["b", "d"])
        XCTAssertEqual(correction.latencies["b"]!, 0.002, accuracy: 1e-12)
    }

    func testAScreenNumberPastTheConfigsNodes_isRefused_namingBoth() {
        XCTAssertThrowsError(try GlassCorrection(result([(0, 0), (4, 0.002)]), nodes: [(id: "a", latency: 0)])) {
            XCTAssertEqual(
                "\($0)",
                "the film shows screen number 5, but the config has 1 node: was the pattern shown from another config?")
        }
    }
}
