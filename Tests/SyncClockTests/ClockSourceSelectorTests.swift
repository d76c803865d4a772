import LockstepTime
import XCTest

@testable import SyncClock

/// The failover logic at given times: which source is followed, and a published mapping that never
/// steps when the source changes.
final class ClockSourceSelectorTests: XCTestCase {
    private static let ms: Int64 = 1_000_000
    private static let second: Int64 = 1_000_000_000
    private let wallEpoch: UInt64 = 0xA11
    private let masterIdentity: UInt64 = 0x3A5

    /// A client's status: locked unless said, on the wall's epoch, its master `offset` ns ahead of
    /// local time with `ratePPM`.
    private func status(
        _ state: ClockState = .locked, offset: Int64, ratePPM: Double = 0, at local: Int64, bound: Int64 = 20_000,
        epoch: UInt64? = nil, stratum: Int = 0, relay: UInt64 = 1, upstream: UInt64 = 0, rootBound: Int64 = 0
    ) -> ClockStatus {
        .fixture(
            state, offset: offset, ratePPM: ratePPM, at: local, bound: bound, guaranteedBound: bound * 2,
            growthPPM: 0.1,
            master: MasterIdentity(
                identity: masterIdentity, epoch: epoch ?? wallEpoch, isRealtime: false, isSimulated: true),
            path: ClockPath(
                stratum: stratum, relay: relay, upstream: upstream, rootErrorBound: MediaTime(nanoseconds: rootBound)),
            pollInterval: 100 * Self.ms)
    }

    private func master(_ selector: ClockSourceSelector, at local: Int64) -> Int64 {
        selector.mapping.masterNanoseconds(atLocalNanoseconds: local)
    }

    func testFollowsTheFirstLockedSource_inOrderOfPreference() {
        var selector = ClockSourceSelector(sources: 3)
        _ = selector.update(source: 2, status: status(offset: 5_000, at: 0), now: 0)
        XCTAssertEqual(selector.selected, 2, "the only locked source")
        _ = selector.update(source: 1, status: status(.locking, offset: 5_000, at: 0), now: 0)
        XCTAssertEqual(selector.selected, 2, "a source still locking is not followed")
        XCTAssertEqual(selector.standing(of: 1, at: 0), .notLocked(.locking))
        XCTAssertEqual(selector.standing(of: 0, at: 0), .notLocked(.unsynced))
        XCTAssertEqual(selector.status(at: 0)?.state, .locked)
        XCTAssertEqual(selector.generation, 1)
    }

    func testAtTheStart_aSourceWaitsBriefly_forAMorePreferredOneStillLocking() {
        var selector = ClockSourceSelector(sources: 2)
        _ = selector.update(source: 0, status: status(.locking, offset: 0, at: 0), now: 0)
        _ = selector.update(source: 1, status: status(offset: 0, at: 0, stratum: 1), now: 0)
        XCTAssertNil(selector.selected, "the master is still locking")
        _ = selector.update(source: 0, status: status(offset: 0, at: Self.second), now: Self.second)
        XCTAssertEqual(selector.selected, 0, "the master, as soon as it locked")

        var slow = ClockSourceSelector(sources: 2)
        _ = slow.update(source: 0, status: status(.locking, offset: 0, at: 0), now: 0)
        _ = slow.update(source: 1, status: status(offset: 0, at: 0, stratum: 1), now: 0)
        _ = slow.advance(to: 2 * Self.second)
        XCTAssertEqual(slow.selected, 1, "not more than 2 s")
    }

