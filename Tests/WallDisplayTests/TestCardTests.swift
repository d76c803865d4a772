import WallDisplay
import XCTest

final class TestCardTests: XCTestCase {
    private let canvas = (width: 1920, height: 1080)

    /// Whether screen pixel (`x`, `y`) of `card` shows the wall layer (not the outline, not the bars).
    private func showsWall(_ card: TestCard, x: Int, y: Int) -> Bool {
        let border = card.outlineWidth
        return x >= border && y >= border && x < card.output.width - border && y < card.output.height - border
            && !card.barRows.contains(y)
    }

    func testWallLayer_ofTwoTiles_composesIntoTheWholeWall() {
        // The whole canvas on one 960x540 screen, and its halves on two 480x540 screens: same scale.
        let whole = TestCard(
            canvas: canvas, tile: DisplayRect(x: 0, y: 0, width: 1920, height: 1080), output: (960, 540), index: 0)
        let left = TestCard(
            canvas: canvas, tile: DisplayRect(x: 0, y: 0, width: 960, height: 1080), output: (480, 540), index: 0)
        let right = TestCard(
            canvas: canvas, tile: DisplayRect(x: 960, y: 0, width: 960, height: 1080), output: (480, 540), index: 1)
        var compared = 0
        var lines = 0
        for y in 0..<540 {
            for x in 0..<960 {
                let (tile, local) = x < 480 ? (left, x) : (right, x - 480)
                guard showsWall(tile, x: local, y: y), showsWall(whole, x: x, y: y) else { continue }
                let expected = whole.color(x: x, y: y)
                let shown = tile.color(x: local, y: y)
                guard shown == expected else {
                    return XCTFail("pixel (\(x), \(y)) shows \(shown) on its tile, \(expected) on the whole wall")
                }
                compared += 1
                if expected != TestCard.background { lines += 1 }
            }
        }
        XCTAssertGreaterThan(compared, 960 * 540 / 2)
        // Lines are drawn (grid, diagonals, circle), but the card is mostly background.
        XCTAssertGreaterThan(lines, 10 * 540)
        XCTAssertLessThan(lines, compared / 3)
    }

    func testDiagonals_runThroughTheJoinBetweenScreens() {
        // Two screens side by side at half the canvas scale: the falling diagonal leaves the left
        // screen's last column in the row where it enters the right screen's first column (±1).
        let left = TestCard(
            canvas: canvas, tile: DisplayRect(x: 0, y: 0, width: 960, height: 1080), output: (480, 540), index: 0)
        let right = TestCard(
            canvas: canvas, tile: DisplayRect(x: 960, y: 0, width: 960, height: 1080), output: (480, 540), index: 1)
        // Just inside the outline: the diagonals at the join are at row 270 (centre of the canvas).
        let border = left.outlineWidth
        let leftRows = (0..<540).filter { left.color(x: 479 - border, y: $0) == TestCard.diagonalColor }
        let rightRows = (0..<540).filter { right.color(x: border, y: $0) == TestCard.diagonalColor }
        XCTAssertFalse(leftRows.isEmpty)
        XCTAssertFalse(rightRows.isEmpty)
        // Both diagonals cross the vertical centre line at the canvas centre, 270 rows down.
        for row in leftRows + rightRows {
            XCTAssertEqual(Double(row), 270, accuracy: Double(border) + 2, "\(leftRows) \(rightRows)")
        }
    }

    func testOutline_isEachScreensOwnColour_aroundItsEdge() {
        let tile = DisplayRect(x: 0, y: 0, width: 960, height: 540)
        let first = TestCard(canvas: canvas, tile: tile, output: (640, 360), index: 0)
        let second = TestCard(canvas: canvas, tile: tile, output: (640, 360), index: 1)
        XCTAssertEqual(first.outlineWidth, 6)
        XCTAssertFalse(first.outlineColor == second.outlineColor)
        for (x, y) in [(0, 0), (639, 0), (0, 359), (639, 359), (5, 180), (634, 180), (320, 5), (320, 354)] {
            XCTAssertTrue(first.color(x: x, y: y) == first.outlineColor, "(\(x), \(y))")
        }
        XCTAssertFalse(first.color(x: 6, y: 100) == first.outlineColor)
        // The bars: white at the left, black at the right, across the band.
        let row = first.barRows.lowerBound
        XCTAssertTrue(first.color(x: 10, y: row) == TestCard.barColors[0])
        XCTAssertTrue(first.color(x: 630, y: row) == TestCard.barColors[7])
        XCTAssertEqual(first.render().count, 640 * 360 * 3)
    }

    func testCard_withoutArea_rendersNothing() {
        let card = TestCard(
            canvas: canvas, tile: DisplayRect(x: 0, y: 0, width: 0, height: 540), output: (640, 360), index: 0)
        XCTAssertFalse(card.isDrawable)
        XCTAssertEqual(card.render(), [])
    }
}
