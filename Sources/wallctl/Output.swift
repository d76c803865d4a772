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
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }
}
