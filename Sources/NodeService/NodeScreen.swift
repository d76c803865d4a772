import Foundation
import LockstepLocks
import LockstepTime
import Logging
import WallContent
import WallDisplay
import WallFollower
import WallPlayer
import WallProtocol
import WallTimeline

/// The node's player and what else its screen shows, as the follower drives them: the playlist's
/// passes through WallPlayer's `QueuePlayer`, and in its place the still, black or the test card.
///
/// Every call comes from the follower, one at a time; status reads come from anywhere, so the few
/// things this keeps are behind a lock.
public final class NodeScreen: FollowerPlayer, Sendable {
    /// How long an item may take to load.
    static let loadTimeout = MediaTime(value: 30, timescale: 1)
    /// How long the node waits for its player to complete a seek or a preroll. A pipeline wedged
    /// inside GStreamer may never complete one; the node must not wait with it: the preparation
    /// fails, the next one is tried on a new pipeline, and a shutdown is never held up.
    static let playerAnswerLimit = MediaTime(value: 8, timescale: 1)

    let settings: NodeSettings
    /// The players: the one on the screen; where the screen allows more (`standby`), the one a cut
    /// is prepared on while the first still plays, and one for each cue kept in standby
    /// (`standbyCues`), its first frame prerolled.
    public let players: [QueuePlayer]
    let frames: FrameLog
    /// The content the wall distributes, as this node holds it.
    public let content: ContentStore
    /// The node's own window, black between shows; nil when the sink has none of ours.
    let window: OutputWindow?
    private let logger: Logger
    /// The configured still, decoded for this screen, or why it cannot be shown.
    let still: Result<(rgb: [UInt8], size: PixelSize), PlayerError>?
    private let state = Mutex(Shown())
    private let roles = Mutex(Roles())

    /// Which player is on the screen, which one holds a cut prepared in standby, and which hold
    /// cues. A player in none of these roles is free.
    private struct Roles {
        var active = 0
        /// The player prepared in standby for the next start, if one is.
        var prepared: Int?
        /// The cue's pass, when the prepared player is a cue that was held in standby.
        var preparedCue: Pass?
        /// Whether the player on the screen holds the next start or held frame prepared undrawn,
        /// to take the glass at its time (the screen showed the playlist while it was prepared).
        var preparedInPlace = false
        /// The player a start is being prepared on in standby: no cue may take it meanwhile.
        var preparing: Int?
        /// Counts changes of what the screen shows (a cut, a show, a preparation), so a late clean-up
        /// never touches a player that has a new role since.
        var swaps = 0
        /// Players holding a cue's first pass prerolled, and that pass.
        var cues: [Int: Pass] = [:]
        /// The player a cue is being prerolled on.
        var loading: Int?
        /// Players just taken off the screen, emptied once the cut is on it.
        var settling: Set<Int> = []
        /// The cues wanted in standby, by name, with their first passes.
        var wanted: [(name: String, pass: Pass)] = []

        /// A player to prepare a cut on: a free one, else one settling after a cut (its clean-up
        /// then leaves it alone).
        mutating func takeSpare(of count: Int) -> Int? {
            let candidates = (0..<count).filter {
                $0 != active && $0 != loading && $0 != preparing && cues[$0] == nil
            }
            guard let spare = candidates.first(where: { !settling.contains($0) }) ?? candidates.first else {
                return nil
            }
            settling.remove(spare)
            return spare
        }

        /// Lets go of the player prepared for a start that has not come: free, unless it is a cue
        /// still wanted, which goes back to standby (its index is returned, to be trimmed).
        mutating func dropPrepared() -> Int? {
            defer {
                prepared = nil
                preparedCue = nil
                preparedInPlace = false
            }
            guard let index = prepared, let pass = preparedCue, wanted.contains(where: { $0.pass == pass }) else {
                return nil
            }
            cues[index] = pass
            return index
        }

        /// The players in no role.
        func free(of count: Int) -> [Int] {
            (0..<count).filter {
                $0 != active && $0 != prepared && $0 != preparing && $0 != loading && cues[$0] == nil
                    && !settling.contains($0)
            }
        }
    }

    private struct Shown {
        /// The media of the pass the player started from, while it plays the playlist.
        var media: String?
        /// The media a player prepared in standby will play once it starts.
        var pendingMedia: String?
        /// A picture on the screen in the player's place (the still, black or the test card), or
        /// prepared to be from `pictureAt`.
        var picture: StillPicture?
        var pictureAt: MediaTime?
        /// What the screen shows when the player does not: its show's name.
        var show: TimelineShow?
        /// Why what was asked could not be shown, if it could not.
        var problem: String?
        /// How long the last pictures shown on a one-pipeline screen took to prepare, from the
        /// player letting go of the sink (`showInPlace`).
        var inPlacePreparations: [MediaTime] = []
    }

