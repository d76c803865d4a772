import LockstepTime
import WallProtocol
import XCTest

final class TileLayoutTests: XCTestCase {
    private func config(canvas: CanvasSize, tiles: [(String, PixelRect)]) -> WallConfig {
        WallConfig(
            name: "layout", clock: "127.0.0.1:5637", media: .shared(path: "/m.mp4"), canvas: canvas,
            nodes: tiles.enumerated().map { index, tile in
                NodeConfig(id: tile.0, control: "127.0.0.1:\(7700 + index)", tile: tile.1)
            })
    }

    /// configs/wall-2x2-1080p.yaml's layout: bezel strips between the screens, nothing overlapping.
    func testBezelCompensatedWall_namesTheStripsNoScreenShows() {
        let layout = TileLayout(
            config: config(
                canvas: CanvasSize(width: 3888, height: 2208),
                tiles: [
                    ("tl", PixelRect(x: 0, y: 0, width: 1920, height: 1080)),
                    ("tr", PixelRect(x: 1968, y: 0, width: 1920, height: 1080)),
                    ("bl", PixelRect(x: 0, y: 1128, width: 1920, height: 1080)),
                    ("br", PixelRect(x: 1968, y: 1128, width: 1920, height: 1080)),
                ]))
        XCTAssertEqual(layout.overlaps, [])
        XCTAssertEqual(layout.uncoveredPixels, 3888 * 2208 - 4 * 1920 * 1080)
        XCTAssertEqual(layout.uncovered.first, PixelRect(x: 0, y: 1080, width: 3888, height: 48), "the horizontal strip")
    }

    func testOverlappingTiles_areNamedWithTheirCommonArea() {
        let layout = TileLayout(
            config: config(
                canvas: CanvasSize(width: 200, height: 100),
                tiles: [
                    ("left", PixelRect(x: 0, y: 0, width: 110, height: 100)),
                    ("right", PixelRect(x: 100, y: 0, width: 100, height: 100)),
                ]))
        XCTAssertEqual(layout.overlaps.map(\.first), ["left"])
        XCTAssertEqual(layout.overlaps.map(\.second), ["right"])
        XCTAssertEqual(layout.overlaps.first?.area, PixelRect(x: 100, y: 0, width: 10, height: 100))
        XCTAssertEqual(layout.uncovered, [], "the canvas is covered")
    }
}
