internal import CGStreamer
internal import CLockstepShims
import LockstepLocks
import LockstepTime

/// Which of an item's streams a pipeline plays, as playbin3 numbers them: each kind's streams in
/// the order of the stream collection, which is the container's track order, as libavformat's.
struct StreamChoice: Sendable, Hashable {
    enum Kind: Sendable, Hashable { case video, audio, text }

    /// The number of the video stream that plays, among the video streams (alternate pictures:
    /// another angle, a signed version); nil for none.
    var video: Int?
    /// The number of the audio stream that plays, among the audio streams; nil for none.
    var audio: Int?
    /// The number of the subtitle stream to show, among the text streams; nil for none. Subtitles
    /// are drawn by the video output (`SubtitleOverlay`), from libavformat: playbin3 decodes no text.
    var text: Int?

    /// What playbin3 picks by itself: the first video and audio stream, no subtitles.
    static let playbinDefault = StreamChoice(video: 0, audio: 0, text: nil)

    /// Whether the stream numbered `number` among those of `kind` plays.
    func plays(_ kind: Kind, number: Int) -> Bool {
        switch kind {
        case .video: return video == number
        case .audio: return audio == number
        case .text: return false
        }
    }
}

/// Chooses the streams decodebin3 decodes, as each new collection arrives (its `select-stream`
/// signal), and sends changes to a playing pipeline (a `select-streams` event).
///
/// The signal decides before anything is decoded, with no race. A `select-streams` event sent
/// while a pipeline prerolls can hold it for good in GStreamer 1.22 (seen with Matroska: no
/// preroll, and CRITICALs from decodebin3), so a change made then waits for the preroll.
///
/// An adaptive source (HLS) offers its alternate renditions in its collection but downloads and
/// exposes only the one it picks, whatever the signal answers: what is decoded is known from
/// decodebin3's STREAMS_SELECTED message, and when that differs from the choice once prerolled,
/// the choice is sent upstream as an event (once for each choice).
final class StreamChooser: @unchecked Sendable {
    private struct State {
        var wanted = StreamChoice.playbinDefault
        /// The choice the streams are decoded with: what the signal answered or an event asked.
        var applied: StreamChoice?
        var collection: GObjectRef<GstStreamCollection>?
        var prerolled = false
        /// The streams decodebin3 last said it decodes (STREAMS_SELECTED).
        var selected: Set<String>?
        /// The streams the last event asked for.
        var sent: Set<String>?
        /// When the last event was sent (the monotonic clock).
        var sentAt: MediaTime?
        /// Whether the signal's answers are what decodebin3 decodes: for local files. An adaptive
        /// source (hlsdemux2) selects upstream, text included, whatever the signal answers.
        var signalDecides = false
    }

    private let state = Mutex(State())
    private let hasVideoOutput: Bool
    private let hasAudioOutput: Bool
    /// The decodebin3 inside the playbin, by address: the collections whose selection the signal
    /// answers come from it.
    private let decoders = Mutex<Set<UInt>>([])
    /// The sequence numbers of the STREAMS_SELECTED messages `confirmSelection` posts, while they
    /// are being posted.
    private let confirmations = Mutex<Set<UInt32>>([])

    init(hasVideoOutput: Bool, hasAudioOutput: Bool) {
        self.hasVideoOutput = hasVideoOutput
        self.hasAudioOutput = hasAudioOutput
    }

    /// Connects to the `select-stream` signal of the decodebin3 inside `playbin`, made with it.
    func watch(_ playbin: Element) {
        GStreamer.forEachDescendant(of: playbin, factory: "decodebin3") { element in
            decoders.withLock { _ = $0.insert(UInt(bitPattern: element)) }
            lockstep_signal_connect(
                element, "select-stream", unsafeBitCast(selectStream, to: GCallback.self),
                handOff(self), releaseChooser)
        }
    }

    /// Plays `choice` from now on; a prerolled pipeline is told at once. Its subtitles are the
    /// overlay's: a change of them alone sends nothing.
    func choose(_ choice: StreamChoice, on playbin: Element) {
        state.withLock { $0.wanted = StreamChoice(video: choice.video, audio: choice.audio, text: nil) }
        sendIfNeeded(to: playbin)
    }

    /// A new item is loading from `uri`: its collection is still to come, and the signal will
    /// answer for it.
    func loading(_ uri: String) {
        state.withLock { state in
            state.signalDecides = uri.hasPrefix("file:")
            state.collection = nil
            state.applied = nil
            state.prerolled = false
            state.selected = nil
            state.sent = nil
            state.sentAt = nil
        }
    }