    /// - Parameter players: one player, or two where the sink allows two pipelines at once
    ///   (`standbyAllowed(settings:window:)`): then a start from a playing screen is prepared on
    ///   the second while the first plays on, and the second takes over at the start's master time,
    ///   with no frame held while it prepared.
    public init(
        settings: NodeSettings, players: [QueuePlayer], frames: FrameLog, window: OutputWindow?, logger: Logger
    ) {
        precondition(!players.isEmpty, "a screen has a player")
        self.settings = settings
        self.players = players
        self.frames = frames
        content = ContentStore(root: settings.contentDirectory)
        self.window = window
        self.logger = logger
        still = settings.still.map { still in
            Result { () throws(PlayerError) in try StillPicture.decodeImage(atPath: still.path, crop: still.crop) }
        }
        if case .failure(let error) = still {
            logger.error(
                "the still cannot be shown: screens stay black between shows", metadata: ["still.error": "\(error)"])
        }
    }

    /// Why the configured still cannot be shown; nil when it can or there is none.
    public var stillProblem: String? {
        if case .failure(let error) = still { return "\(error)" }
        return nil
    }

    /// The player on the screen.
    public var player: QueuePlayer { players[roles.withLock { $0.active }] }

    /// Whether a node may keep more pipelines than the one on the screen (a cut's and the cues' in
    /// standby): its config allows it (`standby`), its sink draws into the node's own window, or is
    /// no screen at all (a network or test sink), and no sound device would be opened twice: no
    /// audio, a network or test sink, or a sound server's sink that mixes streams (PulseAudio,
    /// PipeWire). A KMS plane, a
    /// Wayland surface or a sink's own window can hold one pipeline only, as can an ALSA device.
    public static func standbyAllowed(settings: NodeSettings, window: OutputWindow?) -> Bool {
        guard settings.wall.node(settings.id)?.standby ?? true else { return false }
        let video = settings.video.sinkDescription
        let screens = [
            "kmssink", "waylandsink", "autovideosink", "glimagesink", "xvimagesink", "ximagesink",
            "fbdevsink", "gtksink", "d3dvideosink",
        ]
        let ownWindow = window != nil
        guard ownWindow || !screens.contains(where: video.contains) else { return false }
        guard let audio = settings.audioSink else { return true }
        return ["fakesink", "udpsink", "pulsesink", "pipewiresink"].contains(where: audio.contains)
    }

    /// The media the player plays now, if it plays the playlist.
    public var media: String? { state.withLock { $0.media } }

    /// What the screen shows in the player's place, and why something asked for could not be shown.
    public var shown: (show: TimelineShow?, problem: String?) { state.withLock { ($0.show, $0.problem) } }

    // MARK: FollowerPlayer

    public var queuedPasses: Int { player.items().count }
    public var isPaused: Bool { player.rate == 0 }

    public var latestFrame: FrameSample? {
        frames.latest.map { record in
            FrameSample(
                sequence: record.sequence, presentationTimestamp: record.presentationTimestamp,
                presentedAt: record.presentedAt, dueAt: record.dueAt)
        }
    }

    public func prepare(_ preparation: Preparation) async -> PreparationOutcome {
        // A change of its own: the clean-up of a show or cut before it leaves its players alone. A
        // cue held in standby that a newer edit overtook before its start goes back to standby,
        // still prerolled on its first frame: in a burst of cues the next one for it cuts at once.
        let overtaken = roles.withLock { roles -> Int? in
            roles.swaps += 1
            return roles.dropPrepared()
        }
        if let overtaken { returnToStandby(players[overtaken]) }
        // A cue held in standby: its player is ready already, the rest of its passes queue behind.
        // It takes over from the playlist playing or paused.
        let fromPicture = showsAPicture
        if showsThePlaylist || fromPicture, preparation.hold == nil, let held = takeCue(preparation.passes[0]) {
            return prepareHeldCue(preparation, on: held)
        }
        // A cue this node keeps in standby, not held when its cut came: said, with why, as the cut
        // is then prepared now and may miss its first frames.
        if let why = notHeld(preparation) {
            logger.notice(
                "a cue kept in standby was not held when its cut came: prepared now",
                metadata: ["timeline.media": "\(preparation.passes[0].media)", "why": "\(why)"])
        }
        let items: [(item: PlayerItem, path: String)]
        do {
            items = try preparation.passes.map { pass throws(NodeError) in try item(for: pass) }
        } catch {
            return .failed("\(error)")
        }
        // A start while the screen plays (or shows a picture) is prepared in standby, the screen
        // playing on meanwhile; so is a held frame (a paused wall a cue returns to). The spare is
        // marked as it is taken, so a cue kept in standby never loads over it.
        let inStandby = (showsThePlaylist && player.rate != 0) || fromPicture
        let (active, standby) = roles.withLock { roles -> (Int, Int?) in
            let spare = inStandby && players.count > 1 ? roles.takeSpare(of: players.count) : nil
            roles.preparing = spare
            return (roles.active, spare)
        }
        if let standby {
            return await prepare(preparation, items: items, on: players[standby], standby: standby, undrawn: true)
        }
        // On the screen's own player (one pipeline, or a paused screen), what is prepared stays
        // undrawn while the screen shows the playlist or a picture, and takes the glass at its
        // time: the old frame stays until then, as it does on a screen with a standby (a picture
        // on a one-pipeline screen lets go of the sink first, as the preparation begins).
        let undrawn = showsThePlaylist || state.withLock { $0.picture != nil }
        for index in roles.withLock({ $0.free(of: players.count) }) { empty(players[index]) }
        return await prepare(preparation, items: items, on: players[active], standby: nil, undrawn: undrawn)
    }

