import Foundation

/// Comparing pictures in tests.
public enum Pictures {
    /// The peak signal-to-noise ratio of `b` against `a`, byte for byte, in dB: infinite when they
    /// are equal, 0 when their sizes differ or they are empty.
    public static func psnr(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Double {
        guard a.count == b.count, !a.isEmpty else { return 0 }
        let squared = zip(a, b).reduce(0.0) { sum, pair in
            let difference = Double(pair.0) - Double(pair.1)
            return sum + difference * difference
        }
        let mean = squared / Double(a.count)
        return mean == 0 ? .infinity : 10 * log10(255 * 255 / mean)
    }
}
