public import Logging

extension Logger.MetadataValue {
    /// A time as log metadata: integer nanoseconds, a number in JSON logs, as in every JSON document
    /// (`NanosecondsCoded`); name the key `…_ns`. A time that is not a number logs as its description
    /// ("indefinite").
    public static func nanoseconds(_ time: MediaTime) -> Logger.MetadataValue {
        time.nanoseconds.map { .stringConvertible($0) } ?? .string(time.description)
    }

    /// A number or a flag as log metadata: a number (boolean) in JSON logs, not a string.
    public static func value(_ value: some CustomStringConvertible & Sendable) -> Logger.MetadataValue {
        .stringConvertible(value)
    }
}
