import LockstepTime

#if canImport(Glibc)
    import Glibc
#endif

/// This machine's real time (`CLOCK_REALTIME`), as tests shift a master's real time from it.
public enum RealTime {
    public static func now() -> MediaTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return MediaTime(nanoseconds: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }
}

/// A master (`wallctl clock serve --realtime`) whose UTC reads `instant` `lead` seconds after it
/// starts, as a wall would see a day's transition come; and the master time of a monotonic arrival
/// stamp on this machine (ground truth's stamps), for the test to read its frames in master time.
public struct ShiftedRealtimeMaster {
    public let process: ChildProcess
    /// Add to a `LocalClock.monotonic` reading to get the master's time.
    public let toMaster: MediaTime

    public init(port: Int, reading instant: MediaTime, after lead: Double) throws {
        let shift = instant.seconds - lead - RealTime.now().seconds
        process = try ChildProcess(
            ChildProcess.product("wallctl"),
            [
                "clock", "serve", "--realtime", "--simulate-realtime-shift", String(format: "%.9f", shift),
                "--listen", "127.0.0.1:\(port)",
            ])
        toMaster =
            RealTime.now() - LocalClock.monotonic.now() + MediaTime(seconds: shift, preferredTimescale: 1_000_000_000)
    }

    /// The master's time now, as this machine reads it.
    public func now() -> MediaTime { LocalClock.monotonic.now() + toMaster }
}
