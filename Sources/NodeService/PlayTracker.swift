import LockstepTime
import WallProtocol
import WallTimeline

/// What a screen plays, as plays (a pass of a clip, a still) from when to when on the master clock:
/// a pure state machine, told what the timeline calls for and which frames the screen presented,
/// and answering each play as it ends. No I/O: `PlayLog` samples the node and keeps what it answers.
///
/// A play's edges are the timeline's (the pass's start, the edit that cut it, its out point), to
/// the nanosecond, however late the sample that finds them; its frames are those the sink presented
/// with their times on the glass inside it, so a play the screen did not show says so.
struct PlayTracker: Sendable {
    /// The play on the screen, as far as it has gone.
    struct Play: Sendable, Hashable {
        /// What makes it one play: a new segment (any edit that changes what plays), a new pass or
        /// cycle, a new show.
        struct Key: Hashable, Sendable {
            var epoch: UInt64
            var segmentFrom: MediaTime
            var show: TimelineShow
            var entry: Int?
            var pass: Int?
            var cycle: Int128?
        }

        var key: Key
        var kind: PlayRecord.Kind
        var media: String
        var content: ContentID?
        var playlist: String?
        var cue: String?
        var entry: Int?
        var pass: Int?
        var mediaFrom: MediaTime?
        var rate: PlaybackRate
        /// Master times.
        var from: MediaTime
        var passEnd: MediaTime?
        var version: UInt64
        var frames = 0
        /// For a still: whether a sample found it on the screen.
        var shown = false
        /// The screen's problem while it played, if it had one.
        var problem: String?
        var lastSeen: MediaTime

        /// Where in the media it was at master time `time` (a clip's).
        func mediaTime(at time: MediaTime) -> MediaTime? {
            mediaFrom.map { $0 + PlayTracker.scaled(time - from, by: rate) }
        }
    }

    /// A play that ended, at `to` on the master clock.
    struct Ended: Sendable, Hashable {
        var play: Play
        var to: MediaTime
        var ending: PlayRecord.Ending
    }

    /// What one sample of the node found.
    struct Sample: Sendable {
        var now: MediaTime
        /// The timeline the node follows, if any.
        var timeline: Timeline?
        /// The times on the glass of the frames presented since the last sample.
        var frameTimes: [MediaTime] = []
        /// Whether the screen shows a picture in the player's place (a still), without a problem.
        var pictureShown = false
        /// Why the screen cannot show what was asked, if it cannot.
        var problem: String?
    }

    let node: String
    /// The node's still between shows, if it has one: `wallctl stop` shows it.
    let betweenShowsStill: String?
    private(set) var current: Play?
    /// When the first sample came: no play starts before it (after a restart the node cannot say
    /// what it showed while it was down).
    private var firstSample: MediaTime?

    init(node: String, betweenShowsStill: String?) {
        self.node = node
        self.betweenShowsStill = betweenShowsStill
    }

    /// Takes `sample` in; returns the play it found ended, if one did.
    mutating func observe(_ sample: Sample) -> Ended? {
        let now = sample.now
        if firstSample == nil { firstSample = now }
        let found = sample.timeline.flatMap { play(in: $0, at: now) }
        var ended: Ended?
        if var playing = current, playing.key != found?.key {
            let to = end(of: playing, next: found, timeline: sample.timeline, now: now)
            playing.frames += sample.frameTimes.count { $0 >= playing.from && $0 < to }
            let ending: PlayRecord.Ending =
                if let passEnd = playing.passEnd, to >= passEnd - Self.endTolerance {
                    .end
                } else if found == nil, sample.timeline?.position(at: now).state == .paused { .paused } else { .cut }
            ended = Ended(play: playing, to: to, ending: ending)
            current = nil
        }
        if current == nil, var found {
            found.frames = sample.frameTimes.count { $0 >= found.from }
            current = found
        } else if current != nil {
            let from = current!.from
            current!.frames += sample.frameTimes.count { $0 >= from }
        }
        if current != nil {
            current!.lastSeen = now
            if current!.kind == .still, sample.pictureShown { current!.shown = true }
            if let problem = sample.problem { current!.problem = problem }
        }
        return ended
    }

    /// The node stops at master time `now`: the play on the screen ends there.
    mutating func stop(at now: MediaTime) -> Ended? {
        guard let playing = current else { return nil }
        current = nil
        return Ended(play: playing, to: max(playing.from, min(now, playing.passEnd ?? now)), ending: .nodeStopped)
    }

    /// A pass's end this close counts as reached (the timeline's own rounding).
    static let endTolerance = MediaTime(value: 1, timescale: 1000)

    /// Where `playing` ended, found at `now`: where the next play began, else the edit that ended it,
    /// else its out point, else the last sample that saw it.
    private func end(of playing: Play, next: Play?, timeline: Timeline?, now: MediaTime) -> MediaTime {
        var to = playing.lastSeen
        if let next, next.from > playing.from {
            to = next.from
        } else if let timeline, timeline.epoch == playing.key.epoch,
            case let segment = timeline.segment(at: now), segment.from > playing.from
        {
            to = segment.from
        } else if let passEnd = playing.passEnd, passEnd <= now {
            to = passEnd
        }
        if let passEnd = playing.passEnd { to = min(to, passEnd) }
        return max(playing.from, min(to, now))
    }

    /// The play `timeline` calls for at `now`, if it calls for one (a clip playing, a still).
    private func play(in timeline: Timeline, at now: MediaTime) -> Play? {
        let position = timeline.position(at: now)
        let segment = timeline.segment(at: now)
        var key = Play.Key(epoch: timeline.epoch, segmentFrom: segment.from, show: position.show)
        let start = max(segment.from, firstSample ?? segment.from)
        var play: Play
        switch position.show {
        case .playlist where position.state == .playing:
            key.entry = position.entryIndex
            key.pass = position.pass
            key.cycle = position.cycle
            let from = max(position.passStart, start)
            play = Play(
                key: key, kind: .clip, media: position.entry.media(forNode: node),
                content: position.entry.content(forNode: node), entry: position.entryIndex, pass: position.pass,
                mediaFrom: position.itemTime - Self.scaled(now - from, by: position.rate), rate: position.rate,
                from: from, passEnd: position.passEnd, version: timeline.version, lastSeen: now)
        case .still(let image):
            play = Play(
                key: key, kind: .still, media: image, rate: .normal, from: start, version: timeline.version,
                lastSeen: now)
        case .stopped:
            guard let still = betweenShowsStill else { return nil }
            play = Play(
                key: key, kind: .still, media: still, rate: .normal, from: start, version: timeline.version,
                lastSeen: now)
        default:
            return nil
        }
        play.cue = segment.cue
        if segment.cue == nil, let schedule = timeline.schedule, current?.key.segmentFrom != segment.from {
            play.playlist = schedule.changes(from: segment.from, days: 0).first?.playlist
        } else if let current, current.key.segmentFrom == segment.from {
            play.playlist = current.playlist
        }
        return play
    }

    /// `duration` at `rate`.
    static func scaled(_ duration: MediaTime, by rate: PlaybackRate) -> MediaTime {
        guard let nanoseconds = duration.nanoseconds else { return .zero }
        let scaled = Int128(nanoseconds) * Int128(rate.numerator) / Int128(max(rate.denominator, 1))
        return MediaTime(nanoseconds: Int64(clamping: scaled))
    }
}
