import Foundation
import WallCalibration

/// A wall of screens showing the calibration pattern, each with its own input lag, vblank phase
/// and (optionally) scan-out, as the camera sees it: the truth calibrate must find.
struct SimulatedWall {
    var tiles: [PatternCanvas.Tile]
    /// The canvas's width over its height.
    var aspect: Double
    /// Per screen: from the frame's due time to the first vblank that shows it is lag, then the
    /// wait for the screen's next refresh (its vblank phase, free running).
    var lags: [Double]
    var vblankPhases: [Double]
    /// The screens' refresh period, and the pattern's frame period.
    var refresh = 1.0 / 60
    /// How long each screen takes to scan from its top row to its bottom row (0: every row at once).
    var scanOut = 0.0

    /// When screen `index` starts showing frame 0 at its top row: lag, then the next vblank.
    func start(_ index: Int) -> Double {
        let lag = lags[index]
        let wait = (vblankPhases[index] - lag).truncatingRemainder(dividingBy: refresh)
        return lag + (wait < 0 ? wait + refresh : wait)
    }

    /// Each screen's start less the mean of all: the offsets calibrate should report.
    var offsets: [Double] {
        let starts = tiles.indices.map(start)
        let mean = starts.reduce(0, +) / Double(starts.count)
        return starts.map { $0 - mean }
    }
}

/// A camera filming a simulated wall into an H.264 file: perspective, exposure, rolling shutter,
/// blur, sensor noise, its own clock, and a frame rate that is not a multiple of the screens'.
struct SimulatedCamera {
    var width = 512
    var height = 288
    /// Frames per second, as a fraction.
    var rate = (numerator: 240_000, denominator: 1001)
    var seconds = 8.0
    /// Where the canvas's corners land in the picture: top left, top right, bottom right, bottom left.
    var corners: [(x: Double, y: Double)] = [(70, 40), (452, 56), (440, 250), (84, 236)]
    /// From the top row's read to the bottom row's.
    var readout = 3.5e-3
    /// Each row's exposure.
    var exposure = 2e-3
    /// The wall's time at the camera's first frame, and how fast the camera's clock runs against it.
    var start = 1.234
    var clockError = 60e-6
    /// Box blurs of radius 1 over the picture (defocus, the lens).
    var blurs = 2
    /// The noise's standard deviation, in luma levels.
    var noise = 3.0
    /// The camera held upside down: the sensor reads the scene's bottom row first.
    var upsideDown = false
    var seed: UInt64 = 1

    var frameRate: Double { Double(rate.numerator) / Double(rate.denominator) }

    /// Films the wall into `path` (H.264, yuv420p, through the ffmpeg command).
    func film(_ wall: SimulatedWall, to path: String) throws {
        guard let homography = Homography(unitSquareTo: corners), let inverse = homography.inverse() else {
            throw CocoaError(.featureUnsupported)
        }
        let codeCount = PatternCanvas.codeCount
        // What each pixel sees: the tile and pattern element, and how far down its screen it is.
        var codes = [Int32](repeating: -1, count: width * height)
        var screenRows = [Double](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let (sx, sy) = upsideDown ? (width - 1 - x, height - 1 - y) : (x, y)
                let point = inverse.map(u: Double(sx), v: Double(sy))
                guard let (tile, code) = PatternCanvas.code(wall.tiles, x: point.x, y: point.y) else { continue }
                codes[y * width + x] = Int32(tile * codeCount + code)
                let t = wall.tiles[tile]
                screenRows[y * width + x] = (point.y - t.y) / t.height
            }
        }
        let levels = (0..<CalibrationPattern.period).map { PatternCanvas.levels(wall.tiles, frame: $0).map(Double.init) }
        let starts = wall.tiles.indices.map(wall.start)
        let encoder = try RawVideoEncoder(path: path, width: width, height: height, rate: rate)
        var random = seed
        var picture = [Double](repeating: 0, count: width * height)
        var scratch = picture
        var bytes = [UInt8](repeating: 0, count: width * height)
        let frames = Int(seconds * frameRate)
        for k in 0..<frames {
            let cameraTime = Double(k) / frameRate
            picture.withUnsafeMutableBufferPointer { out in
                codes.withUnsafeBufferPointer { codes in
                    for y in 0..<height {
                        // The wall's time at the middle of this row's exposure.
                        let rowTime = start + (cameraTime + readout * Double(y) / Double(height - 1)) * (1 + clockError)
                        for x in 0..<width {
                            let index = y * width + x
                            let code = Int(codes[index])
                            guard code >= 0 else {
                                out[index] = 24
                                continue
                            }
                            let tile = code / codeCount
                            let shown = starts[tile] + wall.scanOut * screenRows[index]
                            let first = ((rowTime - exposure / 2 - shown) / wall.refresh).rounded(.down)
                            let last = ((rowTime + exposure / 2 - shown) / wall.refresh).rounded(.down)
                            let a = levels[Self.positive(Int(first))][code]
                            if first == last {
                                out[index] = a
                            } else {
                                let change = shown + last * wall.refresh
                                let after = (rowTime + exposure / 2 - change) / exposure
                                out[index] = a * (1 - after) + levels[Self.positive(Int(last))][code] * after
                            }
                        }
                    }
                }
            }
            for _ in 0..<blurs { Self.blur(&picture, &scratch, width: width, height: height) }
            for index in 0..<bytes.count {
                // Four uniforms: close enough to a normal for sensor noise.
                var sum = 0.0
                for _ in 0..<4 {
                    random = random &* 6364136223846793005 &+ 1442695040888963407
                    sum += Double(random >> 11) / Double(1 << 53) - 0.5
                }
                let value = picture[index] * 0.85 + 16 + sum * noise * 1.732
                bytes[index] = UInt8(max(0, min(255, value.rounded())))
            }
            try encoder.write(bytes)
        }
        try encoder.finish()
    }

    static func positive(_ frame: Int) -> Int {
        ((frame % CalibrationPattern.period) + CalibrationPattern.period) % CalibrationPattern.period
    }

    /// A 3 × 3 box blur.
    static func blur(_ picture: inout [Double], _ scratch: inout [Double], width: Int, height: Int) {
        for y in 0..<height {
            for x in 0..<width {
                let left = picture[y * width + max(0, x - 1)]
                let right = picture[y * width + min(width - 1, x + 1)]
                scratch[y * width + x] = (left + picture[y * width + x] + right) / 3
            }
        }
        for y in 0..<height {
            for x in 0..<width {
                let up = scratch[max(0, y - 1) * width + x]
                let down = scratch[min(height - 1, y + 1) * width + x]
                picture[y * width + x] = (up + scratch[y * width + x] + down) / 3
            }
        }
    }
}
