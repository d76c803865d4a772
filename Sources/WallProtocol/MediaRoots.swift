import Foundation

/// The folders a node may load media from: a path in a request is played only when it names a
/// regular file inside one of them, after symbolic links and `..` are resolved.
///
/// A path outside every root is refused without looking at it, so the control API does not tell
/// anyone which files exist elsewhere on the machine.
public struct MediaRoots: Sendable, Hashable {
    /// The roots as configured.
    public let folders: [String]

    public init(_ folders: [String]) {
        self.folders = folders
    }

    /// The real path of the media file `path` names, or a rejection naming `field`.
    public func resolve(_ path: String, field: String = "media") throws(RequestRejection) -> String {
        guard path.hasPrefix("/") else {
            throw RequestRejection(field: field, reason: "must be an absolute path, got \"\(path)\"")
        }
        guard !path.utf8.contains(0) else {
            throw RequestRejection(field: field, reason: "must not contain a NUL character")
        }
        let roots = folders.map { Self.realPath($0) ?? Self.lexical($0) }
        func inside(_ candidate: String) -> Bool {
            roots.contains { root in candidate == root || candidate.hasPrefix(root.hasSuffix("/") ? root : root + "/") }
        }
        let outside = RequestRejection(
            field: field, reason: "\"\(path)\" is not inside the media roots (\(folders.joined(separator: ", ")))")
        guard let real = Self.realPath(path) else {
            guard inside(Self.lexical(path)) else { throw outside }
            throw RequestRejection(field: field, reason: "\"\(path)\": no such file")
        }
        guard inside(real) else { throw outside }
        var info = stat()
        guard stat(real, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw RequestRejection(field: field, reason: "\"\(path)\" is not a regular file")
        }
        return real
    }

    /// Checks that `path` may name media at all, without requiring the file: absolute, inside a
    /// root (by its real path when it exists, else as written). A timeline may name files that are
    /// not there yet; `resolve` checks the file when it is played.
    public func check(_ path: String, field: String) throws(RequestRejection) {
        do {
            _ = try resolve(path, field: field)
        } catch let rejection where rejection.reason.hasSuffix(": no such file") {
            return
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func lexical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
