internal import CGStreamer
internal import CLockstepShims
import LockstepTime

/// Process-wide GStreamer set-up: `gst_init` exactly once, before any element is made.
enum GStreamer {
    private static let initialized: Bool = {
        gst_init(nil, nil)
        demoteCrashingSinks()
        return true
    }()

    /// Sinks that autovideosink must never try: DirectFB's sink segfaults in its own thread on a
    /// machine without a framebuffer console, taking the process with it. Named explicitly in a
    /// sink description they still work.
    private static let autoplugBlocklist = ["dfbvideosink"]

    private static func demoteCrashingSinks() {
        let registry = gst_registry_get()
        for name in autoplugBlocklist {
            guard let feature = gst_registry_lookup_feature(registry, name) else { continue }
            gst_plugin_feature_set_rank(feature, guint(GST_RANK_NONE.rawValue))
            gst_object_unref(UnsafeMutableRawPointer(feature))
        }
    }

    static func ensureInitialized() {
        _ = initialized
    }

    /// `GST_CLOCK_TIME_NONE`.
    static let clockTimeNone: GstClockTime = lockstep_clock_time_none()

    /// The name of the factory that made `element` ("qtdemux"), if it came from one.
    static func factoryName(of element: UnsafeMutablePointer<GstElement>) -> String? {
        guard let factory = gst_element_get_factory(element),
            let name = gst_object_get_name(UnsafeMutableRawPointer(factory).assumingMemoryBound(to: GstObject.self))
        else { return nil }
        defer { g_free(name) }
        return String(cString: name)
    }

    /// Calls `body` with every element inside `bin`, at any depth, that `factory` made.
    static func forEachDescendant(
        of bin: Element, factory: String, _ body: (UnsafeMutablePointer<GstElement>) -> Void
    ) {
        forEachObject(in: gst_bin_iterate_recurse(bin.cast(to: GstBin.self))) { object in
            let element = object.assumingMemoryBound(to: GstElement.self)
            if factoryName(of: element) == factory { body(element) }
        }
    }

    /// Whether `element` is a bin (a sink description of several elements is).
    static func isBin(_ element: Element) -> Bool {
        g_type_check_instance_is_a(
            UnsafeMutableRawPointer(element.raw).assumingMemoryBound(to: GTypeInstance.self), gst_bin_get_type()) != 0
    }

    /// Calls `body` with every element inside `bin`, at any depth.
    static func forEachElement(in bin: Element, _ body: (UnsafeMutablePointer<GstElement>) -> Void) {
        forEachObject(in: gst_bin_iterate_recurse(bin.cast(to: GstBin.self))) { object in
            body(object.assumingMemoryBound(to: GstElement.self))
        }
    }

    /// Calls `body` with `element` and, when it is a bin, every element inside it, at any depth:
    /// a sink description may be one element or a bin of several.
    static func forElementAndInside(_ element: Element, _ body: (UnsafeMutableRawPointer) -> Void) {
        body(element.raw)
        if isBin(element) { forEachElement(in: element) { body(UnsafeMutableRawPointer($0)) } }
    }

    /// The first element inside `bin`, at any depth, that `factory` made.
    static func descendant(of bin: Element, factory: String) -> Element? {
        var found: Element?
        forEachDescendant(of: bin, factory: factory) { element in
            if found == nil { found = Element(retaining: element) }
        }
        return found
    }

    /// Calls `body` with each of `element`'s pads of `direction`.
    static func forEachPad(
        of element: Element, direction: GstPadDirection, _ body: (UnsafeMutablePointer<GstPad>) -> Void
    ) {
        let iterator =
            direction == GST_PAD_SRC
            ? gst_element_iterate_src_pads(element.pointer) : gst_element_iterate_sink_pads(element.pointer)
        forEachObject(in: iterator) { body($0.assumingMemoryBound(to: GstPad.self)) }
    }

    /// Calls `body` with each object `iterator` yields, then frees the iterator. A resync
    /// (the set changed meanwhile) ends the walk early, as nothing here needs every one.
    private static func forEachObject(in iterator: UnsafeMutablePointer<GstIterator>?, _ body: (gpointer) -> Void) {
        guard let iterator else { return }
        defer { gst_iterator_free(iterator) }
        var value = GValue()
        defer { if value.g_type != 0 { g_value_unset(&value) } }
        while gst_iterator_next(iterator, &value) == GST_ITERATOR_OK {
            defer { g_value_reset(&value) }
            guard let object = g_value_get_object(&value) else { continue }
            body(object)
        }
    }

    /// "element:pad", as GStreamer's logs name a pad.
    static func padName(_ pad: UnsafeMutablePointer<GstPad>) -> String {
        func name(_ object: UnsafeMutablePointer<GstObject>) -> String {
            guard let name = gst_object_get_name(object) else { return "?" }
            defer { g_free(name) }
            return String(cString: name)
        }
        let object = UnsafeMutableRawPointer(pad).assumingMemoryBound(to: GstObject.self)
        guard let parent = gst_object_get_parent(object) else { return name(object) }
        defer { gst_object_unref(parent) }
        return name(parent) + ":" + name(object)
    }

    /// The segment a SEGMENT event carries, copied.
    static func segment(of event: UnsafeMutablePointer<GstEvent>) -> GstSegment {
        var segment = GstSegment()
        gst_event_copy_segment(event, &segment)
        return segment
    }

    /// The message of a `GError`, which this call frees.
    static func consume(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    }

    /// The picture size raw video caps state (`width` and `height` of their first structure);
    /// nil when they do not state both.
    static func pictureSize(of caps: UnsafePointer<GstCaps>?) -> PixelSize? {
        var width: gint = 0
        var height: gint = 0
        guard let caps, let structure = gst_caps_get_structure(caps, 0),
            gst_structure_get_int(structure, "width", &width) != 0,
            gst_structure_get_int(structure, "height", &height) != 0
        else { return nil }
        return PixelSize(width: Int(width), height: Int(height))
    }

    /// What an ERROR message says: its error's text and the debug detail, if any.
    static func errorText(of message: UnsafeMutablePointer<GstMessage>) -> (reason: String, debug: String?) {
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(message, &error, &debug)
        defer { g_free(debug) }
        return (consume(error), debug.map { String(cString: $0) })
    }
}

// MARK: - Time conversions

extension MediaTime {
    /// A GStreamer time (`GstClockTime`, unsigned nanoseconds; `GST_CLOCK_TIME_NONE` is invalid).
    init(clockTime: GstClockTime) {
        if clockTime == GStreamer.clockTimeNone || clockTime > UInt(Int64.max) {
            self = .invalid
        } else {
            self.init(nanoseconds: Int64(clockTime))
        }
    }

    /// This time as a `GstClockTime`; nil when not numeric or negative.
    var clockTime: GstClockTime? {
        guard let ns = nanoseconds, ns >= 0 else { return nil }
        return GstClockTime(ns)
    }

    /// This time as a signed GStreamer position (`gint64`), clamped at zero for seeking.
    var streamPosition: Int {
        guard let ns = nanoseconds else { return 0 }
        return Int(max(0, ns))
    }
}
