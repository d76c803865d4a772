import LockstepTime

/// The relation between item time and host time while playing (`CMTimebase`): at host time
/// `hostTime` the item is at `itemTime`, and it advances `rate` item seconds per host second.
struct Timebase: Sendable, Hashable {
    var hostTime: MediaTime
    var itemTime: MediaTime
    var rate: Double

    /// A timebase that does not move: paused at `itemTime`.
    static func stopped(at itemTime: MediaTime) -> Timebase {
        Timebase(hostTime: .invalid, itemTime: itemTime, rate: 0)
    }

    /// The item time at host time `host`; before a scheduled start, the start's item time.
    func itemTime(atHost host: MediaTime) -> MediaTime {
        guard rate != 0, host.isNumeric, hostTime.isNumeric, host > hostTime else { return itemTime }
        return itemTime + (host - hostTime).multiplied(by: rate).convertScale(MediaTime.nanosecondTimescale)
    }

    /// The host time at which the item reaches `item`; nil when stopped.
    func hostTime(forItemTime item: MediaTime) -> MediaTime? {
        guard rate != 0, hostTime.isNumeric, item.isNumeric else { return nil }
        return hostTime + (item - itemTime).multiplied(by: 1 / rate).convertScale(MediaTime.nanosecondTimescale)
    }
}
