import LockstepLocks
import LockstepTime
import Logging
import WallFollower
import WallTimeline
import XCTest

/// The real `Follower`, the driver a node runs, against a fake player, clock and state file,
/// stepped by hand in simulated time: what it asks of the player and when, what it keeps, and what
/// it refuses. (The state machine's own policy is tested in `FollowerStateMachineTests` and on
/// simulated walls.)
final class FollowerDriverTests: XCTestCase {
    /// A master clock that moves only when told to.
    final class FakeClock: FollowerClock {
        let time: Mutex<MediaTime>
        let epoch: UInt64

        init(at time: MediaTime, epoch: UInt64) {
            self.time = Mutex(time)
            self.epoch = epoch
        }

        func reading() -> ClockReading { .usable(now: time.withLock { $0 }, epoch: epoch) }

        /// The time the process stood still, as the test says.
        let stood = Mutex(MediaTime.zero)
        func stoodStill() -> MediaTime { stood.withLock { $0 } }
    }

    /// A player that does at once what it is asked, and notes it.
    final class FakePlayer: FollowerPlayer {
        enum Call: Hashable {
            case prepare(media: [String], start: MediaTime, hold: MediaTime?)
            case start(rate: PlaybackRate, itemTime: MediaTime, presentAt: MediaTime)
            case presentHeld(itemTime: MediaTime, presentAt: MediaTime)
            case pause(presentAt: MediaTime)
            case enqueue(media: String)
            case show(TimelineShow, presentAt: MediaTime)
        }

        let calls = Mutex<[Call]>([])
        /// How many more starts it refuses, as a player whose item failed does.
        let refusals = Mutex(0)
        private let passes = Mutex(0)
        private let paused = Mutex(true)
        /// What happens while the next preparation is under way (once).
        let duringNextPreparation = Mutex<(@Sendable () -> Void)?>(nil)

        func prepare(_ preparation: Preparation) async -> PreparationOutcome {
            duringNextPreparation.withLock { during in
                during?()
                during = nil
            }
            calls.withLock {
                $0.append(
                    .prepare(
                        media: preparation.passes.map(\.media), start: preparation.passes.first?.start ?? .zero,
                        hold: preparation.hold))
            }
            passes.withLock { $0 = preparation.passes.count }
            return .ready
        }

        struct Refused: Error {}

        func start(rate: PlaybackRate, itemTime: MediaTime, presentAt: MediaTime) throws {
            let refuse = refusals.withLock { refusals -> Bool in
                defer { refusals = max(0, refusals - 1) }
                return refusals > 0
            }
            if refuse { throw Refused() }
            calls.withLock { $0.append(.start(rate: rate, itemTime: itemTime, presentAt: presentAt)) }
            paused.withLock { $0 = false }
        }

        func presentHeld(itemTime: MediaTime, presentAt: MediaTime) throws {
            calls.withLock { $0.append(.presentHeld(itemTime: itemTime, presentAt: presentAt)) }
        }

        func pause(presentAt: MediaTime) throws {
            calls.withLock { $0.append(.pause(presentAt: presentAt)) }
            paused.withLock { $0 = true }
        }

        func enqueue(_ pass: Pass) {
            calls.withLock { $0.append(.enqueue(media: pass.media)) }
            passes.withLock { $0 += 1 }
        }

        func setAdvancesAtItemEnd(_ advances: Bool) {}
        func showExactFrame(itemTime: MediaTime) async -> Bool? { true }

        func show(_ show: TimelineShow, presentAt: MediaTime) async {
            calls.withLock { $0.append(.show(show, presentAt: presentAt)) }
        }

        var queuedPasses: Int { passes.withLock { $0 } }
        var isPaused: Bool { paused.withLock { $0 } }
        var latestFrame: FrameSample? { nil }

        var starts: [Call] { calls.withLock { $0 }.filter { if case .start = $0 { true } else { false } } }
        var preparations: Int { calls.withLock { $0 }.filter { if case .prepare = $0 { true } else { false } }.count }
    }

    /// A state file that keeps what it is given, or fails as a full disk does.
    final class FakeKeeper: TimelineKeeper {
        let kept = Mutex<[UInt64]>([])
        let full = Mutex(false)

        func keep(_ timeline: Timeline) throws(TimelineStoreError) {
            if full.withLock({ $0 }) {
                throw TimelineStoreError.unwritable(path: "/var/lib/lockstep/timeline.json", reason: "no space left")
            }
            kept.withLock { $0.append(timeline.version) }
        }
    }