    /// Why `preparation`, the cut to a cue kept in standby, found no player holding it; nil when its
    /// first pass is no cue kept here, or the cut is no held cut (a hold, from a show).
    private func notHeld(_ preparation: Preparation) -> String? {
        guard preparation.hold == nil, let pass = preparation.passes.first else { return nil }
        // Read before the roles' lock: both take it.
        let shown = showsThePlaylist || showsAPicture
        return roles.withLock { roles -> String? in
            guard let name = roles.wanted.first(where: { $0.pass == pass })?.name else { return nil }
            if !shown { return "the screen showed neither the playlist nor a picture" }
            if let loading = roles.loading, roles.cues[loading] == nil {
                return "cue \(name) was being prerolled again on player \(loading)"
            }
            return
                "cue \(name) was on no player (\(roles.cues.count) cues held, \(roles.free(of: players.count).count) players free)"
        }
    }

    /// Whether the player on the screen shows the playlist, playing or paused (no picture in its
    /// place).
    private var showsThePlaylist: Bool {
        player.currentItem != nil && state.withLock { $0.picture == nil }
    }

    /// Whether a picture is on the screen (or due) in the player's place, and a cut from it can be
    /// prepared in standby, to start at its time over the picture.
    private var showsAPicture: Bool {
        players.count > 1 && player.masterClock != nil && state.withLock { $0.picture != nil }
    }

    /// The player holding `pass` prerolled for a cue, if one does: now the one prepared for the
    /// start, in one step, so it is never free meanwhile.
    private func takeCue(_ pass: Pass) -> Int? {
        roles.withLock { roles -> Int? in
            guard let index = roles.cues.first(where: { $0.value == pass })?.key else { return nil }
            roles.cues[index] = nil
            roles.prepared = index
            roles.preparedCue = pass
            return index
        }
    }

    /// A held cue taken for a start that never came: the passes queued behind its first go, and it
    /// stops at its end again, as `keepCues` holds it.
    private func returnToStandby(_ held: QueuePlayer) {
        for item in held.items().dropFirst() { held.remove(item) }
        held.actionAtItemEnd = .pause
        state.withLock { $0.pendingMedia = nil }
    }

    /// The start `preparation` asks for, on the player holding its first pass in standby: ready at
    /// once, the passes after it queued behind.
    private func prepareHeldCue(_ preparation: Preparation, on index: Int) -> PreparationOutcome {
        let held = players[index]
        do {
            for pass in preparation.passes.dropFirst() { held.insert(try item(for: pass).item, after: nil) }
            let path = try self.path(
                of: preparation.passes[0].media, content: preparation.passes[0].content(forNode: settings.id))
            state.withLock { $0.pendingMedia = path }
        } catch {
            // Not ready after all: it is emptied, and the cue prerolled afresh.
            empty(held)
            roles.withLock {
                $0.prepared = nil
                $0.preparedCue = nil
            }
            return .failed("\(error)")
        }
        held.actionAtItemEnd = preparation.advanceAtItemEnd ? .advance : .pause
        logger.debug("a cue held in standby takes the cut", metadata: ["screen.player": .value(index)])
        return .ready
    }

    /// Loads and prerolls `preparation` on `player`: the one on the screen, or the one in standby.
    /// Prepared `undrawn` (always in standby), its frame reaches the glass only at its time, and
    /// the status names its media from then.
    private func prepare(
        _ preparation: Preparation, items: [(item: PlayerItem, path: String)], on player: QueuePlayer, standby: Int?,
        undrawn: Bool
    ) async -> PreparationOutcome {
        defer { if standby != nil { roles.withLock { $0.preparing = nil } } }
        state.withLock { $0.pendingMedia = nil }
        if preparation.renewPipeline { player.renewPipelineAtNextLoad() }
        if standby == nil { takeDownPicture() }
        // Undrawn, its first frame must not reach the screen before the start; nor, for a held
        // frame, the entry's first frame the load prerolls on before the exact seek to it.
        player.showsPrerollFrame = !undrawn && preparation.hold == nil
        player.pause()
        player.removeAllItems()
        player.actionAtItemEnd = .advance
        for (item, _) in items { player.insert(item, after: nil) }
        // A held frame stays in its pass.
        player.actionAtItemEnd = preparation.advanceAtItemEnd && preparation.hold == nil ? .advance : .pause
        let first = items[0]
        do {
            try await waitUntilReady(first.item, name: preparation.passes[0].media)
        } catch {
            return .failed("\(error)")
        }
        if !undrawn { nowShows(media: first.path) }
        if let hold = preparation.hold {
            // Drawn, it shows as soon as it is there; undrawn, at its time (`presentHeld`).
            player.showsPrerollFrame = !undrawn
            guard await exactSeek(to: hold, on: player) != nil, await prerollPlayer(player) != nil else {
                player.renewPipelineAtNextLoad()
                return .failed("the player did not show item time \(hold.seconds) s of \(first.path)")
            }
        } else {
            guard await prerollPlayer(player) == true else {
                return .failed("the player did not preroll \(first.path)")
            }
        }
        if undrawn {
            roles.withLock { roles in
                if let standby { roles.prepared = standby } else { roles.preparedInPlace = true }
            }
            state.withLock { $0.pendingMedia = first.path }
        }
        return .ready
    }

