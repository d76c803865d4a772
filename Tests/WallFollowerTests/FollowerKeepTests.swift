import LockstepLocks
import LockstepTime
import Logging
import WallFollower
import WallTimeline
import XCTest

/// The follower's one writer of the state file: a timeline followed while the disk refuses it (a
/// read-only or full state directory) is written again once the disk takes it, so a node
/// restarted after the disk recovers does not go back to an older timeline.
final class FollowerKeepTests: XCTestCase {
    func testATimelineNotKept_isWrittenAgain_onceTheDiskTakesIt() async throws {
        let keeper = RefusingKeeper()
        let follower = Follower(
            wall: "w", configuration: FollowerStateMachine.Configuration(displayLatency: .zero), player: IdlePlayer(),
            clock: NoClock(), keeper: keeper, logger: Logger(label: "test"))
        let running = Task { await follower.run() }
        defer { running.cancel() }
        let first = try Timeline(
            wall: "w", epoch: 1,
            playlist: Playlist(entries: [TimelineEntry(media: "a.mp4", outPoint: MediaTime(value: 5, timescale: 1))]),
            start: MediaTime(value: 100, timescale: 1))
        keeper.refusing.withLock { $0 = true }
        do {
            try await follower.adopt(first)
            XCTFail("kept on a disk that refuses")
        } catch {
            guard case .notKept = error else { return XCTFail("\(error)") }
        }
        let followed = await follower.timeline
        XCTAssertEqual(followed, first, "followed all the same")
        keeper.refusing.withLock { $0 = false }
        let deadline = Date().addingTimeInterval(5)
        while keeper.kept.withLock({ $0 }) != first, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        XCTAssertEqual(keeper.kept.withLock { $0 }, first, "written again once the disk takes it")
    }
}

/// A state file on a disk that refuses writes while `refusing`.
private final class RefusingKeeper: TimelineKeeper {
    let refusing = Mutex(false)
    let kept = Mutex<Timeline?>(nil)

    func keep(_ timeline: Timeline) throws(TimelineStoreError) {
        guard !refusing.withLock({ $0 }) else { throw .unwritable(path: "state", reason: "Read-only file system") }
        kept.withLock { $0 = timeline }
    }
}

/// A clock never usable: the follower waits, and does nothing to its player.
private struct NoClock: FollowerClock {
    func reading() -> ClockReading { .unusable(state: "unsynced") }
}

/// A player asked for nothing while the clock is not usable.
private final class IdlePlayer: FollowerPlayer {
    func prepare(_ preparation: Preparation) async -> PreparationOutcome { .failed("not in this test") }
    func start(rate: PlaybackRate, itemTime: MediaTime, presentAt: MediaTime) throws {}
    func presentHeld(itemTime: MediaTime, presentAt: MediaTime) throws {}
    func pause(presentAt: MediaTime) throws {}
    func enqueue(_ pass: Pass) {}
    func setAdvancesAtItemEnd(_ advances: Bool) {}
    func showExactFrame(itemTime: MediaTime) async -> Bool? { nil }
    func show(_ show: TimelineShow, presentAt: MediaTime) async {}
    var queuedPasses: Int { 0 }
    var isPaused: Bool { true }
    var latestFrame: FrameSample? { nil }
}
