internal import CLockstepNetShims
import LockstepNet
import LockstepTime

#if canImport(Glibc)
    import Glibc
#endif

/// The time scale a clock server serves.
public enum MasterTimescale: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// The process clock (`LocalClock.process`): `CLOCK_MONOTONIC`, as GStreamer's system clock, or
    /// the simulated clock a test set. Every master on one machine serves the same time, so a
    /// restarted server continues the same timeline.
    case localClock = "local"
    /// `CLOCK_REALTIME`: masters on different machines disciplined by NTP or PTP serve the same time
    /// and can stand in for one another.
    case realtime

    public var description: String { rawValue }
}

/// Reads the master time a server serves, and converts receive stamps to it.
struct MasterClock: Sendable {
    let timescale: MasterTimescale
    let local: LocalClock
    /// For a real-time master on trial: UTC this many nanoseconds ahead.
    var realtimeShift: Int64 = 0

    /// The master time now, in nanoseconds.
    func now() -> Int64 {
        switch timescale {
        case .localClock: return local.nowNanoseconds()
        case .realtime: return lockstep_net_realtime_ns() &+ realtimeShift
        }
    }

    /// The master time at which `datagram` arrived: the kernel stamp when there is one.
    func receiveTime(of datagram: UDPSocket.Datagram) -> Int64 {
        switch timescale {
        case .localClock:
            return local.localNanoseconds(atMonotonic: datagram.monotonicNanoseconds)
        case .realtime:
            return (datagram.realtimeNanoseconds ?? lockstep_net_realtime_ns()) &+ realtimeShift
        }
    }

    /// The flags replies carry.
    var flags: LockstepTimePacket.Flags {
        var flags: LockstepTimePacket.Flags = []
        if timescale == .realtime { flags.insert(.realtimeTimescale) }
        if timescale == .localClock && local.isSimulated { flags.insert(.simulatedClock) }
        if timescale == .realtime && realtimeShift != 0 { flags.insert(.simulatedClock) }
        return flags
    }

    /// The epoch naming this time scale: equal for every server serving the same time.
    ///
    /// Realtime masters share one constant. A local-clock master's time is this machine's
    /// `CLOCK_MONOTONIC` since boot, transformed by the simulated clock if any: the epoch hashes the
    /// kernel's boot id with the simulation's parameters, so it changes when the master machine
    /// reboots or the simulation changes, and survives a restart of the server process.
    var epoch: UInt64 {
        switch timescale {
        case .realtime:
            return realtimeShift == 0 ? MasterIdentity.realtimeEpoch : Self.hash("CLOCK_REALTIME shifted \(realtimeShift)")
        case .localClock:
            let bootID = Self.bootID() ?? String(UInt64.random(in: .min ... .max))
            return Self.hash("CLOCK_MONOTONIC \(bootID) \(local.offset) \(local.driftPPM)")
        }
    }

    private static func bootID() -> String? {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// 64-bit FNV-1a: stable across processes and machines, unlike `Hasher`.
    static func hash(_ text: String) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01B3
        }
        return value
    }
}
