internal import CGStreamer
internal import CLockstepShims

// Objects handed to GStreamer for its callbacks (probe, bus, clock and signal contexts), and read
// back in those callbacks on GStreamer's threads.
//
// The hand-off goes through GStreamer's and GLib's own locks, which ThreadSanitizer cannot see;
// these two say it in words it understands (`lockstep_handoff_release`/`acquire`), and nothing in
// other builds. Writes made to an object after it was handed over still need their own lock.

/// `object`, retained, as the user data of a GStreamer callback (its destroy notify releases it).
func handOff<Object: AnyObject>(_ object: Object) -> UnsafeMutableRawPointer {
    let pointer = Unmanaged.passRetained(object).toOpaque()
    lockstep_handoff_release(pointer)
    return pointer
}

/// The object a callback was handed with `handOff`.
func handedOver<Object: AnyObject>(_ data: UnsafeMutableRawPointer, as type: Object.Type) -> Object {
    lockstep_handoff_acquire(data)
    return Unmanaged<Object>.fromOpaque(data).takeUnretainedValue()
}

/// `object`, not retained, as the user data of a callback it removes before it goes away.
func lend<Object: AnyObject>(_ object: Object) -> UnsafeMutableRawPointer {
    let pointer = Unmanaged.passUnretained(object).toOpaque()
    lockstep_handoff_release(pointer)
    return pointer
}

/// The buffer a probe sees, with what another thread of this process wrote in it before pushing it
/// (after `lockstep_handoff_release` on it) visible.
func probedBuffer(_ object: UnsafeMutableRawPointer) -> UnsafeMutablePointer<GstBuffer> {
    lockstep_handoff_acquire(object)
    return object.assumingMemoryBound(to: GstBuffer.self)
}
