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
}
