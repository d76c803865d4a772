import LockstepTime
import WallFollower
import WallTimeline

/// Runs a timeline a node accepted through everything a node later computes from it: positions at
/// extreme host times, every edit and its result, a new epoch, and the follower's state machine
/// adopting it, queueing its passes and preparing and starting them. Nothing may trap.
public enum TimelineExercise {
    /// The host times every timeline is tried at, beside its own start and `extra`.
    public static let extremeHostTimes: [MediaTime] = [
        .zero, MediaTime(nanoseconds: .max), MediaTime(nanoseconds: .min), .positiveInfinity, .negativeInfinity,
        .invalid, MediaTime(nanoseconds: TimelineLimits.largestHostTime),
        MediaTime(nanoseconds: -TimelineLimits.largestHostTime),
    ]

    public static func exercise(_ timeline: Timeline, at extra: [MediaTime] = []) {
        for hostTime in [timeline.start] + extremeHostTimes + extra {
            let position = timeline.position(at: hostTime)
            _ = position.passEnd.map { timeline.position(at: $0) }
            _ = timeline.position(at: position.passStart)
            for edit in [
                TimelineEdit.pause, .resume, .next, .previous, .goTo(entry: 0), .stop, .black, .rate(PlaybackRate(2)),
                .seek(entry: 0, itemTime: position.entry.inPoint), .identify(duration: MediaTime(value: 5, timescale: 1)),
            ] {
                guard let edited = try? timeline.applying(edit, at: hostTime) else { continue }
                _ = edited.position(at: hostTime)
                _ = edited.position(at: MediaTime(nanoseconds: TimelineLimits.largestHostTime))
                _ = try? edited.reanchored(onto: 2).position(at: hostTime)
            }
            follow(timeline, from: hostTime)
        }
    }

    /// The follower's policy on `timeline` from `hostTime` on: adopted, ticked on a usable clock,
    /// every preparation answered ready, a few frames on.
    static func follow(_ timeline: Timeline, from hostTime: MediaTime) {
        guard hostTime.isNumeric, let start = hostTime.nanoseconds else { return }
        var machine = FollowerStateMachine(wall: timeline.wall)
        machine.adopt(timeline, now: hostTime)
        var now = start
        var actions: [FollowerAction] = []
        for step in 0..<6 {
            let clock = ClockReading.usable(now: MediaTime(nanoseconds: now), epoch: timeline.epoch)
            actions += machine.tick(
                FollowerObservation(clock: clock, latestFrame: nil, queuedPasses: step % 3, playerPaused: step < 2))
            for action in actions {
                if case .prepare(let preparation) = action {
                    _ = machine.prepared(preparation.id, outcome: .ready, now: MediaTime(nanoseconds: now))
                }
            }
            actions = []
            _ = machine.report(now: MediaTime(nanoseconds: now))
            now = now.addingReportingOverflow(250_000_000).overflow ? now : now + 250_000_000
        }
    }
}
