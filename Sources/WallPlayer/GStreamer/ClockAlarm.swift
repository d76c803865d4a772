internal import CGStreamer
internal import CLockstepShims
import LockstepTime

/// A one-shot callback at a time on a master clock (`gst_clock_id_wait_async`).
///
/// The action runs on the clock's thread: it should only hand work to a queue. A time already
/// past fires at once.
final class ClockAlarm: @unchecked Sendable {
    private let id: GstClockID

    init?(clock: MasterClock, at time: MediaTime, action: @escaping @Sendable () -> Void) {
        guard let target = time.clockTime,
            let id = gst_clock_new_single_shot_id(clock.clock.pointer, target)
        else { return nil }
        self.id = id
        let box = handOff(ActionBox(action))
        let result = gst_clock_id_wait_async(id, alarmFired, box, releaseAction)
        guard result == GST_CLOCK_OK || result == GST_CLOCK_EARLY else {
            gst_clock_id_unref(id)
            return nil
        }
    }

    /// Stops the alarm from firing, if it has not yet.
    func cancel() {
        gst_clock_id_unschedule(id)
    }

    deinit {
        gst_clock_id_unschedule(id)
        gst_clock_id_unref(id)
    }
}

private final class ActionBox {
    let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
}

private let alarmFired: GstClockCallback = { _, _, _, data in
    guard let data else { return 0 }
    handedOver(data, as: ActionBox.self).action()
    return 1
}

private let releaseAction: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<ActionBox>.fromOpaque(data).release()
}
