public import ArgumentParser
import Foundation
public import Logging

/// `--log-level` and `--log-format` for every executable, and the one place logging is bootstrapped.
public struct LoggingOptions: ParsableArguments, Sendable {
    /// How log records are written to standard error.
    public enum Format: String, ExpressibleByArgument, Sendable, CaseIterable {
        /// One JSON object per line: for journald, Loki, jq.
        case json
        /// A readable line per record.
        case text
    }

    @Option(
        name: .customLong("log-level"),
        help: "Least severe log level written: trace, debug, info, notice, warning, error.")
    public var level: Logger.Level = .info

    @Option(name: .customLong("log-format"), help: "Log record format: json or text.")
    public var format: Format = .json

    public init() {}

    /// Bootstraps swift-log once for the process (`LoggingSystem.bootstrap`).
    public func bootstrap() {
        let level = self.level
        let format = self.format
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
        let line: String
        switch format {
        case .json:
            var fields: [(String, String)] = [
                ("time", time), ("level", "\(event.level)"), ("label", label), ("message", "\(event.message)"),
            ]
            fields += all.sorted { $0.key < $1.key }.map { ($0.key, "\($0.value)") }
            line = "{" + fields.map { "\(Self.quote($0.0)):\(Self.quote($0.1))" }.joined(separator: ",") + "}"
        case .text:
            let details = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            line = "\(time) \(event.level) \(label): \(event.message)" + (details.isEmpty ? "" : " \(details)")
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
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
