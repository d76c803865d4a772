import Foundation

/// A folder of one test's own under the temporary directory (its name carries the process id, so
/// two test runs on one machine do not meet), with the media and files the test writes there.
public struct ScratchFolder: Sendable {
    public let url: URL

    /// Makes `<temporary directory>/<prefix>-<pid>`.
    public init(_ prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(getpid())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` in the folder.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// A copy of the frame-code clip of `seconds` (TestMedia's), as `name`: a file of the test's own
    /// in the wall's media root.
    public func frameCodeClip(seconds: Int, named name: String = "clip.mp4") throws -> String {
        let clip = url.appendingPathComponent(name)
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: seconds), to: clip)
        return clip.path
    }

    /// Removes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