    public func start(rate: PlaybackRate, itemTime: MediaTime, presentAt: MediaTime) throws {
        try swapIn(presentAt: presentAt) { (player) throws(PlayerError) in
            player.automaticallyWaitsToMinimizeStalling = false
            try player.setRate(rate.floatValue, time: itemTime, atHostTime: presentAt)
        }
    }

    /// A held frame prepared undrawn (in standby, or on the screen's player while it showed the
    /// playlist) takes the screen at `presentAt`: the player presents it through its sink then, as
    /// a start its first frame, and stays paused on it. Prepared drawn, it is there already.
    public func presentHeld(itemTime: MediaTime, presentAt: MediaTime) throws {
        guard roles.withLock({ $0.prepared != nil || $0.preparedInPlace }) else { return }
        try swapIn(presentAt: presentAt) { (player) throws(PlayerError) in
            player.automaticallyWaitsToMinimizeStalling = false
            try player.setRate(0, time: itemTime, atHostTime: presentAt)
        }
    }

    /// Starts the player prepared in standby (`begin`) in place of the one on the screen, which
    /// pauses just before `presentAt`; with none prepared, `begin` acts on the one on the screen.
    private func swapIn(presentAt: MediaTime, begin: (QueuePlayer) throws(PlayerError) -> Void) throws {
        let inPlace = roles.withLock { roles -> Int? in
            guard roles.prepared == nil, roles.preparedInPlace else { return nil }
            roles.preparedInPlace = false
            roles.swaps += 1
            return roles.swaps
        }
        if let inPlace {
            try beginInPlace(change: inPlace, presentAt: presentAt, begin: begin)
            return
        }
        let swap = roles.withLock { roles -> (from: Int, to: Int, swap: Int, settling: Set<Int>)? in
            guard let prepared = roles.prepared else { return nil }
            defer {
                roles.prepared = nil
                roles.preparedCue = nil
                roles.settling.insert(roles.active)
                roles.active = prepared
                roles.swaps += 1
            }
            return (roles.active, prepared, roles.swaps + 1, roles.settling.subtracting([prepared]))
        }
        guard let swap else {
            try begin(player)
            return
        }
        // The prepared player starts at the start's master time, and the one on the screen pauses
        // just before: it plays until the first frame of the other replaces its last, and a frame
        // of its own due at that instant is not drawn over the new one. So do players taken off
        // the screen by a cut whose time has not come (an edit came before it, and overtook it):
        // each would play on until that cut's time otherwise.
        let incoming = players[swap.to]
        let outgoing = players[swap.from]
        try begin(incoming)
        let overtaken = swap.settling.sorted().filter { players[$0].timeControlStatus != .paused }
        for index in [swap.from] + overtaken {
            try? players[index].setRate(0, time: .invalid, atHostTime: presentAt - Self.outgoingPauseAhead)
        }
        // A picture on the screen stays there until the incoming player's first frame draws over it.
        let picture = incoming.masterClock.flatMap { replacePicture(with: nil, presentAt: presentAt, clock: $0) }
        let media = takePendingMedia()
        // At the cut's time the status names the new media (until then the screen shows the old);
        // once the cut is on the screen, the incoming player shows what it prerolls again (a pause
        // shows its exact frame), and the outgoing one lets go of its media.
        afterChange(swap.swap, presentAt: presentAt, clock: incoming.masterClock) { screen, latest in
            if latest { screen.nowShows(media: media) }
        } settled: { screen, _ in
            picture?.close()
            // Unless a cut since took it as its spare, the outgoing player is emptied, and free.
            screen.roles.withLock { roles in
                if roles.settling.remove(swap.from) != nil { screen.empty(outgoing) }
            }
            screen.drawsPrerolls(incoming, unlessChangedSince: swap.swap)
        }
    }

    /// Starts (`begin`) the player on the screen, which holds change `change` prepared undrawn: at
    /// `presentAt` its frame reaches the glass, and the status names its media; once it is there,
    /// the player shows what it prerolls again (a pause shows its exact frame).
    private func beginInPlace(
        change: Int, presentAt: MediaTime, begin: (QueuePlayer) throws(PlayerError) -> Void
    ) throws {
        let player = self.player
        let media = takePendingMedia()
        do {
            try begin(player)
        } catch {
            player.showsPrerollFrame = true
            throw error
        }
        afterChange(change, presentAt: presentAt, clock: player.masterClock) { screen, latest in
            if latest { screen.nowShows(media: media) }
        } settled: { screen, _ in
            screen.drawsPrerolls(player, unlessChangedSince: change)
        }
    }

    /// Once change `change` is on the glass, `player` shows what it prerolls again (a pause shows
    /// its exact frame); not if a change since (a preparation, undrawn) has it: checked and set
    /// under one lock, as a preparation takes it.
    private func drawsPrerolls(_ player: QueuePlayer, unlessChangedSince change: Int) {
        roles.withLock { roles in
            if roles.swaps == change { player.showsPrerollFrame = true }
        }
    }

    /// The media a start prepared undrawn will play, taken for the status to name once it is on
    /// the glass.
    private func takePendingMedia() -> String? {
        state.withLock { state -> String? in
            defer { state.pendingMedia = nil }
            return state.pendingMedia
        }
    }

