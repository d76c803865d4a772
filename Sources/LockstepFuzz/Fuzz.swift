import Foundation
import LockstepFuzzing

/// `lockstep-fuzz FILE...` replays inputs (a corpus, a crash to reproduce) through the harness.
/// Built with `-sanitize=fuzzer -DFUZZING` (`make fuzz`), it is libFuzzer instead, with libFuzzer's
/// options (`-max_total_time=60 corpus/`).
@main
struct LockstepFuzz {
    static func main() {
        #if FUZZING
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
            replay(CommandLine.arguments.dropFirst())
        #endif
    }

    static func replay(_ paths: ArraySlice<String>) {
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: lockstep-fuzz FILE...  (make fuzz runs libFuzzer)\n".utf8))
            exit(2)
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("lockstep-fuzz: cannot read \(path)\n".utf8))
                exit(1)
            }
            FuzzHarness.run(Array(data))
        }
        print("lockstep-fuzz: \(paths.count) inputs replayed, none trapped")
    }
}

#if FUZZING
    /// libFuzzer's driver, for a program with its own `main`.
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    private let fuzzOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
        FuzzHarness.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }
#endif
