import LockstepTime
import WallTimeline
import XCTest

/// The one rule for what a node takes: each case of issue 40 refused or survived, and a property
/// over random request sequences: whatever the nodes accept, they converge on one timeline, and
/// their versions stay within the bound on the sum.
final class TimelineAdmissionTests: XCTestCase {
    private static let epoch: UInt64 = 7
    private let start = MediaTime(value: 5_000, timescale: 1)

    private func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1_000_000_000) }

    private func first(version: UInt64 = 1, epoch: UInt64 = epoch) throws -> Timeline {
        try Timeline(
            wall: "w", version: version, epoch: epoch,
            playlist: Playlist(entries: [TimelineEntry(media: "a.mp4", outPoint: seconds(10), repeats: .forever)]),
            start: start)
    }

    /// `timeline` edited (paused at `at`), given `version`.
    private func edit(_ timeline: Timeline, version: UInt64, at: MediaTime? = nil) throws -> Timeline {
        var edited = try timeline.applying(.pause, at: at ?? start + seconds(1))
        edited.version = version
        return edited
    }

    func testAnEpochNotTheMastersOrNoClock_isRefused_andAnUnnamedOneChecksNothing() throws {
        var admission = TimelineAdmission()
        let held = try first()
        let foreign = try edit(held, version: 2).reanchored(onto: .max)
        XCTAssertThrowsError(
            try admission.admit(
                foreign, current: held, wall: "w", epoch: .known(Self.epoch), from: .controller, now: .zero)
        ) { error in
            XCTAssertEqual(
                "\(error)",
                "the timeline is anchored on master epoch 18446744073709551615, but this node's master clock runs epoch 7: "
                    + "it was made for another master, or before the master started over")
        }
        // No clock: only a timeline on the epoch of the one held (a restarted node catching up).
        XCTAssertThrowsError(
            try admission.admit(foreign, current: held, wall: "w", epoch: .noClock, from: .peer, now: .zero))
        XCTAssertThrowsError(
            try admission.admit(
                try edit(held, version: 2), current: nil, wall: "w", epoch: .noClock, from: .peer, now: .zero))
        XCTAssertTrue(
            try admission.admit(
                try edit(held, version: 2), current: held, wall: "w", epoch: .noClock, from: .peer, now: .zero))
        XCTAssertTrue(
            try admission.admit(foreign, current: held, wall: "w", epoch: .unnamed, from: .controller, now: .zero))
    }

    func testAControllersSteps_areBoundedAlone_andInSum() throws {
        var admission = TimelineAdmission()
        var held = try first()
        // Issue 40's walk: +2^32 at once is refused outright.
        XCTAssertThrowsError(
            try admission.admit(
                try edit(held, version: 1 + (1 << 32)), current: held, wall: "w", epoch: .known(Self.epoch),
                from: .controller, now: .zero))
        // The whole burst at once is taken; then only what a second refills.
        let burst = try edit(held, version: 1 + TimelineAdmission.burst)
        XCTAssertTrue(
            try admission.admit(
                burst, current: held, wall: "w", epoch: .known(Self.epoch), from: .controller, now: .zero))
        held = burst
        XCTAssertThrowsError(
            try admission.admit(
                try edit(held, version: held.version + 2), current: held, wall: "w", epoch: .known(Self.epoch),
                from: .controller, now: seconds(0.001)))
        let refilled = try edit(held, version: held.version + 900)
        XCTAssertTrue(
            try admission.admit(
                refilled, current: held, wall: "w", epoch: .known(Self.epoch), from: .controller, now: seconds(1)))
        // One request a millisecond for a day (86.4 million) moves the version at most burst + 1000 a second.
        held = refilled
        var now = seconds(1)
        var taken = 0
        for _ in 0..<100_000 {
            now = now + seconds(0.000_864 * 1000)
            let next = try edit(held, version: held.version + TimelineAdmission.burst)
            if (try? admission.admit(
                next, current: held, wall: "w", epoch: .known(Self.epoch), from: .controller, now: now))
                == true
            {
                held = next
                taken += 1
            }
        }
        XCTAssertLessThanOrEqual(
            Double(held.version),
            Double(2 * TimelineAdmission.burst) + 1 + now.seconds * TimelineAdmission.versionsPerSecond)
        XCTAssertLessThan(taken, 100, "a burst's worth only as fast as it refills")
    }

    func testAPeersTimeline_isTakenHoweverFarAhead_ifItSupersedes() throws {
        var admission = TimelineAdmission()
        let held = try first()
        let far = try edit(held, version: 1 << 40)
        XCTAssertTrue(
            try admission.admit(far, current: held, wall: "w", epoch: .known(Self.epoch), from: .peer, now: .zero))
        XCTAssertThrowsError(
            try admission.admit(held, current: far, wall: "w", epoch: .known(Self.epoch), from: .peer, now: .zero))
        // Two timelines of one version: the greater encoding wins on every node, whichever it held.
        let a = try edit(held, version: 2, at: start + seconds(1))
        let b = try edit(held, version: 2, at: start + seconds(2))
        XCTAssertNotEqual(a.supersedes(b), b.supersedes(a))
        let (winner, loser) = a.supersedes(b) ? (a, b) : (b, a)
        XCTAssertTrue(
            try admission.admit(winner, current: loser, wall: "w", epoch: .known(Self.epoch), from: .peer, now: .zero))
        XCTAssertThrowsError(
            try admission.admit(loser, current: winner, wall: "w", epoch: .known(Self.epoch), from: .peer, now: .zero))
        XCTAssertFalse(
            try admission.admit(
                winner, current: winner, wall: "w", epoch: .known(Self.epoch), from: .controller, now: .zero),
            "a resend changes nothing")
    }

    /// Random requests from controllers (any version, epoch and content) to random nodes, between
    /// which nodes ask each other as they do every few seconds: once they have asked each other a
    /// last time, every node holds the same timeline, and no version passed the bound on the sum.
    func testRandomRequestSequences_leaveEveryNodeOnOneTimeline() throws {
        var random = Xorshift(seed: 40)
        for trial in 0..<200 {
            let nodes = 2 + Int(random.next() % 4)
            var held = Array(repeating: try first(), count: nodes)
            var admissions = Array(repeating: TimelineAdmission(), count: nodes)
            var now = MediaTime.zero
            var seen = [try first()]
            for _ in 0..<(20 + Int(random.next() % 60)) {
                now = now + seconds(Double(random.next() % 2000) / 1000)
                let target = Int(random.next() % UInt64(nodes))
                switch random.next() % 3 {
                case 0, 1:
                    // A controller's edit of some timeline seen, at any step, maybe on another epoch.
                    let base = seen[Int(random.next() % UInt64(seen.count))]
                    let steps: [UInt64] = [
                        0, 1, 1, 2, 1000, TimelineAdmission.burst, TimelineAdmission.burst + 1, 1 << 32,
                    ]
                    let step = steps[Int(random.next() % UInt64(steps.count))]
                    var offered = try edit(
                        base, version: min(base.version + step, TimelineLimits.largestVersion),
                        at: start + seconds(Double(random.next() % 100)))
                    if random.next() % 5 == 0 { offered = try offered.reanchored(onto: random.next()) }
                    seen.append(offered)
                    if (try? admissions[target].admit(
                        offered, current: held[target], wall: "w", epoch: .known(Self.epoch), from: .controller,
                        now: now)) == true
                    {
                        held[target] = offered
                    }
                default:
                    gossip(target, &held, &admissions, now: now)
                }
            }
            for _ in 0..<nodes {
                for node in 0..<nodes { gossip(node, &held, &admissions, now: now) }
            }
            XCTAssertEqual(Set(held).count, 1, "trial \(trial): the nodes hold \(held.map(\.version))")
            XCTAssertTrue(held.allSatisfy { $0.epoch == Self.epoch }, "trial \(trial): a foreign epoch got in")
            let bound =
                1 + Double(nodes)
                * (Double(TimelineAdmission.burst) + now.seconds * TimelineAdmission.versionsPerSecond)
            XCTAssertLessThanOrEqual(Double(held[0].version), bound, "trial \(trial)")
        }
    }

    /// Node `asker` asks every other for its timeline and offers itself the one that supersedes
    /// the rest, as `Node.askPeers` does.
    private func gossip(_ asker: Int, _ held: inout [Timeline], _ admissions: inout [TimelineAdmission], now: MediaTime)
    {
        let newest = held.indices.filter { $0 != asker }.map { held[$0] }.max { $1.supersedes($0) }
        guard let newest, newest.supersedes(held[asker]) else { return }
        if (try? admissions[asker].admit(
            newest, current: held[asker], wall: "w", epoch: .known(Self.epoch), from: .peer, now: now)) == true
        {
            held[asker] = newest
        }
    }
}

/// A small seeded generator, so every run checks the same sequences.
private struct Xorshift {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