    private func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1000) }

    private let clock = FakeClock(at: MediaTime(value: 100, timescale: 1), epoch: 7)
    private let player = FakePlayer()
    private let keeper = FakeKeeper()

    private func follower() -> Follower {
        Follower(
            wall: "w", configuration: FollowerStateMachine.Configuration(), player: player, clock: clock,
            keeper: keeper, logger: Logger(label: "test"))
    }

    /// Steps `follower` a tick (40 ms) of simulated time at a time, for at most `seconds`, until the
    /// player has started.
    private func runUntilStarted(_ follower: Follower, within seconds: Double = 2) async {
        for _ in 0..<Int(seconds / 0.04) where player.starts.isEmpty {
            await follower.step()
            clock.time.withLock { $0 = $0 + MediaTime(value: 40, timescale: 1000) }
        }
    }

    /// Ten seconds of /m/a.mp4 from master time `start`, looping.
    private func timeline(version: UInt64 = 1, wall: String = "w", start: Double = 101) throws -> Timeline {
        try Timeline(
            wall: wall, version: version, epoch: 7,
            playlist: Playlist(entries: [TimelineEntry(media: "/m/a.mp4", outPoint: seconds(10))]),
            start: seconds(start))
    }

    func testATimeline_isKept_preparedAndStartedAtItsMasterTime() async throws {
        let follower = follower()
        let wanted = try timeline()

        let adopted = try await follower.adopt(wanted)
        await runUntilStarted(follower)

        XCTAssertTrue(adopted)
        XCTAssertEqual(keeper.kept.withLock { $0 }, [1], "kept before it is followed on")
        XCTAssertEqual(
            player.calls.withLock { $0 }.first, .prepare(media: ["/m/a.mp4", "/m/a.mp4"], start: .zero, hold: nil),
            "the first pass from its start, and the loop's next")
        XCTAssertEqual(player.starts, [.start(rate: .normal, itemTime: .zero, presentAt: seconds(101))])
        let again = try await follower.adopt(wanted)
        XCTAssertFalse(again, "the one followed already")
    }

    /// The process stopped (SIGSTOP) for 7.1 s of a preparation that took 7.3 s: ready too late,
    /// it tries again as far ahead as the preparation itself needs (twice its 200 ms, and 150 ms),
    /// not 4 s ahead: back in step 0.6 s after it woke.
    func testAPreparationThatSpannedAStop_isTriedAgainAsSoonAsItsOwnTimeNeeds() async throws {
        let follower = follower()
        try await follower.adopt(try timeline())
        let clock = clock
        let woke = Mutex(MediaTime.zero)
        player.duringNextPreparation.withLock {
            $0 = {
                clock.time.withLock { $0 = $0 + MediaTime(value: 7300, timescale: 1000) }
                clock.stood.withLock { $0 = $0 + MediaTime(value: 7100, timescale: 1000) }
                woke.withLock { $0 = clock.time.withLock { $0 } }
            }
        }

        await runUntilStarted(follower)

        let start = try XCTUnwrap(player.starts.first)
        guard case .start(_, _, let presentAt) = start else { return XCTFail("\(start)") }
        XCTAssertEqual(
            presentAt, woke.withLock { $0 } + MediaTime(value: 590, timescale: 1000),
            "a tick (40 ms) after it woke, 550 ms ahead")
    }

    func testAnotherWallsTimeline_orAnOlderOne_isRefused_andTheOneFollowedStays() async throws {
        let follower = follower()
        try await follower.adopt(try timeline(version: 2))

        do {
            try await follower.adopt(try timeline(version: 3, wall: "elsewhere"))
            XCTFail("another wall's timeline was followed")
        } catch {
            XCTAssertTrue("\(error)".contains("elsewhere"), "\(error)")
        }
        do {
            try await follower.adopt(try timeline(version: 1))
            XCTFail("an older timeline was followed")
        } catch {
            XCTAssertTrue("\(error)".contains("timeline refused"), "\(error)")
        }
        let followed = await follower.timeline
        XCTAssertEqual(followed?.version, 2)
        XCTAssertEqual(keeper.kept.withLock { $0 }, [2])
    }

    func testATimelineTheDiskCannotKeep_isFollowedAnyway_andSaysWhy() async throws {
        keeper.full.withLock { $0 = true }
        let follower = follower()

        do {
            try await follower.adopt(try timeline())
            XCTFail("a timeline not kept was said kept")
        } catch {
            XCTAssertTrue("\(error)".contains("no space left"), "\(error)")
        }
        await runUntilStarted(follower)

        let followed = await follower.timeline
        XCTAssertEqual(followed?.version, 1, "the wall stays in step whatever the disk does")
        XCTAssertEqual(player.starts, [.start(rate: .normal, itemTime: .zero, presentAt: seconds(101))])
    }

    func testAStartThePlayerRefuses_isPreparedAgain_andStartedOnceItTakesIt() async throws {
        player.refusals.withLock { $0 = 1 }
        let follower = follower()
        try await follower.adopt(try timeline())

        await runUntilStarted(follower, within: 4)

        XCTAssertGreaterThanOrEqual(player.preparations, 2, "prepared again after the refusal")
        XCTAssertEqual(player.starts.count, 1, "started once the player took it")
    }
}
