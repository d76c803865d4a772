import LockstepTime
import WallFollower
import WallTimeline

/// One node's player and the glass it drives, in simulated time: what a `QueuePlayer` does with
/// the follower's actions, reduced to what the wall's lockstep depends on. Media runs at 25 frames
/// a second (40 ms a frame, whole nanoseconds); a frame is named by its number in its media.
///
/// The glass keeps its history, so a test reads what the screen showed at any time: the ground
/// truth the follower's own report is checked against.
final class SimulatedScreen {
    /// What the glass shows.
    enum Glass: Hashable, CustomStringConvertible {
        case nothing
        case frame(media: String, number: Int64)
        case show(String)

        var description: String {
            switch self {
            case .nothing: return "nothing"
            case .frame(let media, let number): return "\(media)#\(number)"
            case .show(let kind): return kind
            }
        }
    }

    static let frame = MediaTime(value: 40, timescale: 1000)

    private enum Mode {
        case idle
        /// Prerolled or held on a frame of the current pass.
        case still
        /// Presenting the current pass: `itemStart` of it at host time `hostStart`.
        case playing(hostStart: MediaTime, itemStart: MediaTime, rate: PlaybackRate)
    }

    let node: String
    private(set) var history: [(at: MediaTime, glass: Glass)] = [(.zero, .nothing)]
    private var queue: [Pass] = []
    private var advances = true
    private var mode = Mode.idle
    private var pauseAt: MediaTime?
    private var advancedTo = MediaTime.zero
    private var sequence: UInt64 = 0
    private(set) var latest: FrameSample?
    /// Frames are presented this late after they are due (a node off the wall).
    var presentationDelay = MediaTime.zero
    /// Starts that were prepared, for tests counting preparations.
    private(set) var preparations = 0
    private(set) var pipelinesRenewed = 0
    /// How much later than the pass before it ends the next gapless hand-over starts its pass (once):
    /// GStreamer's, made late after the process was stopped, slips the running time so.
    var handOverSlip = MediaTime.zero

    init(node: String) {
        self.node = node
    }

    var queuedPasses: Int { queue.count }
    var isPaused: Bool {
        if case .playing = mode { return false }
        return true
    }