    /// The status names `media` as what the screen shows: the player's, no show in its place.
    private func nowShows(media: String?) {
        state.withLock { state in
            state.media = media
            state.show = nil
            state.problem = nil
        }
    }

    /// The two steps after change `number` of what the screen shows, due at `presentAt` on `clock`
    /// (at once without one): `onGlass` at that time, `settled` `swapSettling` later, once the
    /// outgoing player has surely paused; each told whether no change came since.
    private func afterChange(
        _ number: Int, presentAt: MediaTime, clock: MasterClock?,
        onGlass: @escaping @Sendable (NodeScreen, _ latest: Bool) -> Void,
        settled: @escaping @Sendable (NodeScreen, _ latest: Bool) -> Void
    ) {
        let wait = clock.map { presentAt - $0.now() } ?? .zero
        Task { [weak self] in
            try? await Task.sleep(for: .nanoseconds(max(0, wait.nanoseconds ?? 0)))
            if let self { onGlass(self, self.isLatest(number)) }
            try? await Task.sleep(for: .nanoseconds(Self.swapSettling.nanoseconds ?? 0))
            if let self { settled(self, self.isLatest(number)) }
        }
    }

    // MARK: Cues in standby

    /// The cues held prerolled now, of those wanted, while the screen shows the playlist: each
    /// cuts without preparation.
    public var cuesReady: [String] {
        guard showsThePlaylist else { return [] }
        return roles.withLock { roles in
            roles.wanted.filter { wanted in roles.cues.values.contains(wanted.pass) }.map(\.name)
        }
    }

    /// One round of keeping `wanted` prerolled, each cue's first pass on a player of its own: a
    /// player holding a pass no longer wanted lets go of it, and the first wanted pass not held is
    /// prerolled on a free player (one at a time; the caller repeats). A cue taken by a cut is
    /// prerolled again the same way.
    public func keepCues(_ wanted: [(name: String, pass: Pass)]) async {
        let passes = Set(wanted.map(\.pass))
        let (stale, next) = roles.withLock { roles -> ([Int], (index: Int, pass: Pass)?) in
            roles.wanted = wanted
            let stale = roles.cues.filter { !passes.contains($0.value) }.map(\.key)
            for index in stale { roles.cues[index] = nil }
            guard roles.loading == nil,
                let missing = wanted.first(where: { !roles.cues.values.contains($0.pass) })?.pass,
                let free = roles.free(of: players.count).first
            else { return (stale, nil) }
            roles.loading = free
            return (stale, (free, missing))
        }
        for index in stale { empty(players[index]) }
        guard let next else { return }
        let player = players[next.index]
        var prerolled = false
        do {
            let (item, _) = try item(for: next.pass)
            player.showsPrerollFrame = false
            player.pause()
            player.removeAllItems()
            player.actionAtItemEnd = .pause
            player.insert(item, after: nil)
            try await waitUntilReady(item, name: next.pass.media)
            prerolled = await prerollPlayer(player) == true
        } catch {
            logger.warning(
                "a cue cannot be held in standby",
                metadata: ["timeline.media": "\(next.pass.media)", "error": "\(error)"])
        }
        let kept = roles.withLock { roles -> Bool in
            guard roles.loading == next.index else { return false }
            roles.loading = nil
            if prerolled { roles.cues[next.index] = next.pass }
            return prerolled
        }
        if !kept { empty(player) }
    }

    /// The output went away and came back (a compositor restarted): every pipeline drew on the old
    /// one, so each is built anew at its next load, and the cues held on them are prerolled again.
    public func outputLost() {
        for player in players { player.renewPipelineAtNextLoad() }
        let held = roles.withLock { roles -> [Int] in
            defer { roles.cues = [:] }
            return Array(roles.cues.keys)
        }
        for index in held { empty(players[index]) }
    }

    /// How much before a cut the outgoing player pauses: more than the jitter of waking for it,
    /// less than a frame, as the follower's scheduled pauses.
    static let outgoingPauseAhead = MediaTime(value: 5, timescale: 1000)

    /// How long after a cut the outgoing player is emptied: past the pause at the cut's time.
    static let swapSettling = MediaTime(value: 300, timescale: 1000)

    /// Stops `player` and lets go of its items (its decoders and buffers).
    private func empty(_ player: QueuePlayer) {
        player.pause()
        player.removeAllItems()
    }

    public func pause(presentAt: MediaTime) throws {
        try player.setRate(0, time: .invalid, atHostTime: presentAt)
    }

    public func enqueue(_ pass: Pass) {
        do {
            player.insert(try item(for: pass).item, after: nil)
        } catch {
            logger.error("a pass cannot be queued", metadata: ["timeline.media": "\(pass.media)", "error": "\(error)"])
        }
    }

    public func setAdvancesAtItemEnd(_ advances: Bool) {
        player.actionAtItemEnd = advances ? .advance : .pause
    }

    public func showExactFrame(itemTime: MediaTime) async -> Bool? {
        // Paused, nothing undrawn waits for its time: the frame moved to is drawn, even where a
        // start just now left its player's prerolls undrawn.
        let player = self.player
        player.showsPrerollFrame = true
        let answer = await exactSeek(to: itemTime, on: player)
        if answer == nil { player.renewPipelineAtNextLoad() }
        return answer
    }

