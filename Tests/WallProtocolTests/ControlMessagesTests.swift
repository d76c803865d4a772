import Foundation
import LockstepTime
import WallProtocol
import XCTest

final class ControlMessagesTests: XCTestCase {
    func testStartRequest_roundTripsThroughJSON() throws {
        let request = StartRequest(
            rate: 1, itemTime: MediaTime(value: 1001, timescale: 30000),
            hostTime: MediaTime(nanoseconds: 3_600_000_000_123))
        let decoded = try JSONDecoder().decode(StartRequest.self, from: JSONEncoder().encode(request))
        XCTAssertEqual(decoded, request)
    }

    func testMediaSource_perNodeTemplateNamesEachNodesFile() {
        XCTAssertEqual(MediaSource.perNode(template: "media/{id}.mp4").path(forNode: "left"), "media/left.mp4")
        XCTAssertEqual(MediaSource.shared(path: "a.mp4").path(forNode: "left"), "a.mp4")
    }

    func testPixelRect_normalizesAgainstTheCanvas() {
        let tile = PixelRect(x: 960, y: 540, width: 960, height: 540).normalized(
            in: CanvasSize(width: 1920, height: 1080))
        XCTAssertEqual(tile.x, 0.5)
        XCTAssertEqual(tile.y, 0.5)
        XCTAssertEqual(tile.width, 0.5)
        XCTAssertEqual(tile.height, 0.5)
    }
}