    /// Whether a `select-streams` event was sent less than `interval` ago.
    ///
    /// GStreamer 1.22's decodebin3 can fail a switch that a flushing seek meets halfway: it
    /// reassigns the output slot, the seek's flush arrives, and the demuxer's next push returns
    /// a plain error ("Internal data stream error", reason error, from qtdemux; seen 1 switch in
    /// 30 when a seek follows the switch at once). The choice itself is sound: the player loads
    /// the item again, and the signal then applies it before anything is decoded.
    func switched(within interval: MediaTime) -> Bool {
        state.withLock { state in
            state.sentAt.map { LocalClock.monotonic.now() - $0 < interval } ?? false
        }
    }

    /// decodebin3 posted the streams it decodes (STREAMS_SELECTED): a choice the source did not
    /// follow is sent now.
    func streamsSelected(_ message: UnsafeMutablePointer<GstMessage>, on playbin: Element) {
        var ids: Set<String> = []
        for index in 0..<gst_message_streams_selected_get_size(message) {
            guard let stream = gst_message_streams_selected_get_stream(message, index) else { continue }
            if let id = gst_stream_get_stream_id(stream) { ids.insert(String(cString: id)) }
            gst_object_unref(stream)
        }
        state.withLock { $0.selected = ids }
        sendIfNeeded(to: playbin)
    }

