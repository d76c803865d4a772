import Foundation

// TestSupport is a plain library target: `swift build -c release` builds it too, where XCTest is
// not there to import.
#if canImport(XCTest)
    import XCTest
#endif

/// The path of a program a test needs from the system (Xvfb, ffmpeg, openbox): found on PATH, else
/// the test fails in CI (setup installs it there) and is skipped elsewhere.
public func installedTool(_ name: String) throws -> String {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let path else {
        let message = "\(name) is not installed (scripts/setup.sh installs it)"
        if ProcessInfo.processInfo.environment["CI"] != nil { throw TestSupportError(message) }
        #if canImport(XCTest)
            throw XCTSkip(message)
        #else
            throw TestSupportError(message)
        #endif
    }
    return path
}