    /// Puts `show` on the screen in the player's place at `presentAt` on the master clock (at once
    /// with no time, or when it has passed).
    ///
    /// Where the screen may hold more than one pipeline, the picture is prepared now, as a clip is
    /// in standby, and its sink draws it at its time: the player on the screen pauses just before,
    /// and lets go of its media once the picture is on the glass. Elsewhere (a KMS plane, a
    /// Wayland surface), the player lets go of the sink first, as shortly before the show's time as
    /// the picture's preparation allows, and the picture is drawn at its time (`showInPlace`).
    public func show(_ show: TimelineShow, presentAt: MediaTime) async {
        guard show != .playlist, players.count > 1, let clock = player.masterClock else {
            await showInPlace(show, presentAt: presentAt)
            return
        }
        let (picture, problem) = makePicture(for: show, clock: clock)
        let (change, overtaken) = roles.withLock { roles -> (Int, Int?) in
            roles.swaps += 1
            return (roles.swaps, roles.dropPrepared())
        }
        if let overtaken { returnToStandby(players[overtaken]) }
        picture?.present(at: presentAt)
        try? player.setRate(0, time: .invalid, atHostTime: presentAt - Self.outgoingPauseAhead)
        let replaced = replacePicture(with: picture, presentAt: presentAt, clock: clock)
        logger.info(
            "screen shows \(show) at its time",
            metadata: ["screen.present_at_ns": .nanoseconds(presentAt)].merging(
                problem.map { ["screen.problem": "\($0)"] } ?? [:], uniquingKeysWith: { $1 }))
        // Once the picture is on the glass the status says what the screen shows; then the
        // players let go of their media (but the cues held) and the picture it replaced is closed;
        // unless another change came since.
        said(show, problem: problem, change: change, presentAt: presentAt, clock: clock) { screen, latest in
            replaced?.close()
            if latest { screen.stopPlayer() }
        }
    }

    /// Once change `change` is on the glass, the status says the screen shows `show` (unless
    /// another change came since); `settled` follows (`afterChange`).
    private func said(
        _ show: TimelineShow, problem: String?, change: Int, presentAt: MediaTime, clock: MasterClock,
        settled: @escaping @Sendable (NodeScreen, _ latest: Bool) -> Void = { _, _ in }
    ) {
        afterChange(
            change, presentAt: presentAt, clock: clock,
            onGlass: { screen, latest in
                guard latest else { return }
                screen.state.withLock {
                    $0.show = show
                    $0.problem = problem
                }
            }, settled: settled)
    }

    /// Whether no change of what the screen shows came since change `number`.
    private func isLatest(_ number: Int) -> Bool {
        roles.withLock { $0.swaps == number }
    }

    /// A copy of what the screen presents: the picture in the player's place once it is on the
    /// glass, else the player's frame (`Player.copyCurrentVideoFrame`).
    public func copyCurrentVideoFrame(format: VideoFrame.Format, size: PixelSize?) throws(PlayerError) -> VideoFrame? {
        let now = player.masterClock?.now()
        let picture = state.withLock { state -> StillPicture? in
            guard let at = state.pictureAt, let now else { return state.picture }
            return at <= now ? state.picture : nil
        }
        if let picture, let frame = try picture.copyCurrentVideoFrame(format: format, size: size) { return frame }
        return try player.copyCurrentVideoFrame(format: format, size: size)
    }

    /// How long before its time a picture on a screen that holds one pipeline begins to be
    /// prepared, until this node has measured its own preparations: within the follower's
    /// `showAhead` (300 ms), which is when the show is handed over.
    static let inPlaceAhead = MediaTime(value: 250, timescale: 1000)

    /// How long before its time a picture on a one-pipeline screen begins to be prepared: the
    /// slowest of this node's last preparations, a quarter more and 20 ms.
    private var inPlaceLead: MediaTime {
        let slowest: MediaTime? = state.withLock { $0.inPlacePreparations.max() }
        guard let slowest, let nanoseconds = slowest.nanoseconds else { return Self.inPlaceAhead }
        let margin: Int64 = nanoseconds / 4 + 20_000_000
        return MediaTime(nanoseconds: nanoseconds + margin)
    }

