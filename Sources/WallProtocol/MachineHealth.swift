import Foundation

/// A node machine's health, in its `/status` (`health`), its `/metrics` and the console: what a
/// site checks on a screen's computer from afar, and the limits past which the node names a
/// problem (service `machine`).
public struct MachineHealth: Sendable, Hashable, Codable {
    /// The Lockstep version the node runs and the SHA-256 of the config file it read.
    public var version: String
    public var configSHA256: String?
    /// Seconds since the machine booted, and since the node started.
    public var uptimeSeconds: Double?
    public var processUptimeSeconds: Double?
    /// Cores the machine has, and the share of all of them busy over the last sample (0 to 1).
    public var cores: Int
    public var cpuBusy: Double?
    /// The same over the last minute, once the node has watched a minute: what the limit judges
    /// (a build, a push or a decode busies a machine for seconds, and frames stay on time).
    public var cpuBusyMinute: Double?
    /// The node's own CPU use over the last sample, in cores (1.0: one core all the time).
    public var processCPUCores: Double?
    public var memoryTotalBytes: UInt64?
    /// What the kernel can give without swapping (`MemAvailable`).
    public var memoryAvailableBytes: UInt64?
    public var processResidentBytes: UInt64?
    /// The hottest thermal zone the kernel reports (/sys/class/thermal), and its type; nil on a
    /// machine with none (a VM).
    public var temperatureCelsius: Double?
    public var temperatureZone: String?
    /// The content store's file system: what is free for it (less its reserve), and its size.
    public var storeFreeBytes: UInt64?
    public var storeSizeBytes: UInt64?
    /// The display the node's window is on, as RandR reports it; nil with no window of the node's
    /// own (a KMS plane, a headless sink).
    public var display: DisplayMode?

    public init(version: String, configSHA256: String?, cores: Int) {
        self.version = version
        self.configSHA256 = configSHA256
        self.cores = cores
    }

    /// The limits past which a node names a problem. Late and dropped frames are judged by the
    /// timeline (out of step), not here.
    public enum Limits {
        /// Busy CPU: a decoder that takes it all leaves the render thread late.
        public static let cpuBusy = 0.95
        /// Memory the kernel can still give, as a share of all of it.
        public static let memoryAvailable = 0.05
        /// Degrees Celsius: most CPUs throttle from 90 to 100.
        public static let temperature = 85.0
        /// Bytes free for the content store: less, and the next push may not fit.
        public static let storeFree: UInt64 = 1_000_000_000
    }

    /// What is past its limit, each in a sentence; empty when nothing is.
    public var problems: [String] {
        var problems: [String] = []
        if let busy = cpuBusyMinute, busy >= Limits.cpuBusy {
            problems.append(
                "the CPU has been \(Self.percent(busy)) busy over the last minute (limit "
                    + "\(Self.percent(Limits.cpuBusy))): frames may be late")
        }
        if let total = memoryTotalBytes, let available = memoryAvailableBytes, total > 0,
            Double(available) / Double(total) < Limits.memoryAvailable
        {
            problems.append(
                "memory is short: \(Self.gigabytes(available)) of \(Self.gigabytes(total)) available")
        }
        if let temperature = temperatureCelsius, temperature >= Limits.temperature {
            problems.append(
                "the machine is hot: \(Int(temperature.rounded())) °C in \(temperatureZone ?? "a thermal zone") "
                    + "(limit \(Int(Limits.temperature)) °C): it may slow down")
        }
        if let free = storeFreeBytes, free < Limits.storeFree {
            problems.append(
                "the content store has \(Self.gigabytes(free)) free (under \(Self.gigabytes(Limits.storeFree))): "
                    + "the next push may not fit")
        }
        return problems
    }

    static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
    static func gigabytes(_ bytes: UInt64) -> String { String(format: "%.1f GB", Double(bytes) / 1e9) }
}

/// A display's mode: its resolution and refresh rate, and the output it is on.
public struct DisplayMode: Sendable, Hashable, Codable, CustomStringConvertible {
    public var output: String
    public var width: Int
    public var height: Int
    /// nil when the server gives the mode no timing (Xvfb's has no pixel clock).
    public var refreshHz: Double?

    public init(output: String, width: Int, height: Int, refreshHz: Double?) {
        self.output = output
        self.width = width
        self.height = height
        self.refreshHz = refreshHz
    }

    public var description: String {
        "\(width)x\(height)" + (refreshHz.map { " at \(Self.hertz($0)) Hz" } ?? "") + " on \(output)"
    }

    /// `60`, `59.94`: to the hundredth, no trailing zeros.
    static func hertz(_ value: Double) -> String {
        String(format: "%.2f", value).replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression)
    }
}
