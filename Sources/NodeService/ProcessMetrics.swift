import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The process figures Prometheus's client libraries export as `process_*`, read from /proc:
/// CPU time, resident memory, open and allowed descriptors, start time.
public struct ProcessSample: Sendable, Hashable {
    var cpuSeconds: Double
    var residentBytes: Double
    var openDescriptors: Double
    var maximumDescriptors: Double
    /// Seconds since the Unix epoch.
    var startTime: Double

    /// This process now; nil where /proc cannot be read (then the metrics are left out).
    public static func current() -> ProcessSample? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let boot = bootTime()
        else { return nil }
        // The command name (field 2) may hold spaces and parentheses: fields are counted after its ')'.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state): utime is field 14, stime 15, starttime 22.
        guard fields.count > 19, let user = Double(fields[11]), let system = Double(fields[12]),
            let started = Double(fields[19])
        else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return ProcessSample(
            cpuSeconds: (user + system) / ticks, residentBytes: pages * Double(sysconf(Int32(_SC_PAGESIZE))),
            openDescriptors: Double(open), maximumDescriptors: Double(limit.rlim_cur),
            startTime: boot + started / ticks)
    }

    /// The machine's boot time, seconds since the epoch (`btime` in /proc/stat).
    private static func bootTime() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { Double($0.dropFirst("btime ".count)) }
    }
}
