import WallCalibration
import XCTest

final class CalibrationPatternTests: XCTestCase {
    func testDecode_readsBackEveryScreenAndFrame() {
        for screen in 0..<CalibrationPattern.screenCount {
            for frame in 0..<CalibrationPattern.period {
                let cells = (0..<CalibrationPattern.cellCount).map {
                    CalibrationPattern.cellIsWhite($0, screen: screen, frame: frame + 3 * CalibrationPattern.period)
                }
                let decoded = CalibrationPattern.decode(whiteCells: cells)
                XCTAssertEqual(decoded?.screen, screen)
                XCTAssertEqual(decoded?.frame, frame)
            }
        }
    }

    func testNextFrame_changesOneCell_soACameraCatchingTheChangeSeesOneGreyCell() {
        for frame in 0..<(2 * CalibrationPattern.period) {
            let changed = (0..<CalibrationPattern.cellCount).filter {
                CalibrationPattern.cellIsWhite($0, screen: 5, frame: frame)
                    != CalibrationPattern.cellIsWhite($0, screen: 5, frame: frame + 1)
            }
            XCTAssertEqual(changed.count, 1, "frame \(frame)")
        }
    }

    func testUpsideDown_neverReadsAsAFrame() {
        // The band turned half a turn: cell (row, column) shows (1 - row, 7 - column).
        for screen in [0, 1, 42, 63] {
            for frame in 0..<CalibrationPattern.period {
                let cells = (0..<CalibrationPattern.cellCount).map {
                    CalibrationPattern.cellIsWhite(CalibrationPattern.cellCount - 1 - $0, screen: screen, frame: frame)
                }
                XCTAssertNil(CalibrationPattern.decode(whiteCells: cells))
            }
        }
    }

    func testElements_ringAtTheEdge_cellsInside_markMoves() {
        XCTAssertEqual(CalibrationPattern.element(u: 0.01, v: 0.5), .black, "a margin that keeps touching rings apart")
        XCTAssertEqual(CalibrationPattern.element(u: 0.04, v: 0.5), .white)
        XCTAssertEqual(CalibrationPattern.element(u: 0.5, v: 0.96), .white)
        XCTAssertEqual(CalibrationPattern.element(u: 0.08, v: 0.5), .black, "a black gap inside the ring")
        XCTAssertEqual(CalibrationPattern.element(u: 0.12, v: 0.16), .cell(band: 0, index: 0))
        XCTAssertEqual(CalibrationPattern.element(u: 0.88, v: 0.84), .cell(band: 1, index: 15))
        let marks = (0..<4).map { frame in
            (0..<100).compactMap { step -> Int? in
                let u = Double(step) / 100
                return CalibrationPattern.level(of: CalibrationPattern.element(u: u, v: 0.5), screen: 0, frame: frame)
                    == CalibrationPattern.white && u > 0.06 && u < 0.94 ? step : nil
            }.first
        }
        XCTAssertEqual(marks.compactMap { $0 }.count, 4)
        XCTAssertEqual(marks, marks.compactMap { $0 }.sorted(), "the mark moves right frame by frame")
    }

    func testHomography_mapsTheCorners_andBack() throws {
        let corners: [(x: Double, y: Double)] = [(10, 20), (300, 35), (280, 200), (25, 180)]
        let map = try XCTUnwrap(Homography(unitSquareTo: corners))
        for ((u, v), corner) in zip([(0.0, 0.0), (1, 0), (1, 1), (0, 1)], corners) {
            let point = map.map(u: u, v: v)
            XCTAssertEqual(point.x, corner.x, accuracy: 1e-9)
            XCTAssertEqual(point.y, corner.y, accuracy: 1e-9)
        }
        let inverse = try XCTUnwrap(map.inverse())
        let middle = map.map(u: 0.3, v: 0.7)
        let back = inverse.map(u: middle.x, v: middle.y)
        XCTAssertEqual(back.x, 0.3, accuracy: 1e-9)
        XCTAssertEqual(back.y, 0.7, accuracy: 1e-9)
        XCTAssertNil(Homography(unitSquareTo: [(0, 0), (1, 1), (2, 2), (3, 3)]), "corners in a line")
    }

    func testScreenFinder_findsEachTileOfARenderedCanvas() {
        // Tiles that touch, as on a wall without bezel gaps.
        let tiles = (0..<4).map { PatternCanvas.Tile(x: Double($0 % 2) / 2, y: Double($0 / 2) / 2, width: 0.5, height: 0.5, screen: $0) }
        let canvas = PatternCanvas(width: 640, height: 360, tiles: tiles)
        // The mean of a second: the rings are steady.
        var mean = [Double](repeating: 0, count: 640 * 360)
        for frame in 0..<60 { for (index, value) in canvas.render(frame: frame).enumerated() { mean[index] += Double(value) / 60 } }
        let quads = ScreenFinder.find(in: mean, width: 640, height: 360)
        XCTAssertEqual(quads.count, 4)
        let m = CalibrationPattern.margin
        for (quad, tile) in zip(quads, tiles) {
            XCTAssertEqual(quad.corners[0].x, (tile.x + m * tile.width) * 640, accuracy: 1.5)
            XCTAssertEqual(quad.corners[0].y, (tile.y + m * tile.height) * 360, accuracy: 1.5)
            XCTAssertEqual(quad.corners[2].x, (tile.x + (1 - m) * tile.width) * 640 - 1, accuracy: 1.5)
            XCTAssertEqual(quad.corners[2].y, (tile.y + (1 - m) * tile.height) * 360 - 1, accuracy: 1.5)
        }
        XCTAssertTrue(ScreenFinder.find(in: [Double](repeating: 30, count: 640 * 360), width: 640, height: 360).isEmpty)
    }
}
