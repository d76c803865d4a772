import Foundation
import WallCalibration
import XCTest

/// Calibrate against synthetic camera videos of a simulated wall whose screens' lags and vblank
/// phases are known: the offsets it recovers, against the truth.
final class GlassTimingTests: XCTestCase {
    /// A 2x2 wall with bezels (the config's 3888 × 2208 canvas), its screens 8 to 50 ms apart.
    static let wall = SimulatedWall(
        tiles: [
            PatternCanvas.Tile(x: 0, y: 0, width: 1920 / 3888, height: 1080 / 2208, screen: 0),
            PatternCanvas.Tile(x: 1968 / 3888, y: 0, width: 1920 / 3888, height: 1080 / 2208, screen: 1),
            PatternCanvas.Tile(x: 0, y: 1128 / 2208, width: 1920 / 3888, height: 1080 / 2208, screen: 2),
            PatternCanvas.Tile(x: 1968 / 3888, y: 1128 / 2208, width: 1920 / 3888, height: 1080 / 2208, screen: 3),
        ], aspect: 3888 / 2208, lags: [0.0, 0.0234, 0.0081, 0.0417], vblankPhases: [0.003, 0.011, 0.0072, 0.0153])

    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("glass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        // LOCKSTEP_KEEP_VIDEOS=1 keeps the synthetic videos, to look at.
        if ProcessInfo.processInfo.environment["LOCKSTEP_KEEP_VIDEOS"] == nil { try? FileManager.default.removeItem(at: folder) }
    }

    func calibrate(_ wall: SimulatedWall, cameras: [SimulatedCamera]) throws -> GlassTiming.Result {
        var videos: [GlassTiming.Video] = []
        for (index, camera) in cameras.enumerated() {
            let path = folder.appendingPathComponent("camera-\(index).mp4").path
            try camera.film(wall, to: path)
            videos.append(try CameraAnalysis.reads(of: CameraVideo(path: path)))
        }
        return try GlassTiming.solve(videos, framePeriod: wall.refresh)
    }

    /// The largest error of the recovered offsets, in seconds; prints the comparison.
    func worstError(_ result: GlassTiming.Result, _ wall: SimulatedWall, label: String) -> Double {
        XCTAssertEqual(result.screens.map(\.screen), [0, 1, 2, 3], label)
        var worst = 0.0
        for (found, truth) in zip(result.screens, wall.offsets) {
            let error = abs(found.offset - truth)
            worst = max(worst, error)
            print(
                String(
                    format: "%@: screen %d offset %+.3f ms (truth %+.3f) ±%.3f, error %.3f ms, %d reads", label,
                    found.screen, found.offset * 1e3, truth * 1e3, found.uncertainty * 1e3, error * 1e3, found.reads))
        }
        for band in result.bands {
            print(
                String(
                    format: "%@: video %d screen %d band %d row %.3f start %.4f ms ±%.4f, %d reads", label, band.video,
                    band.screen, band.band, band.row, band.start * 1e3, band.halfWidth * 1e3, band.reads))
        }
        print(
            String(
                format: "%@: readout %.3f ms, worst error %.3f ms, %@", label, result.readout * 1e3, worst * 1e3,
                "\(result.assumption)"))
        return worst
    }

    func testCamera240_recoversTheOffsetsWithinAMillisecond() throws {
        var camera = SimulatedCamera()
        camera.exposure = 3.7e-3
        let result = try calibrate(Self.wall, cameras: [camera])
        XCTAssertEqual(result.framePeriods[0], 1.0 / 60 / (1 + 60e-6), accuracy: 2.5e-7, "the camera's clock runs 60 ppm slow (within 15 ppm)")
        XCTAssertEqual(result.assumption, .screensShowRowsAtOnce)
        XCTAssertLessThan(worstError(result, Self.wall, label: "240 fps"), 1e-3)
        XCTAssertEqual(result.readout, 3.5e-3, accuracy: 1e-3, "the rolling shutter's readout")
        for (found, truth) in zip(result.screens, Self.wall.offsets) {
            XCTAssertLessThanOrEqual(abs(found.offset - truth), max(found.uncertainty, 0.3e-3), "within its uncertainty")
        }
    }

    func testCamera120And60_stateTheirFigures() throws {
        var camera = SimulatedCamera()
        camera.rate = (120_000, 1001)
        camera.exposure = 7.5e-3
        camera.readout = 6e-3
        let at120 = worstError(try calibrate(Self.wall, cameras: [camera]), Self.wall, label: "120 fps")
        camera.rate = (60_000, 1001)
        camera.exposure = 15e-3
        camera.readout = 12e-3
        camera.seconds = 12
        let at60 = worstError(try calibrate(Self.wall, cameras: [camera]), Self.wall, label: "60 fps")
        XCTAssertLessThan(at120, 2e-3)
        XCTAssertLessThan(at60, 4e-3)
    }

    /// Screens that scan out top to bottom in 12 ms (most LCDs): one video cannot tell that from the
    /// camera's readout, and says so; the same wall filmed again upside down can.
    func testScanningScreens_needASecondVideoUpsideDown() throws {
        var wall = Self.wall
        wall.scanOut = 12e-3
        var upright = SimulatedCamera()
        upright.exposure = 3.7e-3
        var turned = upright
        turned.upsideDown = true
        turned.start = 31.7
        turned.seed = 2
        let alone = try calibrate(wall, cameras: [upright])
        let errorAlone = worstError(alone, wall, label: "scanning, one video")
        XCTAssertEqual(alone.assumption, .readoutUnknown, "the bands say the screens are not read at once")
        for (found, truth) in zip(alone.screens, wall.offsets) {
            XCTAssertLessThanOrEqual(abs(found.offset - truth), found.uncertainty, "the truth is within the uncertainty")
        }
        let both = try calibrate(wall, cameras: [upright, turned])
        XCTAssertEqual(both.assumption, .none)
        XCTAssertLessThan(worstError(both, wall, label: "scanning, two videos"), 1e-3)
        XCTAssertEqual(both.scanOut ?? 0, 12e-3 * 0.45, accuracy: 1e-3, "the scan-out between the bands' frame-number rows")
        XCTAssertGreaterThan(errorAlone, 0)
    }
}
