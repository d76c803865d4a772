/// What a show controller asks of the wall: a cue by name, or one of the transport verbs. Every
/// input (OSC, UDP and TCP strings, HTTP) reads into one of these, and the wall carries each out
/// as a timeline edit.
///
/// The address space, over OSC (`/lockstep/...`) and as plain strings (one per line or datagram):
///
///     /lockstep/cue "welcome"    cue welcome       the cue the config names "welcome"
///     /lockstep/cue/welcome                        the same, for senders whose buttons send only an address
///     /lockstep/pause            pause
///     /lockstep/resume           resume
///     /lockstep/next             next
///     /lockstep/previous         previous
///     /lockstep/black            black
///     /lockstep/stop             stop
///
/// A button that sends a number on press and 0 on release (TouchOSC, Companion) acts on the press:
/// a message whose last argument is the number 0 is a release and is ignored.
public enum ShowCommand: Hashable, Sendable, CustomStringConvertible {
    case cue(String)
    case pause
    case resume
    case next
    case previous
    case black
    case stop

    /// The OSC address every command lives under.
    public static let oscPrefix = "/lockstep/"

    /// A cue name: 1 to 64 letters, digits, `-`, `_` and `.`, so it fits an OSC address, a URL path
    /// and a line of text unquoted.
    public static func isValidCueName(_ name: Substring) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            }
    }

    static let verbs: [String: ShowCommand] = [
        "pause": .pause, "resume": .resume, "next": .next, "previous": .previous, "black": .black, "stop": .stop,
    ]

    /// The command an OSC message asks for, nil for a button's release, or an error naming what
    /// is wrong with it.
    public init?(osc message: OSCMessage) throws(ShowControlError) {
        if let last = message.arguments.last?.number, last == 0 { return nil }
        guard message.address.hasPrefix(Self.oscPrefix) else {
            throw .unknown("OSC address \(message.address): not under \(Self.oscPrefix)")
        }
        let path = message.address.dropFirst(Self.oscPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        switch (path.first.map(String.init), path.count) {
        case ("cue", 1):
            guard case .string(let name) = message.arguments.first else {
                throw .malformed("\(message.address) needs the cue's name as its first argument, a string")
            }
            guard Self.isValidCueName(Substring(name)) else { throw .malformed("\"\(name)\" is not a cue name") }
            self = .cue(name)
        case ("cue", 2):
            guard Self.isValidCueName(path[1]) else { throw .malformed("\"\(path[1])\" is not a cue name") }
            self = .cue(String(path[1]))
        case (let verb?, 1):
            guard let command = Self.verbs[verb] else { throw .unknown("OSC address \(message.address)") }
            self = command
        default:
            throw .unknown("OSC address \(message.address)")
        }
    }

    /// The command a line of text asks for (`cue welcome`, `pause`...), case aside, surrounding
    /// white space and a trailing CR ignored.
    public init(line: Substring) throws(ShowControlError) {
        guard line.utf8.count <= 256 else { throw .malformed("a line of \(line.utf8.count) bytes (at most 256)") }
        let words = line.split(whereSeparator: \.isWhitespace)
        guard let verb = words.first?.lowercased() else { throw .malformed("an empty line") }
        if verb == "cue" {
            guard words.count == 2 else { throw .malformed("\"\(line)\": write cue NAME") }
            guard Self.isValidCueName(words[1]) else { throw .malformed("\"\(words[1])\" is not a cue name") }
            self = .cue(String(words[1]))
            return
        }
        guard let command = Self.verbs[verb] else {
            throw .unknown("\"\(line.prefix(64))\": not cue NAME, \(Self.verbs.keys.sorted().joined(separator: ", "))")
        }
        guard words.count == 1 else { throw .malformed("\"\(line)\": \(verb) takes nothing after it") }
        self = command
    }

    /// The OSC message that asks for it.
    public var osc: OSCMessage {
        if case .cue(let name) = self { return OSCMessage(address: Self.oscPrefix + "cue", arguments: [.string(name)]) }
        return OSCMessage(address: Self.oscPrefix + description)
    }

    public var description: String {
        switch self {
        case .cue(let name): return "cue \(name)"
        case .pause: return "pause"
        case .resume: return "resume"
        case .next: return "next"
        case .previous: return "previous"
        case .black: return "black"
        case .stop: return "stop"
        }
    }
}

/// Why an input refused a message: each is logged naming the sender.
public enum ShowControlError: Error, Hashable, CustomStringConvertible {
    case malformed(String)
    case unknown(String)
    case cannotListen(input: String, address: String, reason: String)

    public var description: String {
        switch self {
        case .malformed(let reason): return "malformed: \(reason)"
        case .unknown(let what): return "unknown command: \(what)"
        case .cannotListen(let input, let address, let reason): return "\(input): cannot listen on \(address): \(reason)"
        }
    }
}
