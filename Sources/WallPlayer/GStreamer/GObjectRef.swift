internal import CGStreamer
internal import CLockstepShims

/// An owned reference to a GObject (element, pad, bus, clock): the one place that counts references.
///
/// The initializer says what the caller hands over: `owning` takes a reference the caller owns
/// (`transfer full`), `sinking` takes a newly made floating object, `retaining` adds a reference to a
/// borrowed pointer (`transfer none`). `deinit` drops the reference.
final class GObjectRef<Pointee>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Pointee>

    init(owning pointer: UnsafeMutablePointer<Pointee>) {
        self.pointer = pointer
    }

    init(sinking pointer: UnsafeMutablePointer<Pointee>) {
        self.pointer = pointer
        gst_object_ref_sink(UnsafeMutableRawPointer(pointer))
    }

    init(retaining pointer: UnsafeMutablePointer<Pointee>) {
        self.pointer = pointer
        g_object_ref(UnsafeMutableRawPointer(pointer))
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    var raw: gpointer { UnsafeMutableRawPointer(pointer) }

    /// The same object seen as another GObject type (`GST_ELEMENT_CAST` and friends).
    func cast<Other>(to type: Other.Type) -> UnsafeMutablePointer<Other> {
        raw.assumingMemoryBound(to: Other.self)
    }

    var gstObject: UnsafeMutablePointer<GstObject> { cast(to: GstObject.self) }

    /// The object's name (`GST_OBJECT_NAME`).
    var name: String {
        guard let name = gst_object_get_name(gstObject) else { return "" }
        defer { g_free(name) }
        return String(cString: name)
    }

    // MARK: Properties

    func set(_ property: String, _ value: String) { lockstep_object_set_string(raw, property, value) }
    func set(_ property: String, _ value: Int32) { lockstep_object_set_int(raw, property, value) }
    func set(_ property: String, _ value: UInt32) { lockstep_object_set_uint(raw, property, value) }
    func set(_ property: String, _ value: UInt64) { lockstep_object_set_uint64(raw, property, UInt(value)) }
    func set(_ property: String, _ value: Bool) { lockstep_object_set_bool(raw, property, value ? 1 : 0) }
    func set(_ property: String, _ value: Double) { lockstep_object_set_double(raw, property, value) }
    func set(_ property: String, object value: gpointer?) { lockstep_object_set_pointer(raw, property, value) }
}

/// An owned reference to a GstMiniObject (message, caps, sample, buffer).
final class MiniObjectRef<Pointee>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Pointee>

    init(owning pointer: UnsafeMutablePointer<Pointee>) {
        self.pointer = pointer
    }

    init(retaining pointer: UnsafeMutablePointer<Pointee>) {
        self.pointer = pointer
        gst_mini_object_ref(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstMiniObject.self))
    }

    deinit {
        gst_mini_object_unref(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstMiniObject.self))
    }
}

typealias Element = GObjectRef<GstElement>
typealias Pad = GObjectRef<GstPad>
typealias Bus = GObjectRef<GstBus>
typealias Clock = GObjectRef<GstClock>
typealias Message = MiniObjectRef<GstMessage>
typealias Caps = MiniObjectRef<GstCaps>

/// An owned reference to a GstSample (a buffer with its caps), which Swift sees as opaque.
final class Sample: @unchecked Sendable {
    let pointer: OpaquePointer

    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        gst_mini_object_unref(UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstMiniObject.self))
    }
}
