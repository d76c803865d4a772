import LockstepTime

/// One camera picture reduced to its luma, and when the camera took it (its presentation time in
/// the video).
public struct GrayFrame: Sendable {
    public var width: Int
    public var height: Int
    /// Row by row, `width` bytes each.
    public var pixels: [UInt8]
    public var time: MediaTime

    public init(width: Int, height: Int, pixels: [UInt8], time: MediaTime) {
        precondition(width > 0 && height > 0 && pixels.count == width * height)
        self.width = width
        self.height = height
        self.pixels = pixels
        self.time = time
    }

    /// The luma at (x, y) between pixel centres, bilinear; nil outside the picture.
    func sample(x: Double, y: Double) -> Double? {
        guard x >= 0, y >= 0, x <= Double(width - 1), y <= Double(height - 1) else { return nil }
        let x0 = min(Int(x), max(0, width - 2))
        let y0 = min(Int(y), max(0, height - 2))
        let fx = x - Double(x0)
        let fy = y - Double(y0)
        let x1 = min(x0 + 1, width - 1)
        let y1 = min(y0 + 1, height - 1)
        let top = Double(pixels[y0 * width + x0]) * (1 - fx) + Double(pixels[y0 * width + x1]) * fx
        let bottom = Double(pixels[y1 * width + x0]) * (1 - fx) + Double(pixels[y1 * width + x1]) * fx
        return top * (1 - fy) + bottom * fy
    }
}
