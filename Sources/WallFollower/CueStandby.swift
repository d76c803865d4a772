import LockstepTime
import WallTimeline

extension Timeline {
    /// The first pass `cue` cuts to when applied at `hostTime`: what a node keeps prerolled in
    /// standby for it, so the cut needs no preparation. Nil when the cue cuts to nothing playing
    /// (a still, black, a pause) or does not apply to this timeline (an entry it does not have).
    ///
    /// Where the cue interrupts the playlist does not change the pass: a clip starts at its in
    /// point, an entry cue at its entry's point, whenever the cue comes.
    public func cutPass(of cue: Cue, named name: String, at hostTime: MediaTime) -> Pass? {
        guard let edited = try? applying(.cue(name: name, cue), at: hostTime) else { return nil }
        let position = edited.position(at: hostTime)
        guard position.show == .playlist, position.state == .playing, position.rate == .normal else { return nil }
        return Pass(position, from: position.itemTime)
    }
}
