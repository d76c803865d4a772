/// The calibration clip a wall plays while the camera films it: the pattern over the canvas, at
/// the screens' frame rate, a whole number of the pattern's periods long so that it loops without
/// a jump in the frame number.
public enum PatternClip {
    /// Frames in the clip: eight of the pattern's periods (8.5 s at 60 fps).
    public static let frames = 8 * CalibrationPattern.period

    /// Renders `canvas` into `path` at `rate` frames a second, a keyframe each second.
    public static func render(_ canvas: PatternCanvas, rate: Int, to path: String) throws {
        let encoder = try RawVideoEncoder(
            path: path, width: canvas.width, height: canvas.height, rate: (rate, 1), quality: 12, keyframes: rate)
        for frame in 0..<frames { try encoder.write(canvas.render(frame: frame)) }
        try encoder.finish()
    }

    /// The clip's size for a canvas of `width` × `height`: the canvas scaled down to fit 1920 × 1080
    /// (the pattern's cells are large; a screen scales its tile back up), both sides even.
    public static func size(canvasWidth width: Int, height: Int) -> (width: Int, height: Int) {
        let scale = min(1, 1920 / Double(width), 1080 / Double(height))
        func even(_ value: Double) -> Int { max(2, Int(value / 2) * 2) }
        return (even(Double(width) * scale), even(Double(height) * scale))
    }
}