    func testFailover_slewsOntoTheNextSource_andNeverSteps() {
        var selector = ClockSourceSelector(sources: 2)
        let apart: Int64 = 300_000
        _ = selector.update(source: 0, status: status(offset: 1_000_000, at: 0), now: 0)
        _ = selector.update(source: 1, status: status(offset: 1_000_000 + apart, at: 0, stratum: 1), now: 0)
        XCTAssertEqual(selector.selected, 0)
        XCTAssertEqual(selector.standing(of: 1, at: 0), .qualified)
        // The master falls silent: its client goes to holdover, and the relay takes over.
        let change = 4 * Self.second
        var previous = master(selector, at: change)
        _ = selector.update(source: 0, status: status(.holdover, offset: 1_000_000, at: change), now: change)
        XCTAssertEqual(selector.selected, 1)
        XCTAssertEqual(selector.changes, 1)
        XCTAssertEqual(master(selector, at: change), previous, "no step at the change")
        XCTAssertEqual(selector.generation, 1, "the same timeline")
        var now = change
        var rates: [Double] = []
        // The one servo re-aims at every estimate with its time constant (four 100 ms polls): the
        // difference decays by e in 0.4 s, under a microsecond within 3 s.
        while now < change + 3 * Self.second {
            now += 10 * Self.ms
            let before = master(selector, at: now)
            if now % (100 * Self.ms) == 0 {
                _ = selector.update(source: 1, status: status(offset: 1_000_000 + apart, at: now, stratum: 1), now: now)
            } else {
                _ = selector.advance(to: now)
            }
            XCTAssertEqual(master(selector, at: now), before, "continuous at \(now)")
            rates.append((Double(master(selector, at: now) - previous) / Double(10 * Self.ms) - 1) * 1e6)
            previous = master(selector, at: now)
        }
        XCTAssertLessThanOrEqual(rates.map(abs).max() ?? 0, 500.5, "slewed at 500 ppm at most")
        XCTAssertGreaterThan(rates.max() ?? 0, 100, "it did slew")
        XCTAssertLessThan(abs(master(selector, at: now) - (now + 1_000_000 + apart)), 1_000, "on the relay's time")
    }

    func testAFavouredSourceThatReturns_isTakenBackOnlyAfterTheHoldoff() {
        var selector = ClockSourceSelector(sources: 2)
        _ = selector.update(source: 1, status: status(offset: 0, at: 0, stratum: 1), now: 0)
        XCTAssertEqual(selector.selected, 1)
        _ = selector.update(source: 0, status: status(offset: 0, at: Self.second), now: Self.second)
        XCTAssertEqual(selector.selected, 1, "not at once")
        _ = selector.update(source: 0, status: status(offset: 0, at: 10 * Self.second), now: 10 * Self.second)
        XCTAssertEqual(selector.selected, 1, "9 s qualified: not yet")
        _ = selector.advance(to: 11 * Self.second + 1)
        XCTAssertEqual(selector.selected, 0, "10 s qualified: back to the master")
    }

    func testASourceThatFollowsThisProcess_isRefusedAsALoop() {
        var selector = ClockSourceSelector(sources: 2, ownRelay: 0xBEEF)
        _ = selector.update(source: 0, status: status(offset: 0, at: 0, stratum: 2, upstream: 0xBEEF), now: 0)
        _ = selector.update(source: 1, status: status(offset: 0, at: 0, stratum: 1, upstream: 0x1), now: 0)
        XCTAssertEqual(selector.standing(of: 0, at: 0), .loop)
        XCTAssertEqual(selector.selected, 1)
        _ = selector.update(source: 1, status: status(offset: 0, at: 1, stratum: 1, relay: 0xBEEF), now: 1)
        XCTAssertEqual(selector.standing(of: 1, at: 1), .loop, "this process's own server, reached by another address")
    }

    func testASourceTooManyRelaysFromTheMaster_isRefused_andTheNextFollowed() {
        var selector = ClockSourceSelector(sources: 2, ownRelay: 0xBEEF)
        _ = selector.update(source: 0, status: status(offset: 0, at: 0, stratum: 8, upstream: 0x2), now: 0)
        _ = selector.update(source: 1, status: status(offset: 0, at: 0, stratum: 7, upstream: 0x3), now: 0)
        XCTAssertEqual(selector.standing(of: 0, at: 0), .tooManyRelays(stratum: 8))
        XCTAssertEqual(selector.standing(of: 1, at: 0), .followed, "7 relays away is still followed")
        // The followed source's stratum climbs, as it does around a loop: it is dropped, and the
        // timeline is held (no source).
        _ = selector.update(source: 1, status: status(offset: 0, at: Self.second, stratum: 8), now: Self.second)
        XCTAssertNil(selector.selected)
        XCTAssertEqual(selector.last, 1)
        XCTAssertEqual(
            ClockSources.describe(selector.standing(of: 1, at: Self.second)),
            "8 relays from the master: a loop of relays, or too long a chain")
    }

