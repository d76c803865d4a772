import Foundation
import LockstepFuzzing
import LockstepNet
import TestSupport
import XCTest

/// Everything the fuzzer was seeded with and every crash it ever found (Tests/FuzzCorpus/crashes),
/// replayed through the harness; then seeded mutations of them, so `make test` fuzzes a little even
/// where libFuzzer does not run. A trap ends the test process: the test fails by crashing, after
/// printing the input's name or the seed.
final class FuzzCorpusTests: XCTestCase {
    private var corpus: [(name: String, bytes: [UInt8])] {
        get throws {
            let root = TestMedia.repositoryRoot.appendingPathComponent("Tests/FuzzCorpus")
            let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])?
                .compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
                ?? []
            return try files.sorted { $0.path < $1.path }.map {
                (String($0.path.dropFirst(root.path.count + 1)), Array(try Data(contentsOf: $0)))
            }
        }
    }

    func testTheCorpusAndEveryCrashFound_replayWithoutATrap() throws {
        let inputs = try corpus
        XCTAssertGreaterThan(inputs.filter { $0.name.hasPrefix("crashes/") }.count, 0, "the crashes found are kept")
        for target in FuzzHarness.Target.allCases {
            XCTAssertTrue(
                inputs.contains { FuzzHarness.split($0.bytes)?.0 == target }, "a seed for \(target)")
        }
        for input in inputs {
            print("replaying \(input.name)")
            FuzzHarness.run(input.bytes)
        }
    }

    func testMutationsOfTheCorpus_neverTrap() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["LOCKSTEP_FUZZ_SEED"] ?? "") ?? 0xF022
        let rounds = Int(ProcessInfo.processInfo.environment["LOCKSTEP_FUZZ_ROUNDS"] ?? "") ?? 4000
        print("corpus mutations: seed \(seed), \(rounds) rounds (LOCKSTEP_FUZZ_SEED, LOCKSTEP_FUZZ_ROUNDS)")
        let inputs = try corpus.map(\.bytes)
        var random = SplitMix64(seed: seed)
        for _ in 0..<rounds {
            var input = inputs[Int.random(in: 0..<inputs.count, using: &random)]
            for _ in 0..<Int.random(in: 1...8, using: &random) { mutate(&input, with: inputs, &random) }
            FuzzHarness.run(input)
        }
    }

    /// One of libFuzzer's simpler mutations: a flipped bit, a byte set to an edge value, bytes
    /// inserted or erased, a digit changed, a piece of another input spliced in.
    private func mutate(_ input: inout [UInt8], with others: [[UInt8]], _ random: inout SplitMix64) {
        let at = input.isEmpty ? 0 : Int.random(in: 0..<input.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where !input.isEmpty: input[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case 1 where !input.isEmpty: input[at] = [0, 0xFF, 0x7F, 0x80, 0x2D, 0x39][Int.random(in: 0..<6, using: &random)]
        case 2: input.insert(contentsOf: Array(repeating: UInt8.random(in: 0...255, using: &random), count: 1 + at % 9), at: at)
        case 3 where !input.isEmpty: input.removeSubrange(at..<min(input.count, at + 1 + Int.random(in: 0..<16, using: &random)))
        case 4 where !input.isEmpty && (0x30...0x39).contains(input[at]):
            input.replaceSubrange(at...at, with: Array("9223372036854775807".utf8.prefix(Int.random(in: 1...19, using: &random))))
        default:
            let other = others[Int.random(in: 0..<others.count, using: &random)]
            guard !other.isEmpty else { return }
            let start = Int.random(in: 0..<other.count, using: &random)
            input.insert(contentsOf: other[start..<min(other.count, start + 64)], at: at)
        }
    }
}
