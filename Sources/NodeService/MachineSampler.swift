import Foundation
import LockstepCLI
import LockstepLocks
import LockstepTime
import WallContent
import WallProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the machine's health (`MachineHealth`) from /proc and /sys as a node answers its status,
/// at most once a second: a console asks for the status every 150 ms, and each reading is a dozen
/// files. CPU shares are over the time since the last reading, a second or more, and over the last
/// minute for the limit (`MachineHealth.cpuBusyMinute`); the display's mode is asked of the X server
/// at most every 10 s (it opens a connection of its own).
public final class MachineSampler: Sendable {
    struct CPUReading: Sendable {
        var at: Double
        var busy: UInt64
        var total: UInt64
        var processSeconds: Double
    }

    private let proc: String
    private let thermal: String
    /// The readings at least a second apart over the last minute and more, oldest first.
    private let readings = Mutex<[CPUReading]>([])
    /// The span the CPU limit is judged over: a build or a push busies a machine for seconds.
    static let judgedOver = 60.0
    private let display = Mutex<(at: Double, mode: DisplayMode?)?>(nil)
    /// The last reading, given again for a second.
    private let last = Mutex<(at: Double, health: MachineHealth)?>(nil)

    /// - Parameters: the folders read, other than /proc and /sys/class/thermal in tests.
    public init(proc: String = "/proc", thermal: String = "/sys/class/thermal") {
        self.proc = proc
        self.thermal = thermal
    }

    /// The machine's health now.
    ///
    /// - Parameters:
    ///   - store: the node's content store.
    ///   - displayMode: asks the display's mode (`OutputWindow.mode`); nil with no window.
    public func sample(
        configSHA256: String?, store: ContentStore?, displayMode: (() -> DisplayMode?)? = nil
    ) -> MachineHealth {
        let now = LocalClock.monotonic.now().seconds
        if let last = last.withLock({ $0 }), now - last.at < 1 { return last.health }
        var health = MachineHealth(
            version: LockstepVersion.current, configSHA256: configSHA256,
            cores: max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let process = ProcessSample.current()
        if let text = read("\(proc)/uptime"), let first = text.split(separator: " ").first {
            health.uptimeSeconds = Double(first)
        }
        if let process {
            health.processUptimeSeconds = max(0, Date().timeIntervalSince1970 - process.startTime)
            health.processResidentBytes = UInt64(process.residentBytes)
        }
        if let text = read("\(proc)/stat"), let times = Self.cpuTimes(text) {
            let reading = CPUReading(
                at: now, busy: times.busy, total: times.total, processSeconds: process?.cpuSeconds ?? 0)
            let kept = readings.withLock { kept in
                // Two statuses answered at once both read; the second keeps the first's span.
                if let last = kept.last, reading.at - last.at < 1 { return kept }
                kept.append(reading)
                // Keep the newest reading a minute old or older, and all after it.
                if let start = kept.lastIndex(where: { reading.at - $0.at >= Self.judgedOver }) {
                    kept.removeFirst(start)
                }
                return kept
            }
            if kept.count >= 2 {
                let (last, newest) = (kept[kept.count - 2], kept[kept.count - 1])
                health.cpuBusy = Self.busy(from: last, to: newest)
                health.processCPUCores = max(0, newest.processSeconds - last.processSeconds) / (newest.at - last.at)
            }
            if let first = kept.first, let newest = kept.last, newest.at - first.at >= Self.judgedOver {
                health.cpuBusyMinute = Self.busy(from: first, to: newest)
            }
        }
        if let text = read("\(proc)/meminfo") {
            let memory = Self.memory(text)
            health.memoryTotalBytes = memory.total
            health.memoryAvailableBytes = memory.available
        }
        if let hottest = Self.hottest(in: thermal) {
            health.temperatureCelsius = hottest.celsius
            health.temperatureZone = hottest.zone
        }
        health.storeFreeBytes = store?.freeBytes()
        health.storeSizeBytes = store?.fileSystemBytes()
        if let displayMode {
            health.display = display.withLock { cached in
                if let cached, now - cached.at < 10 { return cached.mode }
                let mode = displayMode()
                cached = (now, mode)
                return mode
            }
        }
        last.withLock { $0 = (now, health) }
        return health
    }

    private func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    static func busy(from first: CPUReading, to last: CPUReading) -> Double? {
        guard last.total > first.total else { return nil }
        return Double(last.busy &- first.busy) / Double(last.total - first.total)
    }

    /// The jiffies all CPUs spent busy, and in all, since boot: /proc/stat's first line (`cpu`),
    /// idle and waiting on I/O counted as not busy, guests already in user time.
    static func cpuTimes(_ stat: String) -> (busy: UInt64, total: UInt64)? {
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 5 else { return nil }
        // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user and nice).
        let total = fields.prefix(8).reduce(0, +)
        let idle = fields[3] + fields[4]
        return (total - idle, total)
    }

    /// `MemTotal` and `MemAvailable` of /proc/meminfo, in bytes.
    static func memory(_ meminfo: String) -> (total: UInt64?, available: UInt64?) {
        var values: [String: UInt64] = [:]
        for line in meminfo.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " })
            guard parts.count >= 2, let value = UInt64(parts[1]) else { continue }
            values[String(parts[0])] = parts.count > 2 && parts[2] == "kB" ? value * 1024 : value
        }
        return (values["MemTotal"], values["MemAvailable"])
    }

    /// The hottest of the kernel's thermal zones (`thermal_zone*/temp`, millidegrees Celsius), with
    /// its `type`; nil where there is none.
    static func hottest(in folder: String) -> (celsius: Double, zone: String)? {
        let zones = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter {
            $0.hasPrefix("thermal_zone")
        }
        var hottest: (celsius: Double, zone: String)?
        for zone in zones ?? [] {
            guard let text = try? String(contentsOfFile: "\(folder)/\(zone)/temp", encoding: .utf8),
                let milli = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { continue }
            let type = (try? String(contentsOfFile: "\(folder)/\(zone)/type", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let celsius = milli / 1000
            if hottest.map({ celsius > $0.celsius }) ?? true { hottest = (celsius, type ?? zone) }
        }
        return hottest
    }
}