    /// The show on a screen that holds one pipeline. The player must let go of the sink before
    /// the picture can take it, so it does as late as the picture's preparation allows
    /// (`inPlaceLead` before `presentAt`; the glass keeps the last frame meanwhile, as it does
    /// while a clip is prepared on such a screen); the picture, prepared on the master clock, is
    /// then drawn at its time, as on any screen, and is late only when its preparation took
    /// longer than this node's recent ones. Without a time (or a master clock), at once; the
    /// playlist's show only takes the picture down, at its time.
    private func showInPlace(_ show: TimelineShow, presentAt: MediaTime?) async {
        let change = roles.withLock { roles -> Int in
            roles.swaps += 1
            return roles.swaps
        }
        let clock = presentAt == nil ? nil : player.masterClock
        if let presentAt, let clock {
            let ahead: MediaTime = show == .playlist ? .zero : inPlaceLead
            let wait: MediaTime = presentAt - ahead - clock.now()
            if wait > .zero { try? await Task.sleep(for: .nanoseconds(wait.nanoseconds ?? 0)) }
            // A change since (a newer show, a cut prepared) has the screen now.
            guard isLatest(change) else { return }
        }
        let began = LocalClock.monotonic.now()
        stopPlayer()
        // The sink keeps its last frame drawn until the player has let go of it.
        for player in players { await player.settle() }
        takeDownPicture()
        guard show != .playlist else { return }
        let (picture, problem) = makePicture(for: show, clock: clock)
        let took = LocalClock.monotonic.now() - began
        guard let presentAt, let clock else {
            picture?.present()
            state.withLock {
                $0.picture = picture
                $0.pictureAt = nil
                $0.show = show
                $0.problem = problem
            }
            logger.info("screen shows \(show)", metadata: problem.map { ["screen.problem": "\($0)"] } ?? [:])
            return
        }
        picture?.present(at: presentAt)
        state.withLock {
            $0.picture = picture
            $0.pictureAt = picture == nil ? nil : presentAt
            $0.inPlacePreparations.append(took)
            if $0.inPlacePreparations.count > 8 { $0.inPlacePreparations.removeFirst() }
        }
        var metadata: Logger.Metadata = [
            "screen.present_at_ns": .nanoseconds(presentAt), "screen.prepared_in_ns": .nanoseconds(took),
        ]
        if let problem { metadata["screen.problem"] = "\(problem)" }
        let late: MediaTime = clock.now() - presentAt
        if late > .zero { metadata["screen.late_ns"] = .nanoseconds(late) }
        logger.info("screen shows \(show) at its time, in the player's place", metadata: metadata)
        said(show, problem: problem, change: change, presentAt: presentAt, clock: clock)
    }

    /// Makes `picture` the one on the screen from `presentAt`, and gives back the one it replaces,
    /// to close once `picture` is on the glass. One never shown is closed now; one shown stops
    /// repeating, its last frame on the glass until `picture` draws over it.
    private func replacePicture(with picture: StillPicture?, presentAt: MediaTime, clock: MasterClock)
        -> StillPicture?
    {
        let (old, oldAt) = state.withLock { state -> (StillPicture?, MediaTime?) in
            defer {
                state.picture = picture
                state.pictureAt = picture == nil ? nil : presentAt
            }
            return (state.picture, state.pictureAt)
        }
        guard let old else { return nil }
        if let oldAt, oldAt > clock.now() {
            old.close()
            return nil
        }
        old.hide()
        return old
    }

    /// The picture for `show`, prepared on `clock` (nil: GStreamer's own), not yet presented; when
    /// it cannot be made, black, and why.
    private func makePicture(for show: TimelineShow, clock: MasterClock?) -> (StillPicture?, String?) {
        var problem: String?
        var picture: StillPicture?
        switch show {
        case .playlist, .black:
            break
        case .stopped:
            if case .success(let image) = still {
                (picture, problem) = prepare(image.rgb, size: image.size, what: "the still", clock: clock)
            }
        case .still(let name):
            (picture, problem) = prepareStill(named: name, clock: clock)
        case .testCard:
            (picture, problem) = prepareTestCard(clock: clock)
        }
        if let picture { return (picture, nil) }
        let black = outputSize.map { size in
            prepare([UInt8](repeating: 0, count: size.width * size.height * 3), size: size, what: "black", clock: clock)
        }
        if let black, black.0 != nil { return (black.0, problem) }
        // No picture at all (no video output): the node's own window, cleared.
        window?.clear()
        return (nil, problem ?? black?.1)
    }

    /// The size the screen's pictures are made at: the output's, else the tile's.
    private var outputSize: PixelSize? {
        guard let video = player.videoOutput else { return nil }
        let wall = settings.wall
        let node = wall.node(settings.id) ?? wall.nodes[0]
        return video.outputSize ?? PixelSize(width: node.tile.width, height: node.tile.height)
    }

    /// Shows what the screen shows before any timeline: the still, or black.
    public func showBetweenShows() async {
        await showInPlace(.stopped, presentAt: nil)
    }

    // MARK: Helpers

    /// Empties the players, but for the cues held in standby: nothing of the playlist stays on
    /// the screen.
    public func stopPlayer() {
        let (held, overtaken) = roles.withLock { roles -> (Set<Int>, Int?) in
            let overtaken = roles.dropPrepared()
            roles.settling = []
            return (Set(roles.cues.keys).union(roles.loading.map { [$0] } ?? []), overtaken)
        }
        if let overtaken { returnToStandby(players[overtaken]) }
        for (index, player) in players.enumerated() where !held.contains(index) { empty(player) }
        state.withLock {
            $0.media = nil
            $0.pendingMedia = nil
        }
    }

    private func takeDownPicture() {
        let picture = state.withLock { state -> StillPicture? in
            defer {
                state.picture = nil
                state.pictureAt = nil
            }
            return state.picture
        }
        picture?.close()
    }

    /// `rgb` prepared to be shown in the player's place on `clock`, with the player's latency; or
    /// why it cannot be.
    private func prepare(
        _ rgb: [UInt8], size: PixelSize, caption: [CaptionLine] = [], what: String, clock: MasterClock?
    ) -> (StillPicture?, String?) {
        guard let video = player.videoOutput else { return (nil, "this node has no video output") }
        do {
            let picture = try StillPicture(
                rgb: rgb, size: size, caption: caption, output: video, clock: clock, latency: player.pipelineLatency,
                realtimePriority: player.realtimeRenderPriority)
            return (picture, nil)
        } catch {
            logger.error("\(what) cannot be shown", metadata: ["screen.error": "\(error)"])
            return (nil, "\(what) cannot be shown: \(error)")
        }
    }

