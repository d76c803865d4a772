import Foundation
import LockstepNet
import XCTest

@testable import WallContent

/// What a content transfer brings from another machine, mutated a few thousand times from seeds (as
/// FuzzCorpusTests does for the node's other inputs; the fuzz harness's sanitizer build leaves out
/// the content server's HTTP and TLS): a peer's chunk offer and holding, a `Range` header, a file's
/// first bytes. Each is refused or accepted, never a trap, and what is accepted keeps its promises.
final class ContentInputTests: XCTestCase {
    private let seeds: [[UInt8]] = {
        let digest = String(repeating: "ab", count: 32)
        let offer = """
            {"list":{"id":{"sha256":"\(digest)","size":10485765},"chunkSize":4194304,\
            "digests":["\(String(repeating: "0", count: 64))","\(String(repeating: "1", count: 64))",\
            "\(String(repeating: "2", count: 64))"]},"have":{"count":3,"chunks":"a"}}
            """
        return [
            Array(offer.utf8), Array(#"{"list":"\#(digest)","have":{"count":3,"chunks":"e"}}"#.utf8),
            Array("bytes=4194304-18446744073709551615".utf8), Array("bytes=0-".utf8),
            [0, 0, 0, 0x18] + Array("ftypisom".utf8),
        ]
    }()

    func testMutatedTransferInputs_areRefusedOrKeepTheirPromises() {
        var random = SplitMix64(seed: 0xC0_47E7)
        for round in 0..<6000 {
            var input = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let at = input.isEmpty ? 0 : Int.random(in: 0..<input.count, using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0 where !input.isEmpty: input[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                case 1 where !input.isEmpty && (0x30...0x39).contains(input[at]):
                    input.replaceSubrange(
                        at...at, with: Array("18446744073709551615".utf8.prefix(Int.random(in: 1...20, using: &random)))
                    )
                case 2: input.insert(UInt8.random(in: 0...255, using: &random), at: at)
                case 3 where !input.isEmpty: input.remove(at: at)
                default: input.append(contentsOf: seeds[Int.random(in: 0..<seeds.count, using: &random)].prefix(8))
                }
            }
            check(input)
        }
    }

    private func check(_ input: [UInt8]) {
        let data = Data(input)
        if let offer = try? JSONDecoder().decode(ChunkOffer.self, from: data) {
            let list = offer.list
            XCTAssertEqual(list.count, ChunkList.count(forFileOf: list.id.size))
            let covered = (0..<list.count).reduce(UInt64(0)) { $0 + UInt64(list.range(of: $1).count) }
            XCTAssertEqual(covered, list.id.size, "the chunks cover the file exactly")
            XCTAssertEqual(try? JSONDecoder().decode(ChunkOffer.self, from: JSONEncoder().encode(offer)), offer)
            if offer.have.map({ $0.count == list.count }) ?? true {
                let source = ChunkSource(name: "peer", kind: .peer, holds: offer.have, free: 2)
                let requests = ChunkPlanner.plan(
                    have: ChunkSet(count: list.count), asked: [], sources: [source], slots: 4)
                XCTAssertLessThanOrEqual(requests.count, 2)
                XCTAssertTrue(requests.allSatisfy { source.serves($0.chunk) })
            }
        }
        if let holding = try? JSONDecoder().decode(ChunkHolding.self, from: data), let have = holding.have {
            XCTAssertLessThanOrEqual(have.cardinality, have.count)
            XCTAssertEqual(ChunkSet(count: have.count, hex: have.hex), have)
        }
        if let header = String(bytes: input, encoding: .utf8), let range = ContentServer.byteRange(header) {
            XCTAssertTrue(range.end.map { $0 >= range.start } ?? true, header)
        }
        _ = MediaSignature.format(of: input)
    }
}
