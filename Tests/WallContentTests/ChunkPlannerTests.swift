import LockstepTime
import WallContent
import XCTest

final class ChunkPlannerTests: XCTestCase {
    private func set(_ count: Int, _ members: [Int]) -> ChunkSet {
        var set = ChunkSet(count: count)
        for member in members { set.insert(member) }
        return set
    }

    private func peer(_ name: String, _ holds: ChunkSet, free: Int = 4, rate: Double? = nil) -> ChunkSource {
        ChunkSource(name: name, kind: .peer, holds: holds, free: free, bytesPerSecond: rate)
    }

    private func origin(free: Int = 4, rate: Double? = nil) -> ChunkSource {
        ChunkSource(name: "origin", kind: .origin, holds: nil, free: free, bytesPerSecond: rate)
    }

    func testRarestFirst_whatNoPeerHasComesFromTheOrigin_thenWhatFewestPeersServe() {
        let requests = ChunkPlanner.plan(
            have: ChunkSet(count: 4), asked: [],
            sources: [peer("a", set(4, [0, 1, 2])), peer("b", set(4, [1, 2])), origin()], slots: 4)
        XCTAssertEqual(
            requests,
            [
                ChunkRequest(chunk: 3, source: "origin"), ChunkRequest(chunk: 0, source: "a"),
                ChunkRequest(chunk: 1, source: "a"), ChunkRequest(chunk: 2, source: "a"),
            ])
    }

    func testAmongChunksNoPeerHas_thoseAPeerIsReceiving_areAskedOfTheOriginLast() {
        let receiving = ChunkSource(
            name: "a", kind: .peer, holds: ChunkSet(count: 4), free: 2, receiving: set(4, [0, 1]))
        let requests = ChunkPlanner.plan(
            have: ChunkSet(count: 4), asked: [], sources: [receiving, origin(free: 2)], slots: 2)
        XCTAssertEqual(Set(requests.map(\.chunk)), [2, 3], "\(requests)")
        XCTAssertTrue(requests.allSatisfy { $0.source == "origin" })
    }

    func testHeldAndAskedChunks_areNotAskedFor_andNoMoreThanTheSlots() {
        let requests = ChunkPlanner.plan(
            have: set(6, [0, 1]), asked: [2], sources: [origin()], slots: 2)
        XCTAssertEqual(requests.count, 2, "\(requests)")
        XCTAssertTrue(Set(requests.map(\.chunk)).isSubset(of: [3, 4, 5]), "\(requests)")
        XCTAssertEqual(
            ChunkPlanner.plan(have: ChunkSet(count: 3, full: true), asked: [], sources: [origin()], slots: 4), [])
        XCTAssertEqual(ChunkPlanner.plan(have: ChunkSet(count: 3), asked: [], sources: [origin()], slots: 0), [])
    }

    func testASourceGetsNoMoreThanItHasRoomFor_andAChunkNoOneServesWaits() {
        let requests = ChunkPlanner.plan(
            have: ChunkSet(count: 5), asked: [],
            sources: [peer("a", set(5, [0, 1, 2]), free: 1), peer("b", set(5, [0, 1, 2]), free: 1)], slots: 5)
        XCTAssertEqual(requests.count, 2, "\(requests)")
        XCTAssertEqual(Set(requests.map(\.source)), ["a", "b"])
        XCTAssertTrue(requests.allSatisfy { $0.chunk < 3 }, "chunks 3 and 4 are served by no one: \(requests)")
        XCTAssertEqual(
            ChunkPlanner.plan(
                have: ChunkSet(count: 2), asked: [], sources: [peer("a", set(2, [0]), free: 0), origin(free: 0)],
                slots: 2), [])
    }

    func testTheFastestPeerIsAsked_anUnmeasuredOneCountingAsFast() {
        let all = ChunkSet(count: 1, full: true)
        XCTAssertEqual(
            ChunkPlanner.plan(
                have: ChunkSet(count: 1), asked: [],
                sources: [peer("slow", all, rate: 1e6), peer("fast", all, rate: 9e6)],
                slots: 1
            ).first?.source, "fast")
        XCTAssertEqual(
            ChunkPlanner.plan(
                have: ChunkSet(count: 1), asked: [], sources: [peer("known", all, rate: 9e6), peer("new", all)],
                slots: 1
            ).first?.source, "new")
    }

