import Foundation
import WallControl

#if canImport(Glibc)
    import Glibc
#endif

/// Standard output, one line at a time: flushed at once, so a reader on a pipe (a benchmark script)
/// sees every line when it is written.
enum Output {
    static func line(_ text: String) {
        print(text)
        fflush(nil)
    }

    /// A line on standard error: what a command says while its standard output carries data.
    static func note(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        bytes.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// Writes `data` to the file at `path`, or to standard output when `path` is "-" (ending it with
    /// a line break if it has none): a report a command writes where it was asked to.
    static func write(_ data: Data, to path: String) throws {
        if path == "-" {
            FileHandle.standardOutput.write(data)
            if data.last != UInt8(ascii: "\n") { FileHandle.standardOutput.write(Data("\n".utf8)) }
            return
        }
        do {
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw ControlError.config("cannot write \(path): \(error.localizedDescription)")
        }
    }
}
