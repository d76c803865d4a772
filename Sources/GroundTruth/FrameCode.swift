/// The frame number that Lockstep's frame-code clips carry in their pixels
/// (`scripts/make-media.sh framecode`).
///
/// Frame n is one flat colour: with `level(i) = 24 + 13 i`, luma is `level(n mod 16)`, U is
/// `level((n / 16) mod 16)` and V is `level((n / 256) mod 16)`. A flat colour survives any crop of
/// the picture (a wall tile) and any scale, and H.264 keeps flat planes within a couple of levels,
/// well inside the ±6 a level may stray before it is read as another.
public enum FrameCode {
    /// Frame numbers repeat after this many frames (136.5 s at 30 fps).
    public static let modulus = 4096
    static let base = 24.0
    static let step = 13.0
    /// How far a plane's mean may stray from its level and still be read.
    static let tolerance = 5.0

    /// The code of frame `n`: the Y, U and V values of its pixels.
    public static func levels(forFrame n: Int) -> (y: UInt8, u: UInt8, v: UInt8) {
        let n = ((n % modulus) + modulus) % modulus
        func level(_ digit: Int) -> UInt8 { UInt8(base + step * Double(digit)) }
        return (level(n % 16), level((n / 16) % 16), level((n / 256) % 16))
    }

    /// The frame number (mod 4096) read from an I420 picture, or nil when a plane is not flat
    /// at a code level (not a frame-code picture, or damaged).
    public static func decode(i420 bytes: some Collection<UInt8>, width: Int, height: Int) -> Int? {
        let lumaCount = width * height
        let chromaCount = ((width + 1) / 2) * ((height + 1) / 2)
        guard width > 0, height > 0, bytes.count >= lumaCount + 2 * chromaCount else { return nil }
        let array = Array(bytes)
        func digit(_ range: Range<Int>) -> Int? {
            let mean = Double(array[range].reduce(0) { $0 + Int($1) }) / Double(range.count)
            let value = ((mean - base) / step).rounded()
            guard value >= 0, value <= 15, abs(mean - (base + step * value)) <= tolerance else { return nil }
            return Int(value)
        }
        guard let y = digit(0..<lumaCount),
            let u = digit(lumaCount..<lumaCount + chromaCount),
            let v = digit(lumaCount + chromaCount..<lumaCount + 2 * chromaCount)
        else { return nil }
        return y + 16 * u + 256 * v
    }

    /// The frame closest to `reference` whose number is `code` mod 4096: unwraps a code read
    /// from a long-running wall given roughly where playback is.
    public static func unwrap(_ code: Int, near reference: Int) -> Int {
        let base = reference - ((reference % modulus) + modulus) % modulus
        let candidates = [base - modulus + code, base + code, base + modulus + code]
        return candidates.min { abs($0 - reference) < abs($1 - reference) }!
    }
}