    /// What the glass showed at true time `time`.
    func glass(at time: MediaTime) -> Glass {
        var low = 0
        var high = history.count
        while low < high {
            let middle = (low + high) / 2
            if history[middle].at <= time { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? .nothing : history[low - 1].glass
    }

    /// True time minus master time: the screen runs on the master's time, its history on true time.
    private var historyOffset = MediaTime.zero

    /// The master started over: its time is now `delta` less than it was.
    func rebase(by delta: MediaTime) {
        if case .playing(let hostStart, let itemStart, let rate) = mode {
            mode = .playing(hostStart: hostStart - delta, itemStart: itemStart, rate: rate)
        }
        pauseAt = pauseAt.map { $0 - delta }
        advancedTo = advancedTo - delta
        latest = latest.map { frame in
            var frame = frame
            frame.dueAt = frame.dueAt - delta
            frame.presentedAt = frame.presentedAt - delta
            return frame
        }
        historyOffset = historyOffset + delta
    }

    private func show(_ glass: Glass, at masterTime: MediaTime) {
        let time = masterTime + historyOffset
        if history.last?.glass == glass { return }
        if let last = history.last, last.at == time {
            history[history.count - 1] = (time, glass)
        } else {
            history.append((time, glass))
        }
    }

    private func frameNumber(_ itemTime: MediaTime) -> Int64 {
        (itemTime.nanoseconds ?? 0) / 40_000_000
    }

    private func media(_ pass: Pass) -> String { pass.media.replacingOccurrences(of: "{id}", with: node) }

    /// Presents every frame due up to `time`.
    func advance(to time: MediaTime) {
        guard time > advancedTo else { return }
        if let held = heldFrame, held.at <= time {
            show(held.glass, at: held.at)
            heldFrame = nil
        }
        while case .playing(let hostStart, let itemStart, let rate) = mode, let pass = queue.first {
            let limit = pauseAt.map { MediaTime.minimum($0, time) } ?? time
            let scale = { (media: MediaTime) -> MediaTime in
                media.multiplied(byRatio: Int64(rate.denominator), Int64(rate.numerator))
            }
            // Frames from the one holding itemStart, each presented when its time comes.
            var number = nextFrame ?? frameNumber(itemStart)
            var presentedAll = false
            while true {
                let pts = Self.frame * number
                guard pts < pass.end else {
                    presentedAll = true
                    break
                }
                let due = pts <= itemStart ? hostStart : hostStart + scale(pts - itemStart)
                if due > limit { break }
                present(number, of: pass, due: due)
                number += 1
            }
            nextFrame = number
            let end = hostStart + scale(pass.end - itemStart)
            // As GStreamer's: the next pass becomes current once this one's last frame is presented
            // (the next stream's start follows that frame to the sink), while the frame is still on
            // the glass.
            if presentedAll, queue.count > 1, rate == .normal {
                queue.removeFirst()
                mode = .playing(hostStart: end + handOverSlip, itemStart: queue[0].start, rate: rate)
                handOverSlip = .zero
                nextFrame = nil
                continue
            }
            if let pauseAt, pauseAt <= time, pauseAt < end {
                mode = .still
                self.pauseAt = nil
                advancedTo = pauseAt
                continue
            }
            guard end <= time else { break }
            advancedTo = end
            nextFrame = nil
            if !advances {
                mode = .still
            } else {
                queue.removeFirst()
                mode = .idle
            }
        }
        advancedTo = time
    }

    /// The next frame of the current pass to present while playing.
    private var nextFrame: Int64?

    private func present(_ number: Int64, of pass: Pass, due: MediaTime) {
        sequence += 1
        let presentedAt = due + presentationDelay
        latest = FrameSample(
            sequence: sequence, presentationTimestamp: Self.frame * number, presentedAt: presentedAt, dueAt: due)
        show(.frame(media: media(pass), number: number), at: presentedAt)
    }

    // MARK: The follower's actions

    func prepare(_ preparation: Preparation, at time: MediaTime) {
        advance(to: time)
        preparations += 1
        if preparation.renewPipeline { pipelinesRenewed += 1 }
        queue = preparation.passes
        advances = preparation.advanceAtItemEnd
        pauseAt = nil
        heldFrame = nil
        // As a node's screen: while it shows the playlist, what is prepared stays undrawn until
        // its time; otherwise a preroll shows the frame that holds its time.
        var undrawn = true
        if case .idle = mode { undrawn = false }
        mode = .still
        let first = preparation.passes[0]
        let shown = preparation.hold ?? first.start
        if !undrawn { show(.frame(media: media(first), number: frameNumber(shown)), at: time) }
        pendingStart = shown
    }

    /// The item time the player is prerolled or held at.
    private var pendingStart: MediaTime?
    /// A held frame prepared undrawn, and when it reaches the glass.
    private var heldFrame: (glass: Glass, at: MediaTime)?

    func presentHeld(itemTime: MediaTime, presentAt: MediaTime, at time: MediaTime) {
        advance(to: time)
        guard let pass = queue.first else { return }
        heldFrame = (.frame(media: media(pass), number: frameNumber(itemTime)), MediaTime.maximum(presentAt, time))
    }

    func start(rate: PlaybackRate, itemTime: MediaTime, presentAt: MediaTime, at time: MediaTime) {
        advance(to: time)
        guard !queue.isEmpty else { return }
        pauseAt = nil
        mode = .playing(hostStart: presentAt, itemStart: itemTime, rate: rate)
        nextFrame = nil
    }

    func pause(presentAt: MediaTime, at time: MediaTime) {
        advance(to: time)
        pauseAt = presentAt
    }

    func enqueue(_ pass: Pass) { queue.append(pass) }
    func setAdvances(_ value: Bool) { advances = value }

    func showExactFrame(_ itemTime: MediaTime, at time: MediaTime) {
        advance(to: time)
        guard let pass = queue.first else { return }
        show(.frame(media: media(pass), number: frameNumber(itemTime)), at: time)
    }

    func show(_ show: TimelineShow, at time: MediaTime) {
        advance(to: time)
        queue = []
        mode = .idle
        pauseAt = nil
        self.show(.show(show.kind), at: time)
    }

    /// The process stopped: nothing is presented, and when it goes on its pipeline presents from
    /// where it stopped, `duration` late.
    func freeze(at time: MediaTime, for duration: MediaTime) {
        advance(to: time)
        if case .playing(let hostStart, let itemStart, let rate) = mode {
            mode = .playing(hostStart: hostStart + duration, itemStart: itemStart, rate: rate)
        }
        advancedTo = time + duration
    }
}
