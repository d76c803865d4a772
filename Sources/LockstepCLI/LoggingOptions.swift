public import ArgumentParser
import Foundation
public import Logging

/// `--log-level` and `--log-format` for every executable, and the one place logging is bootstrapped.
public struct LoggingOptions: ParsableArguments, Sendable {
    /// How log records are written to standard error.
    public enum Format: String, ExpressibleByArgument, Sendable, CaseIterable {
        /// One JSON object per line: for journald, Loki, jq. Numbers and booleans logged as such
        /// (`.stringConvertible`) are JSON numbers and booleans.
        case json
        /// logfmt (`key=value`, values with spaces, quotes or `=` quoted): for Loki, Grafana, lnav.
        case logfmt
        /// A readable line per record.
        case text
    }

    @Option(
        name: .customLong("log-level"),
        help: "Least severe log level written: trace, debug, info, notice, warning, error (default: info for daemons, notice for commands).")
    public var level: Logger.Level?

    @Option(
        name: .customLong("log-format"),
        help: "Log record format: json, logfmt or text (default: json for daemons, text for commands).")
    public var format: Format?

    public init() {}

    /// Bootstraps swift-log once for the process (`LoggingSystem.bootstrap`), with the level and
    /// format given on the command line or else these defaults: a daemon logs for journald at info, a
    /// command run at a terminal says only what needs attention.
    public func bootstrap(defaultLevel: Logger.Level = .info, defaultFormat: Format = .json) {
        let level = self.level ?? defaultLevel
        let format = self.format ?? defaultFormat
        LoggingSystem.bootstrap { label in
            var handler = StructuredLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Writes each record to standard error as one JSON object (`time`, `level`, `label`, `message`, and
/// the metadata under its dotted keys) or as a readable line.
public struct StructuredLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let format: LoggingOptions.Format

    public init(label: String, format: LoggingOptions.Format) {
        self.label = label
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let time = Date().formatted(
            .iso8601.year().month().day().timeZone(separator: .omitted).time(includingFractionalSeconds: true))
        let line = Self.line(
            format: format, time: time, level: event.level, label: label, message: "\(event.message)", metadata: all)
        let prefix = Self.toJournal ? "<\(Self.syslogPriority(event.level))>" : ""
        FileHandle.standardError.write(Data((prefix + line + "\n").utf8))
    }

    /// Whether standard error is journald's stream (`JOURNAL_STREAM` names its device and inode, as
    /// systemd sets it for a unit's output): then each line starts with its syslog priority
    /// (`<4>` for a warning), which journald strips and keeps, so `journalctl -p warning` filters.
    static let toJournal: Bool = {
        guard let stream = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        var information = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]),
            fstat(STDERR_FILENO, &information) == 0
        else { return false }
        return UInt64(information.st_dev) == device && UInt64(information.st_ino) == inode
    }()

    /// The syslog priority journald files a record under.
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// One record as `format` writes it, metadata sorted by key.
    static func line(
        format: LoggingOptions.Format, time: String, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata
    ) -> String {
        let fields = metadata.sorted { $0.key < $1.key }
        switch format {
        case .json:
            let head = [("time", time), ("level", "\(level)"), ("label", label), ("message", message)]
                .map { "\(quote($0.0)):\(quote($0.1))" }
            return "{" + (head + fields.map { "\(quote($0.key)):\(json($0.value))" }).joined(separator: ",") + "}"
        case .logfmt:
            let head = [("time", time), ("level", "\(level)"), ("label", label), ("msg", message)]
            return (head + fields.map { ($0.key, "\($0.value)") }).map { "\($0.0)=\(logfmtValue($0.1))" }
                .joined(separator: " ")
        case .text:
            let details = fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "\(time) \(level) \(label): \(message)" + (details.isEmpty ? "" : " \(details)")
        }
    }

    /// A metadata value as JSON: numbers and booleans logged as values stay numbers and booleans,
    /// lists and dictionaries nest, everything else is a string.
    static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text):
            return quote(text)
        case .stringConvertible(let convertible):
            switch convertible {
            case let flag as Bool: return flag ? "true" : "false"
            case let number as any BinaryInteger: return "\(number)"
            case let number as Double where number.isFinite: return "\(number)"
            case let number as Float where number.isFinite: return "\(number)"
            default: return quote(convertible.description)
            }
        case .array(let values):
            return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let values):
            return "{" + values.sorted { $0.key < $1.key }.map { "\(quote($0.key)):\(json($0.value))" }
                .joined(separator: ",") + "}"
        }
    }

    /// A logfmt value: bare when it is one word, otherwise quoted with `"` and `\` escaped (the
    /// rules go-logfmt and Loki's parser follow).
    static func logfmtValue(_ text: String) -> String {
        let needsQuotes =
            text.isEmpty || text.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0.value < 0x20 }
        return needsQuotes ? quote(text) : text
    }

    /// A JSON string literal.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
