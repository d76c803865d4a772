internal import CGStreamer
internal import CLockstepShims
import LockstepTime

extension GObjectRef where Pointee == GstElement {
    /// A new element from a factory (`gst_element_factory_make`).
    static func make(_ factory: String, name: String? = nil) throws(PlayerError) -> Element {
        GStreamer.ensureInitialized()
        guard let element = gst_element_factory_make(factory, name) else {
            throw .missingElement(factory)
        }
        return Element(sinking: element)
    }

    /// A bin from a gst-launch description, its unlinked pads ghosted (`gst_parse_bin_from_description`).
    static func parseBin(_ description: String, role: String) throws(PlayerError) -> Element {
        GStreamer.ensureInitialized()
        var error: UnsafeMutablePointer<GError>?
        let bin = gst_parse_bin_from_description(description, 1, &error)
        if let error {
            if let bin { gst_object_unref(UnsafeMutableRawPointer(bin)) }
            throw .invalidSinkDescription(role: role, description: description, reason: GStreamer.consume(error))
        }
        guard let bin else {
            throw .invalidSinkDescription(role: role, description: description, reason: "it describes no element")
        }
        return Element(sinking: UnsafeMutableRawPointer(bin).assumingMemoryBound(to: GstElement.self))
    }

    /// Calls `gst_element_set_state`.
    @discardableResult
    func setState(_ state: GstState) -> GstStateChangeReturn {
        gst_element_set_state(pointer, state)
    }

    /// Waits, at most `timeout`, for a pending asynchronous state change to finish.
    ///
    /// playbin3 deadlocks when it is taken down (to READY or NULL) while its source is still
    /// typefinding (reproduced with stock playbin3 from Python: 1 in ~60 teardowns right after
    /// PAUSED; none in 400 after settling), so every downward change of a pipeline settles first.
    func settle(timeout: MediaTime = MediaTime(value: 2, timescale: 1)) {
        gst_element_get_state(pointer, nil, nil, timeout.clockTime ?? 0)
    }

    /// Waits, at most `timeout`, for a pipeline's preroll; throws when it failed or did not come,
    /// naming `element`, what it was `doing`, and the error the bus holds (else `noFrame`).
    func awaitPreroll(
        within timeout: MediaTime, element: String, doing: String, noFrame: String
    ) throws(PlayerError) {
        let result = gst_element_get_state(pointer, nil, nil, timeout.clockTime ?? 0)
        guard result == GST_STATE_CHANGE_FAILURE || result == GST_STATE_CHANGE_ASYNC else { return }
        var reason = noFrame
        if let bus, let popped = gst_bus_pop_filtered(bus.pointer, GST_MESSAGE_ERROR) {
            let message = Message(owning: popped)
            reason = withExtendedLifetime(message) { GStreamer.errorText(of: message.pointer).reason }
        }
        throw .playbackFailed(element: element, reason: "\(doing): \(reason)", debug: nil)
    }

    /// Settles a pending change only while it may still be typefinding (below PAUSED): the one
    /// teardown playbin3 deadlocks in. A pipeline that got past PAUSED and then wedged (a sink
    /// waiting on a clock that jumped, a queue stopped by an error) would hold its teardown for the
    /// whole timeout, and a node rejoining the wall with it.
    func settleIfTypefinding() {
        guard currentState.rawValue < GST_STATE_PAUSED.rawValue else { return }
        settle()
    }

    /// Whether the element is in PLAYING or on its way there (a change asked for, not yet done).
    var isPlayingOrGoingTo: Bool {
        var current = GST_STATE_VOID_PENDING
        var pending = GST_STATE_VOID_PENDING
        gst_element_get_state(pointer, &current, &pending, 0)
        return current == GST_STATE_PLAYING || pending == GST_STATE_PLAYING
    }

    /// Whether an asynchronous state change is under way (a preroll to come).
    var isChangingState: Bool {
        gst_element_get_state(pointer, nil, nil, 0) == GST_STATE_CHANGE_ASYNC
    }

