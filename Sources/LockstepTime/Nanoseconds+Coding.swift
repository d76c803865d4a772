/// Lockstep's JSON convention for times, in every report and reply meant to be read by tools
/// (`/status`, `/frames`, `wallctl drift --json`, `clock probe --json`, `wallnode probe --json`): a
/// time is a plain integer of nanoseconds, and its key ends in `Ns` (`"positionNs": 1500000000`).
/// Integers keep host times exact (a double cannot hold a 64-bit nanosecond count) and every time in
/// a document is on one scale, so `jq '.player.positionNs / 1e9'` is all a reader needs. A time that
/// is not a number (invalid, indefinite, infinite) is `null`; an optional time that is absent is
/// left out.
///
/// The timeline (`/timeline`, the node's state file) is the one exception: it keeps `MediaTime`'s
/// exact rational form, because a loop's length in frames must survive the round trip exactly.
///
/// Mark a `MediaTime` property `@NanosecondsCoded` (or `@OptionalNanosecondsCoded`) and give it an
/// `…Ns` coding key.
@propertyWrapper
public struct NanosecondsCoded: Sendable, Hashable, Codable {
    public var wrappedValue: MediaTime

    public init(wrappedValue: MediaTime) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let nanoseconds = wrappedValue.nanoseconds {
            try container.encode(nanoseconds)
        } else {
            try container.encodeNil()
        }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? .invalid : try Self.nanoseconds(in: container)
    }

    /// The time a whole number of nanoseconds stands for; anything else (a fraction, a string, a
    /// number beyond 64 bits) is an error naming the key.
    static func nanoseconds(in container: SingleValueDecodingContainer) throws -> MediaTime {
        guard let nanoseconds = try? container.decode(Int64.self) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "must be a whole number of nanoseconds (a 64-bit integer)")
        }
        return MediaTime(nanoseconds: nanoseconds)
    }
}

/// `NanosecondsCoded` for an optional time: nil is left out of the document.
@propertyWrapper
public struct OptionalNanosecondsCoded: Sendable, Hashable, Codable {
    public var wrappedValue: MediaTime?

    public init(wrappedValue: MediaTime?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let nanoseconds = wrappedValue?.nanoseconds {
            try container.encode(nanoseconds)
        } else {
            try container.encodeNil()
        }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try NanosecondsCoded.nanoseconds(in: container)
    }
}

extension KeyedEncodingContainer {
    /// Leaves an absent optional time out, as synthesized `Codable` does for plain optionals.
    public mutating func encode(_ value: OptionalNanosecondsCoded, forKey key: Key) throws {
        guard let time = value.wrappedValue else { return }
        if let nanoseconds = time.nanoseconds {
            try encode(nanoseconds, forKey: key)
        } else {
            try encodeNil(forKey: key)
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing key is an absent optional time.
    public func decode(_ type: OptionalNanosecondsCoded.Type, forKey key: Key) throws -> OptionalNanosecondsCoded {
        try decodeIfPresent(type, forKey: key) ?? OptionalNanosecondsCoded(wrappedValue: nil)
    }
}
