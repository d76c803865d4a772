import Foundation

/// A node's snapshot as the page shows it: a 24-bit BMP, which every browser draws and which needs
/// no compressor (a thumbnail is a few tens of kilobytes, fetched only when a new one is taken).
public enum Thumbnail {
    /// The BMP of a packed RGB picture, rows top first.
    public static func bmp(rgb: Data, width: Int, height: Int) -> Data {
        let rowBytes = (width * 3 + 3) & ~3
        let pixelBytes = rowBytes * height
        var data = Data(capacity: 54 + pixelBytes)
        func little(_ value: Int, _ count: Int) {
            for index in 0..<count { data.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        data.append(contentsOf: Array("BM".utf8))
        little(54 + pixelBytes, 4)
        little(0, 4)
        little(54, 4)
        little(40, 4)
        little(width, 4)
        // Negative height: rows top first, as the snapshot has them.
        little(-height, 4)
        little(1, 2)
        little(24, 2)
        little(0, 4)
        little(pixelBytes, 4)
        little(2835, 4)
        little(2835, 4)
        little(0, 8)
        let padding = [UInt8](repeating: 0, count: rowBytes - width * 3)
        rgb.withUnsafeBytes { bytes in
            for row in 0..<height {
                var line = [UInt8](repeating: 0, count: width * 3)
                for column in 0..<width {
                    let source = (row * width + column) * 3
                    guard source + 2 < bytes.count else { break }
                    // BMP keeps blue, green, red.
                    line[column * 3] = bytes[source + 2]
                    line[column * 3 + 1] = bytes[source + 1]
                    line[column * 3 + 2] = bytes[source]
                }
                data.append(contentsOf: line)
                data.append(contentsOf: padding)
            }
        }
        return data
    }
}
