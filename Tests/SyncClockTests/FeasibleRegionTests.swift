import XCTest

@testable import SyncClock

final class FeasibleRegionTests: XCTestCase {
    func testClipping_keepsOnlyLinesThroughEveryConstraint() {
        var region = FeasibleRegion(offsets: -100...100, maximumRate: 50)
        // Offsets within [-10, 10] at x = 0 and within [0, 20] at x = 1.
        region.keepBelow(10, at: 0)
        region.keepAbove(-10, at: 0)
        region.keepBelow(20, at: 1)
        region.keepAbove(0, at: 1)
        XCTAssertFalse(region.isEmpty)
        XCTAssertEqual(region.range(at: 0).lowerBound, -10, accuracy: 1e-9)
        XCTAssertEqual(region.range(at: 0).upperBound, 10, accuracy: 1e-9)
        XCTAssertEqual(region.range(at: 1).lowerBound, 0, accuracy: 1e-9)
        XCTAssertEqual(region.range(at: 1).upperBound, 20, accuracy: 1e-9)
        // Extrapolating to x = 2, the extreme lines are (-10, +30) and (10, -10).
        XCTAssertEqual(region.range(at: 2).lowerBound, -10, accuracy: 1e-9)
        XCTAssertEqual(region.range(at: 2).upperBound, 50, accuracy: 1e-9)
        XCTAssertEqual(region.centroid.a, 0, accuracy: 1e-9)
        XCTAssertEqual(region.centroid.b, 10, accuracy: 1e-9)
    }

    func testClipping_whenConstraintsContradict_leavesNothing() {
        var region = FeasibleRegion(offsets: -100...100, maximumRate: 50)
        region.keepBelow(-5, at: 0)
        region.keepAbove(5, at: 0)
        XCTAssertTrue(region.isEmpty)
    }

    func testCentroid_whenRegionCollapsesToASegment_isTheMiddle() {
        var region = FeasibleRegion(offsets: -100...100, maximumRate: 50)
        region.keepBelow(3, at: 0)
        region.keepAbove(3, at: 0)
        XCTAssertFalse(region.isEmpty)
        XCTAssertEqual(region.centroid.a, 3, accuracy: 1e-6)
        XCTAssertEqual(region.centroid.b, 0, accuracy: 1e-6)
    }
}
