/// Reads the frame number `make-media.sh barcode` writes in bars, from a screenshot.
///
/// Each quarter of the picture holds 14 vertical bars: black, white, then bit i of the frame
/// number in bar 2 + i. A region reads as a code only if its two marker bars are black and white
/// and every bar is clearly one or the other: a window over it, a black screen or a frame-code
/// colour reads nil.
public enum BarCode {
    static let bars = 14

    /// The code shown in the region (x, y, width, height) of an RGB24 screenshot `stride` pixels wide.
    public static func read(rgb: [UInt8], stride: Int, region: (x: Int, y: Int, width: Int, height: Int)) -> Int? {
        var bits: [Bool] = []
        for bar in 0..<bars {
            // The middle half of the bar, the middle half of the rows: away from edges and scaling.
            let left = region.x + (bar * region.width) / bars
            let right = region.x + ((bar + 1) * region.width) / bars
            let columns = (left + (right - left) / 4)..<(right - (right - left) / 4)
            let rows = (region.y + region.height / 4)..<(region.y + 3 * region.height / 4)
            guard !columns.isEmpty, !rows.isEmpty else { return nil }
            var sum = 0
            for row in rows {
                for column in columns {
                    let at = (row * stride + column) * 3
                    guard at + 2 < rgb.count else { return nil }
                    sum += Int(rgb[at]) + Int(rgb[at + 1]) + Int(rgb[at + 2])
                }
            }
            let mean = Double(sum) / Double(3 * columns.count * rows.count)
            switch mean {
            case ..<64: bits.append(false)
            case 192...: bits.append(true)
            default: return nil
            }
        }
        guard !bits[0], bits[1] else { return nil }
        return bits[2...].enumerated().reduce(0) { $0 | ($1.element ? 1 << $1.offset : 0) }
    }
}