    /// Follows decodebin3's STREAM_COLLECTION `message`, on the thread that posted it, with the
    /// selection the signal answers for that collection (a STREAMS_SELECTED from the decodebin3).
    ///
    /// playbin3 (GStreamer 1.22) guesses from every collection which kinds of stream will play,
    /// the first of each kind, subtitles included, and asks its sink for an input of each kind;
    /// only decodebin3's STREAMS_SELECTED corrects the guess. decodebin3 posts the collection once
    /// for each stream of its input as the stream appears, and STREAMS_SELECTED once, when the
    /// selection is active, on another thread. A collection handled after it (a subtitle track's,
    /// last to appear) leaves the sink waiting for a text input that nothing feeds, and the
    /// pipeline never prerolls: 1 load in 8 of a Matroska file with subtitles, here, until the
    /// watchdog's rebuild; 4 in a row failed an item in CI. Following each collection at once
    /// with its selection leaves the last word with the selection, whatever the threads' order.
    /// Nothing else reads the message (`isConfirmation`).
    ///
    /// Only where the signal's answers are what is decoded: local files (`signalDecides`), and a
    /// collection whose every stream the signal answers (for one it does not, a data track,
    /// decodebin3 picks a stream of each kind left, text included). The message comes from the
    /// decodebin3's parent, uridecodebin3, and so reaches playbin3 without passing through
    /// uridecodebin3's own handling of STREAMS_SELECTED, which takes a lock a gapless switch may
    /// hold on this thread.
    func confirmSelection(after message: UnsafeMutablePointer<GstMessage>) {
        guard let source = message.pointee.src,
            decoders.withLock({ $0.contains(UInt(bitPattern: source)) }),
            let choice = state.withLock({ $0.signalDecides ? $0.wanted : nil })
        else { return }
        var parsed: UnsafeMutablePointer<GstStreamCollection>?
        gst_message_parse_stream_collection(message, &parsed)
        guard let parsed else { return }
        let collection = GObjectRef(owning: parsed)
        var answered = 0
        var playing: [UnsafeMutablePointer<GstStream>] = []
        forEachStream(of: collection.pointer) { stream, kind, number in
            answered += 1
            if plays(choice, kind, number) { playing.append(stream) }
        }
        guard answered == Int(gst_stream_collection_get_size(collection.pointer)),
            let parent = gst_object_get_parent(source)
        else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(parent)) }
        guard let selected = gst_message_new_streams_selected(parent, collection.pointer) else { return }
        for stream in playing { gst_message_streams_selected_add(selected, stream) }
        let seqnum = gst_util_seqnum_next()
        gst_message_set_seqnum(selected, seqnum)
        confirmations.withLock { _ = $0.insert(seqnum) }
        parent.withMemoryRebound(to: GstElement.self, capacity: 1) { element in
            _ = gst_element_post_message(element, selected)
        }
        confirmations.withLock { _ = $0.remove(seqnum) }
    }

    /// Whether STREAMS_SELECTED `message` is one `confirmSelection` posts.
    func isConfirmation(_ message: UnsafeMutablePointer<GstMessage>) -> Bool {
        let seqnum = gst_message_get_seqnum(message)
        return confirmations.withLock { $0.contains(seqnum) }
    }

    /// The next item, played gaplessly, comes from `uri`: a source that is no local file may select
    /// streams the signal did not answer for, so selections are no longer confirmed.
    func follows(_ uri: String) {
        if !uri.hasPrefix("file:") { state.withLock { $0.signalDecides = false } }
    }

    /// A stream collection was posted (STREAM_COLLECTION).
    func collectionArrived(_ collection: GObjectRef<GstStreamCollection>?) {
        state.withLock { $0.collection = collection }
    }

    /// The pipeline prerolled: a change made while it did is sent now.
    func prerolled(_ playbin: Element) {
        state.withLock { $0.prerolled = true }
        sendIfNeeded(to: playbin)
    }

    private func sendIfNeeded(to playbin: Element) {
        let send = state.withLock { state -> [String]? in
            guard state.prerolled, let collection = state.collection else { return nil }
            var wanted: [String] = []
            var inCollection: Set<String> = []
            forEachStream(of: collection.pointer) { stream, kind, number in
                guard let id = gst_stream_get_stream_id(stream).map({ String(cString: $0) }) else { return }
                inCollection.insert(id)
                if plays(state.wanted, kind, number) { wanted.append(id) }
            }
            let wantedSet = Set(wanted)
            // What decodebin3 last said it decodes, if it names streams of this collection: after
            // a gapless change the new item's collection comes before its selection, and the
            // old item's streams are no measure of it. The signal answers for the new item's
            // streams before they are decoded; an event then, with the new item's streams not
            // all at decodebin3's inputs yet, would have decodebin3 (GStreamer 1.22) drop the
            // output of a kind whose stream is still to come, and the item never starts
            // (`StartInLastFrameTests`: 1 gapless change in about 25 under load).
            let selected = state.selected.flatMap { $0.isSubset(of: inCollection) ? $0 : nil }
            let differs = selected.map { $0 != wantedSet } ?? (state.applied != state.wanted)
            guard differs, state.sent != wantedSet else { return nil }
            state.applied = state.wanted
            state.sent = wantedSet
            state.sentAt = LocalClock.monotonic.now()
            return wanted
        }
        guard let send else { return }
        var selected: UnsafeMutablePointer<GList>?
        for id in send { selected = g_list_append(selected, g_strdup(id)) }
        if let event = gst_event_new_select_streams(selected) {
            gst_element_send_event(playbin.pointer, event)
        }
        g_list_free_full(selected, g_free)
    }

    /// The signal's answer for `stream` of `collection`: 1 to decode it, 0 not to.
    fileprivate func answer(
        _ collection: UnsafeMutablePointer<GstStreamCollection>, _ stream: UnsafeMutablePointer<GstStream>
    ) -> Int32 {
        let choice = state.withLock { state -> StreamChoice in
            state.applied = state.wanted
            return state.wanted
        }
        var answer: Int32 = -1
        forEachStream(of: collection) { candidate, kind, number in
            if candidate == stream { answer = plays(choice, kind, number) ? 1 : 0 }
        }
        return answer
    }

    private func plays(_ choice: StreamChoice, _ kind: StreamChoice.Kind, _ number: Int) -> Bool {
        switch kind {
        case .video: return hasVideoOutput && choice.plays(.video, number: number)
        case .audio: return hasAudioOutput && choice.plays(.audio, number: number)
        case .text: return false
        }
    }

    /// Calls `body` with each video, audio and text stream, its kind and its number among its kind.
    private func forEachStream(
        of collection: UnsafeMutablePointer<GstStreamCollection>,
        _ body: (UnsafeMutablePointer<GstStream>, StreamChoice.Kind, Int) -> Void
    ) {
        var seen: [StreamChoice.Kind: Int] = [:]
        for index in 0..<gst_stream_collection_get_size(collection) {
            guard let stream = gst_stream_collection_get_stream(collection, index) else { continue }
            let type = gst_stream_get_stream_type(stream).rawValue
            let kind: StreamChoice.Kind
            if type & GST_STREAM_TYPE_VIDEO.rawValue != 0 {
                kind = .video
            } else if type & GST_STREAM_TYPE_AUDIO.rawValue != 0 {
                kind = .audio
            } else if type & GST_STREAM_TYPE_TEXT.rawValue != 0 {
                kind = .text
            } else {
                continue
            }
            let number = seen[kind, default: 0]
            seen[kind] = number + 1
            body(stream, kind, number)
        }
    }
}

/// decodebin3's `select-stream`: runs on a streaming thread as each collection arrives.
private let selectStream:
    @convention(c) (
        UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstStreamCollection>?, UnsafeMutablePointer<GstStream>?,
        UnsafeMutableRawPointer?
    ) -> Int32 = { _, collection, stream, data in
        guard let collection, let stream, let data else { return -1 }
        return handedOver(data, as: StreamChooser.self).answer(collection, stream)
    }

private let releaseChooser: GClosureNotify = { pointer, _ in
    guard let pointer else { return }
    Unmanaged<StreamChooser>.fromOpaque(pointer).release()
}
