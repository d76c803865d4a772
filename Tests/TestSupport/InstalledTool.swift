import Foundation
import XCTest

/// The path of a program a test needs from the system (Xvfb, ffmpeg, openbox): found on PATH, else
/// the test fails in CI (setup installs it there) and is skipped elsewhere.
public func installedTool(_ name: String) throws -> String {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let path else {
        let message = "\(name) is not installed (scripts/setup.sh installs it)"
        if ProcessInfo.processInfo.environment["CI"] != nil { throw TestSupportError(message) }
        throw XCTSkip(message)
    }
    return path
}