    /// The current state, without waiting for a pending change.
    var currentState: GstState {
        var current = GST_STATE_VOID_PENDING
        var pending = GST_STATE_VOID_PENDING
        gst_element_get_state(pointer, &current, &pending, 0)
        return current
    }

    func staticPad(_ name: String) -> Pad? {
        gst_element_get_static_pad(pointer, name).map { Pad(owning: $0) }
    }

    func add(_ child: Element) {
        gst_bin_add(cast(to: GstBin.self), child.pointer)
    }

    /// Links this element's source to `next`'s sink (`gst_element_link`).
    func link(to next: Element) throws(PlayerError) {
        guard gst_element_link(pointer, next.pointer) != 0 else {
            throw .pipelineConstruction("cannot link \(name) to \(next.name)")
        }
    }

    /// The bus of a pipeline (`gst_element_get_bus`).
    var bus: Bus? { gst_element_get_bus(pointer).map { Bus(owning: $0) } }

    var baseTime: GstClockTime {
        get { gst_element_get_base_time(pointer) }
        set { gst_element_set_base_time(pointer, newValue) }
    }

    /// Calls `gst_element_set_start_time`; `GStreamer.clockTimeNone` stops the pipeline from
    /// choosing its own base time.
    func setStartTime(_ time: GstClockTime) {
        gst_element_set_start_time(pointer, time)
    }

    /// The clock the element runs on, if it has one.
    var clock: Clock? { gst_element_get_clock(pointer).map { Clock(owning: $0) } }

    /// Position in stream time (`gst_element_query_position`).
    func queryPosition() -> MediaTime? {
        var position = 0
        guard gst_element_query_position(pointer, GST_FORMAT_TIME, &position) != 0, position >= 0 else { return nil }
        return MediaTime(nanoseconds: Int64(position))
    }

    /// Duration (`gst_element_query_duration`).
    func queryDuration() -> MediaTime? {
        var duration = 0
        guard gst_element_query_duration(pointer, GST_FORMAT_TIME, &duration) != 0, duration >= 0 else { return nil }
        return MediaTime(nanoseconds: Int64(duration))
    }

    /// Whether the stream is seekable, and its seekable range (`GST_QUERY_SEEKING`).
    func querySeeking() -> (seekable: Bool, start: MediaTime, end: MediaTime)? {
        guard let query = gst_query_new_seeking(GST_FORMAT_TIME) else { return nil }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(query).assumingMemoryBound(to: GstMiniObject.self)) }
        guard gst_element_query(pointer, query) != 0 else { return nil }
        var seekable: gboolean = 0
        var start = 0
        var end = 0
        gst_query_parse_seeking(query, nil, &seekable, &start, &end)
        return (
            seekable != 0, MediaTime(nanoseconds: Int64(max(0, start))),
            end < 0 ? .indefinite : MediaTime(nanoseconds: Int64(end))
        )
    }

    /// A flushing seek (`gst_element_seek`): play from `position` at `rate`, forward up to `stop`
    /// when it is numeric; negative rates play backwards from `position` to the start, the frame
    /// at `position` first (a segment's stop is exclusive, so it ends a nanosecond after).
    func seek(to position: MediaTime, rate: Double, flags: GstSeekFlags, stop: MediaTime = .invalid) -> Bool {
        let allFlags = GstSeekFlags(rawValue: flags.rawValue | GST_SEEK_FLAG_FLUSH.rawValue)
        if rate >= 0 {
            let stopType = stop.isNumeric ? GST_SEEK_TYPE_SET : GST_SEEK_TYPE_NONE
            return gst_element_seek(
                pointer, rate, GST_FORMAT_TIME, allFlags, GST_SEEK_TYPE_SET, position.streamPosition,
                stopType, stop.isNumeric ? stop.streamPosition : -1) != 0
        }
        return gst_element_seek(
            pointer, rate, GST_FORMAT_TIME, allFlags, GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_SET,
            position.streamPosition + 1) != 0
    }
}
