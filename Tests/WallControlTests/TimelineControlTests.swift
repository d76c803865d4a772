import LockstepTime
import XCTest

@testable import WallControl

/// TimelineControl's pure decisions, with no node.
final class TimelineControlTests: XCTestCase {
    private func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }

    func testARequestedTime_isHeldToTheHorizon_andNeverBeforeTheLead() throws {
        let earliest = seconds(1_000)
        XCTAssertEqual(
            try TimelineControl.requestedTime(seconds(990), earliest: earliest, horizon: seconds(300), "cue"), earliest,
            "a time already past is taken at the lead")
        XCTAssertEqual(
            try TimelineControl.requestedTime(seconds(1_200), earliest: earliest, horizon: seconds(300), "cue"),
            seconds(1_200))
        // An OSC time tag nine years ahead.
        XCTAssertThrowsError(
            try TimelineControl.requestedTime(
                earliest + seconds(9 * 365 * 86_400), earliest: earliest, horizon: seconds(300), "cue intro")
        ) { error in
            XCTAssertEqual(
                "\(error)", "cue intro: the time asked for is 283824000 s ahead, past start-horizon (300 s)")
        }
    }
}