    func testAPeerIsPreferredToTheOrigin_unlessTheOriginIsMeasuredMuchFaster() {
        let all = ChunkSet(count: 1, full: true)
        func chosen(peerRate: Double?, originRate: Double?, originFree: Int = 4) -> String? {
            ChunkPlanner.plan(
                have: ChunkSet(count: 1), asked: [],
                sources: [origin(free: originFree, rate: originRate), peer("a", all, rate: peerRate)], slots: 1
            ).first?.source
        }
        XCTAssertEqual(chosen(peerRate: nil, originRate: nil), "a")
        XCTAssertEqual(chosen(peerRate: 60e6, originRate: 100e6), "a")
        XCTAssertEqual(chosen(peerRate: 10e6, originRate: 100e6), "origin")
        XCTAssertEqual(chosen(peerRate: 10e6, originRate: 100e6, originFree: 0), "a")
        XCTAssertEqual(chosen(peerRate: 10e6, originRate: nil), "a")
    }

    func testTiesOfRarity_areBrokenInEachNodesOwnOrder_soNodesAskForDifferentChunks() {
        func order(seed: UInt64) -> [Int] {
            ChunkPlanner.plan(have: ChunkSet(count: 64), asked: [], sources: [origin(free: 64)], slots: 64, seed: seed)
                .map(\.chunk)
        }
        XCTAssertEqual(Set(order(seed: 1)), Set(0..<64), "every chunk, once")
        XCTAssertEqual(order(seed: 1), order(seed: 1), "the same on every start")
        let firsts = (1...4).map { order(seed: UInt64($0) * 7919).prefix(4) }
        XCTAssertEqual(Set(firsts.map { Array($0) }).count, 4, "four nodes, four orders: \(firsts)")
        XCTAssertNotEqual(order(seed: 1), Array(0..<64), "not the file's order")
        // Rarity still comes first, whatever the seed.
        let rare = ChunkPlanner.plan(
            have: ChunkSet(count: 64), asked: [], sources: [peer("a", set(64, Array(1..<64))), origin()], slots: 1,
            seed: 99)
        XCTAssertEqual(rare.first, ChunkRequest(chunk: 0, source: "origin"))
    }

    func testAFailedSource_waitsLongerEachTimeInARow_upToAMinute_andStartsOverOnceItDelivers() {
        var backoff = SourceBackoff()
        let now = MediaTime(value: 100, timescale: 1)
        XCTAssertFalse(backoff.isWaiting("a", at: now))
        XCTAssertEqual(backoff.failed("a", at: now, reason: "refused"), now + MediaTime(value: 1, timescale: 1))
        XCTAssertTrue(backoff.isWaiting("a", at: now + MediaTime(value: 999, timescale: 1000)))
        XCTAssertEqual(backoff.reason("a", at: now), "refused")
        XCTAssertFalse(backoff.isWaiting("a", at: now + MediaTime(value: 1, timescale: 1)))
        XCTAssertFalse(backoff.isWaiting("b", at: now), "only the source that failed")
        XCTAssertEqual(backoff.failed("a", at: now, reason: "damaged"), now + MediaTime(value: 2, timescale: 1))
        XCTAssertEqual(backoff.failed("a", at: now, reason: "damaged"), now + MediaTime(value: 4, timescale: 1))
        for _ in 0..<10 { backoff.failed("a", at: now, reason: "damaged") }
        XCTAssertEqual(backoff.failed("a", at: now, reason: "damaged"), now + SourceBackoff.longestWait)
        backoff.succeeded("a")
        XCTAssertFalse(backoff.isWaiting("a", at: now))
        XCTAssertEqual(backoff.failed("a", at: now, reason: "refused"), now + SourceBackoff.firstWait)
    }

    func testASourceThatSentDamage_isNotNewAgainForDelivering_andEveryFailureIsForgottenInTime() {
        var backoff = SourceBackoff()
        var now = MediaTime(value: 100, timescale: 1)
        let second = MediaTime(value: 1, timescale: 1)
        XCTAssertEqual(backoff.failed("liar", at: now, reason: "damaged", serious: true), now + second)
        // It delivers a good chunk, then sends damage again: its wait goes on doubling.
        backoff.succeeded("liar")
        XCTAssertEqual(backoff.failed("liar", at: now, reason: "damaged", serious: true), now + second * 2)
        backoff.succeeded("liar")
        XCTAssertEqual(backoff.failed("liar", at: now, reason: "refused"), now + second * 4, "still the liar")
        // Ten minutes after its last wait, with another source's failure to prune on, it is gone.
        now = now + second * 4 + SourceBackoff.memory
        backoff.failed("other", at: now, reason: "refused")
        XCTAssertEqual(backoff.count, 1, "only the recent source is remembered")
        XCTAssertEqual(backoff.failed("liar", at: now, reason: "damaged", serious: true), now + second)
    }
}