    func testASourceOnAnotherTimeline_isNotFollowed_whileTheWallsTimelineIsServed() {
        var selector = ClockSourceSelector(sources: 2)
        _ = selector.update(source: 0, status: status(offset: 0, at: 0), now: 0)
        _ = selector.update(source: 1, status: status(offset: 0, at: 0, stratum: 1), now: 0)
        // The master restarts on a clock 100 s off: a new epoch.
        let restart = 5 * Self.second
        _ = selector.update(
            source: 0, status: status(offset: 100 * Self.second, at: restart, epoch: 0xB22), now: restart)
        XCTAssertEqual(selector.standing(of: 0, at: restart), .otherEpoch(0xB22))
        XCTAssertEqual(selector.selected, 1, "the relay keeps the wall's timeline")
        for second in 6...60 {
            let now = Int64(second) * Self.second
            _ = selector.update(source: 1, status: status(offset: 0, at: now, stratum: 1), now: now)
            _ = selector.update(source: 0, status: status(offset: 100 * Self.second, at: now, epoch: 0xB22), now: now)
        }
        XCTAssertEqual(selector.selected, 1)
        XCTAssertEqual(selector.epoch, wallEpoch)
        XCTAssertEqual(selector.generation, 1)
    }

    func testATimelineNoOneServes_isGivenUpAfterTheHoldoff_forANewOne() {
        var selector = ClockSourceSelector(sources: 1)
        _ = selector.update(source: 0, status: status(offset: 0, at: 0), now: 0)
        let restart = 5 * Self.second
        _ = selector.update(source: 0, status: status(offset: 0, at: restart - 1), now: restart - 1)
        _ = selector.update(
            source: 0, status: status(offset: 100 * Self.second, at: restart, epoch: 0xB22), now: restart)
        XCTAssertNil(selector.selected)
        XCTAssertEqual(selector.status(at: restart)?.state, .holdover, "holding the wall's timeline")
        _ = selector.advance(to: restart + 9 * Self.second)
        XCTAssertEqual(selector.epoch, wallEpoch, "not after 9 s")
        _ = selector.advance(to: restart + 10 * Self.second)
        XCTAssertEqual(selector.epoch, 0xB22, "after 10 s with no source on it")
        XCTAssertEqual(selector.selected, 0)
        XCTAssertEqual(selector.generation, 2, "a new timeline, stepped onto")
        let now = restart + 10 * Self.second
        XCTAssertEqual(master(selector, at: now), now + 100 * Self.second)
    }

    func testAJumpBeyondTheStepThreshold_startsANewTimeline() {
        var selector = ClockSourceSelector(sources: 1)
        _ = selector.update(source: 0, status: status(offset: 0, at: 0), now: 0)
        _ = selector.update(source: 0, status: status(offset: 10 * Self.ms, at: Self.second), now: Self.second)
        XCTAssertEqual(selector.generation, 1, "10 ms is slewed")
        _ = selector.update(source: 0, status: status(offset: 200 * Self.ms, at: 2 * Self.second), now: 2 * Self.second)
        XCTAssertEqual(selector.generation, 2, "200 ms is stepped, on a new timeline")
    }

    func testTheBound_includesTheSourcesRootBound_andWhatIsLeftOfASlew() throws {
        var selector = ClockSourceSelector(sources: 2)
        _ = selector.update(source: 0, status: status(offset: 0, at: 0), now: 0)
        _ = selector.update(
            source: 1, status: status(offset: 400_000, at: 0, bound: 30_000, stratum: 1, rootBound: 50_000), now: 0)
        _ = selector.update(source: 0, status: status(.holdover, offset: 0, at: Self.second), now: Self.second)
        let combined = try XCTUnwrap(selector.status(at: Self.second))
        XCTAssertEqual(combined.path?.stratum, 1)
        // 30 µs of its own (grown by 0.1 ppm over 1 s), 50 µs of the relay's, 400 µs still to slew.
        XCTAssertEqual(combined.errorBound.nanoseconds ?? 0, 480_100, accuracy: 2)
        XCTAssertEqual(selector.standing(of: 1, at: Self.second), .followed)
        var sources = ClockSourceSelector(sources: 2)
        _ = sources.update(source: 0, status: status(offset: 0, at: 0, bound: 6 * Self.ms), now: 0)
        _ = sources.update(source: 1, status: status(offset: 0, at: 0, stratum: 1, rootBound: 60 * Self.ms), now: 0)
        XCTAssertEqual(sources.standing(of: 0, at: 0), .errorBoundTooLarge(MediaTime(nanoseconds: 6 * Self.ms)))
        XCTAssertEqual(
            sources.selected, 1,
            "a source known within 5 ms is followed, even when it holds the timeline far from the master")
    }
}