    /// An image from the media roots, this screen's tile of it.
    private func prepareStill(named name: String, clock: MasterClock?) -> (StillPicture?, String?) {
        let path: String
        do {
            path = try settings.mediaRoots.resolve(name.replacingOccurrences(of: "{id}", with: settings.id))
        } catch {
            return (nil, "the still \(name): \(error)")
        }
        let wall = settings.wall
        let node = wall.node(settings.id)
        let tile =
            name.contains("{id}") || node == nil
            ? (x: 0.0, y: 0.0, width: 1.0, height: 1.0) : node!.tile.normalized(in: wall.canvas)
        do {
            let image = try StillPicture.decodeImage(
                atPath: path, crop: NormalizedRect(x: tile.x, y: tile.y, width: tile.width, height: tile.height))
            return prepare(image.rgb, size: image.size, what: "the still \(name)", clock: clock)
        } catch {
            return (nil, "the still \(name): \(error)")
        }
    }

    /// This screen's test card: its id, wall and tile as text, its outline in a colour of its own,
    /// the wall's grid, diagonals and circle (continuous across screens placed as configured) and
    /// colour bars (`TestCard`).
    private func prepareTestCard(clock: MasterClock?) -> (StillPicture?, String?) {
        guard let size = outputSize else { return (nil, "this node has no video output") }
        let wall = settings.wall
        let index = wall.nodes.firstIndex { $0.id == settings.id } ?? 0
        let node = wall.nodes[index]
        let card = TestCard(
            canvas: (wall.canvas.width, wall.canvas.height),
            tile: DisplayRect(x: node.tile.x, y: node.tile.y, width: node.tile.width, height: node.tile.height),
            output: (size.width, size.height), index: index)
        let caption = [
            CaptionLine(settings.id, height: 0.16),
            CaptionLine(
                "\(wall.name): screen \(index + 1) of \(wall.nodes.count), tile \(node.tile.geometry)", height: 0.045),
        ]
        return prepare(card.render(), size: size, caption: caption, what: "the test card", clock: clock)
    }

    /// An item for one pass: its media (the node's own for a template), from `pass.start` to its end.
    private func item(for pass: Pass) throws(NodeError) -> (item: PlayerItem, path: String) {
        let path = try self.path(of: pass.media, content: pass.content(forNode: settings.id))
        let item = PlayerItem(url: URL(fileURLWithPath: path))
        item.playbackStartTime = pass.start
        item.forwardPlaybackEndTime = pass.end
        return (item, path)
    }

    /// The file this node plays for `media`: its own copy of `content` when the wall distributes
    /// it, else the file the media roots hold under that name.
    func path(of media: String, content: ContentID?) throws(NodeError) -> String {
        if let content {
            guard let path = self.content.path(of: content) else { throw .contentMissing(name: media, id: content) }
            return path
        }
        do {
            return try settings.mediaRoots.resolve(media.replacingOccurrences(of: "{id}", with: settings.id))
        } catch {
            throw .rejected(error)
        }
    }

    /// Waits until `item` is ready to play; its errors name it `name`, as the timeline does.
    private func waitUntilReady(_ item: PlayerItem, name: String) async throws(NodeError) {
        let limit = Self.loadTimeout
        let status = await withTaskGroup(of: PlayerItem.Status?.self) { group in
            group.addTask {
                for await status in item.statusUpdates where status != .unknown { return status }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .nanoseconds(limit.nanoseconds ?? 0))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch status {
        case .readyToPlay?: return
        case .failed?: throw .mediaFailed(item.error ?? .itemNotReady("load"), name: name)
        case .unknown?, nil: throw .timedOut(what: "loading \(name) (\(item.asset.url.path))", after: limit)
        }
    }

    /// Seeks the player exactly to `itemTime`: whether the seek finished, or nil when the player
    /// gave no answer within `playerAnswerLimit` (or the node is shutting down).
    private func exactSeek(to itemTime: MediaTime, on player: QueuePlayer) async -> Bool? {
        await playerAnswer("an exact seek to \(itemTime.seconds) s") { done in
            player.seek(to: itemTime, toleranceBefore: .zero, toleranceAfter: .zero, completionHandler: done)
        }
    }

    /// Prerolls the player for rate 1: whether that finished, or nil as for `exactSeek(to:)`.
    private func prerollPlayer(_ player: QueuePlayer) async -> Bool? {
        let answer = await playerAnswer("a preroll") { done in player.preroll(atRate: 1, completionHandler: done) }
        if answer == nil { player.cancelPendingPrerolls() }
        return answer
    }

    private func playerAnswer(
        _ request: String, _ start: @Sendable (@escaping @Sendable (Bool) -> Void) -> Void
    ) async -> Bool? {
        let answer = await Deadline.firstAnswer(within: Self.playerAnswerLimit, start)
        if answer == nil, !Task.isCancelled {
            logger.error(
                "the player did not answer; its pipeline will be replaced",
                metadata: ["player.request": "\(request)", "player.limit_ns": .nanoseconds(Self.playerAnswerLimit)])
        }
        return answer
    }
}
