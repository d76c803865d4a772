internal import CZlib
import Foundation

/// An 8-bit RGB picture, and its PNG encoding (signature, IHDR, tEXt, one zlib IDAT, IEND).
public struct PNGImage: Sendable {
    public let width: Int
    public let height: Int
    /// Packed RGB, rows without padding.
    public private(set) var pixels: Data
    /// Text chunks (keyword, Latin-1 text): what the picture shows, for `exiftool` or `identify -verbose`.
    public var text: [(keyword: String, text: String)] = []

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = Data(count: width * height * 3)
    }

    /// Copies a `sourceWidth`×`sourceHeight` RGB picture with its top-left corner at (x, y),
    /// clipped to this picture.
    public mutating func paste(_ rgb: Data, width sourceWidth: Int, height sourceHeight: Int, at x: Int, y: Int) {
        let rows = max(0, min(sourceHeight, height - y))
        let columns = max(0, min(sourceWidth, width - x))
        guard rows > 0, columns > 0, x >= 0, y >= 0 else { return }
        for row in 0..<rows {
            let from = row * sourceWidth * 3
            let to = ((y + row) * width + x) * 3
            pixels.replaceSubrange(
                to..<(to + columns * 3), with: rgb[(rgb.startIndex + from)..<(rgb.startIndex + from + columns * 3)])
        }
    }

    /// The PNG file.
    public func encoded() throws(ControlError) -> Data {
        var scanlines = Data(capacity: (width * 3 + 1) * height)
        for row in 0..<height {
            scanlines.append(0)  // filter type None
            scanlines.append(pixels[(row * width * 3)..<((row + 1) * width * 3)])
        }
        var compressedSize = compressBound(uLong(scanlines.count))
        var compressed = Data(count: Int(compressedSize))
        let status = compressed.withUnsafeMutableBytes { out in
            scanlines.withUnsafeBytes { input in
                compress2(
                    out.baseAddress!.assumingMemoryBound(to: Bytef.self), &compressedSize,
                    input.baseAddress!.assumingMemoryBound(to: Bytef.self), uLong(input.count), Z_BEST_SPEED)
            }
        }
        guard status == Z_OK else { throw .config("PNG compression failed (zlib status \(status))") }
        compressed.count = Int(compressedSize)

        var header = Data()
        header.appendBigEndian(UInt32(width))
        header.appendBigEndian(UInt32(height))
        header.append(contentsOf: [8, 2, 0, 0, 0])  // 8 bits, RGB, deflate, no filter method, no interlace
        var file = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        file.appendChunk("IHDR", header)
        for (keyword, text) in self.text {
            file.appendChunk("tEXt", Data(keyword.utf8.prefix(79)) + Data([0]) + Data(text.utf8))
        }
        file.appendChunk("IDAT", compressed)
        file.appendChunk("IEND", Data())
        return file
    }
}

extension Data {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func appendChunk(_ type: String, _ body: Data) {
        appendBigEndian(UInt32(body.count))
        let typed = Data(type.utf8) + body
        append(typed)
        let crc = typed.withUnsafeBytes { bytes in
            CZlib.crc32(0, bytes.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
        }
        appendBigEndian(UInt32(crc))
    }
}
