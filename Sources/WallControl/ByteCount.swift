import Foundation

/// A size for an operator to read: bytes, kB, MB or GB (decimal, as disks are sold), with two
/// decimals under 10, one under 100 and none above, as the value reads once rounded: so a small
/// store's free space reads "312 MB", not "0.3 GB" or "0.0 GB", and 9,999,000 bytes "10.0 MB".
public enum ByteCount {
    public static func text(_ bytes: UInt64) -> String {
        let value = Double(bytes)
        guard value >= 999.5 else { return "\(bytes) bytes" }
        let (scaled, unit): (Double, String) =
            switch value {
            case ..<999_500: (value / 1e3, "kB")
            case ..<999_500_000: (value / 1e6, "MB")
            default: (value / 1e9, "GB")
            }
        let format = scaled >= 99.5 ? "%.0f %@" : scaled >= 9.995 ? "%.1f %@" : "%.2f %@"
        return String(format: format, scaled, unit)
    }
}
