import LockstepNet

/// One generated control request: well-formed HTTP with any method, path, headers and body, or
/// bytes that are not HTTP at all.
struct FuzzRequest: CustomStringConvertible {
    enum Credentials { case token, none, wrongToken, tokenFromWebPage }
    /// Which wall the request names: this one, another, or none (refused for a change).
    enum Wall { case this, other, unnamed }

    var method = "GET"
    var path = "/status"
    var body: String?
    var contentType = "application/json"
    var credentials = Credentials.token
    var wall = Wall.this
    /// Bytes sent instead of a request built from the fields above.
    var raw: [UInt8]?

    var isWellFormedHTTP: Bool { raw == nil }

    func bytes(port: Int, token: String, wallName: String) -> [UInt8] {
        if let raw { return raw }
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        switch wall {
        case .this: text += "Lockstep-Wall: \(wallName)\r\n"
        case .other: text += "Lockstep-Wall: \(wallName)-other\r\n"
        case .unnamed: break
        }
        switch credentials {
        case .token: text += "Authorization: Bearer \(token)\r\n"
        case .none: break
        case .wrongToken: text += "Authorization: Bearer \(String(token.reversed()))\r\n"
        case .tokenFromWebPage: text += "Authorization: Bearer \(token)\r\nOrigin: http://example.com\r\n"
        }
        if let body {
            text += "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            text += "\r\n"
        }
        return Array(text.utf8)
    }

    var description: String {
        if let raw {
            return "raw \(raw.count) bytes: \(String(decoding: raw.prefix(80), as: UTF8.self).debugDescription)"
        }
        return "\(method) \(path) [\(credentials), wall \(wall)] \(body.map { String($0.prefix(200)) } ?? "")"
    }
}

/// Generates control requests that a node must refuse or answer harmlessly: `PUT /timeline` only
/// ever gets a body with at least one field a valid timeline cannot have, so the node being still in
/// play afterwards shows that nothing slipped through.
struct RequestFuzzer {
    private var random: SplitMix64
    private let mediaFolder: String

    init(seed: UInt64, mediaFolder: String) {
        random = SplitMix64(seed: seed)
        self.mediaFolder = mediaFolder
    }

    mutating func next() -> FuzzRequest {
        switch int(20) {
        case 0, 1: return notHTTP()
        case 2: return strangeRoute()
        case 3: return credentialsOnly()
        case 4, 5, 6: return query()
        default: return command()
        }
    }

    // MARK: Shapes

    private mutating func notHTTP() -> FuzzRequest {
        let shapes: [[UInt8]] = [
            (0..<int(300)).map { _ in UInt8(truncatingIfNeeded: random.next()) },
            Array("GET\r\n\r\n".utf8),
            Array("GET / HTTP/9.9\r\n\r\n".utf8),
            Array("GET /status HTTP/1.1\r\nno colon here\r\n\r\n".utf8),
            Array("PUT /timeline HTTP/1.1\r\nContent-Length: -5\r\n\r\n".utf8),
            Array("PUT /timeline HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n{}".utf8),
            Array("GET /status HTTP/1.1\r\nX-Long: \(String(repeating: "a", count: 100_000))\r\n\r\n".utf8),
            Array("\r\n\r\n\r\n".utf8),
        ]
        return FuzzRequest(raw: pick(shapes))
    }

    private mutating func strangeRoute() -> FuzzRequest {
        let paths = [
            "/", "/status/", "/../../etc/passwd", "/%00", "/timeline?x=1", "/timeline/extra", "/start", "/load",
            "/" + String(repeating: "a", count: 4000),
            "/metrics?format=%ff", "/frames/1", "/snapshot.png", "//status", "/STATUS",
        ]
        let methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "BREW"]
        if int(2) == 0 {
            // A command by the wrong method, or a query endpoint by POST.
            return FuzzRequest(
                method: pick(["POST", "DELETE", "PATCH"]), path: pick(["/timeline", "/media/durations", "/status"]),
                body: maybeBody())
        }
        return FuzzRequest(method: pick(methods), path: pick(paths), body: maybeBody())
    }

    /// A change, even a valid one, without the token, from a web page, or naming another wall (or
    /// none): always refused.
    private mutating func credentialsOnly() -> FuzzRequest {
        let wall: FuzzRequest.Wall = pick([.this, .other, .unnamed])
        return FuzzRequest(
            method: "PUT", path: "/timeline", body: timeline(), contentType: pick(["application/json", "text/plain"]),
            credentials: wall == .this ? pick([.none, .wrongToken, .tokenFromWebPage]) : .token, wall: wall)
    }

    private mutating func query() -> FuzzRequest {
        switch int(5) {
        case 0:
            var parts: [String] = []
            if int(3) != 0 { parts.append("after=\(number())") }
            if int(3) != 0 { parts.append("limit=\(number())") }
            return FuzzRequest(path: "/frames" + (parts.isEmpty ? "" : "?" + parts.joined(separator: "&")))
        case 1:
            var parts: [String] = []
            if int(3) != 0 { parts.append("width=\(number())") }
            if int(3) != 0 { parts.append("height=\(number())") }
            return FuzzRequest(path: "/snapshot" + (parts.isEmpty ? "" : "?" + parts.joined(separator: "&")))
        case 2:
            return FuzzRequest(path: "/status?\(pick(["a=1", "verbose", "%zz", "a=\(number())"]))")
        case 3:
            var parts: [String] = []
            if int(3) != 0 { parts.append("fromUnixMs=\(number())") }
            if int(3) != 0 { parts.append("toUnixMs=\(number())") }
            if int(3) != 0 { parts.append("limit=\(number())") }
            return FuzzRequest(path: "/plays" + (parts.isEmpty ? "" : "?" + parts.joined(separator: "&")))
        default:
            return FuzzRequest(path: "/metrics")
        }
    }

    private mutating func command() -> FuzzRequest {
        let contentType =
            int(4) == 0 ? pick(["text/plain", "", "application/x-www-form-urlencoded"]) : "application/json"
        let body: String
        let path: String
        switch int(8) {
        case 0:
            path = "/media/durations"
            body = pick([#"{"media": [\#(badMedia())]}"#, brokenJSON(), #"{"media": \#(badMedia())}"#, "{}"])
        case 1:
            path = "/timeline"
            body = pick([brokenJSON(), "{}", "[]", "null", #"{"wall": "hardening"}"#])
        case 2:
            path = pick(["/timeline", "/media/durations"])
            body = "[" + String(repeating: "1,", count: 40_000) + "1]"  // over the 64 KiB body limit
        case 3:
            path = "/timeline"
            body = timeline(media: badMedia())
        case 4:
            path = "/timeline"
            body = timeline(from: badTime(forItem: false))
        case 5:
            path = "/timeline"
            body = timeline(rate: badRate())
        case 6:
            path = "/timeline"
            body = timeline(version: pick(["0", "18446744073709551615", "9007199254740992", "-1", "1.5", "\"2\""]))
        default:
            path = "/timeline"
            body = timeline(outPoint: badTime(forItem: true))
        }
        return FuzzRequest(method: "PUT", path: path, body: body, contentType: contentType)
    }

    /// A timeline of one entry; whatever is not given is valid, so the one bad field is what the
    /// node must refuse. A version of 1 with nothing bad is not newer than the one playing.
    private mutating func timeline(
        media: String? = nil, from: String? = nil, rate: String? = nil, version: String = "1",
        outPoint: String? = nil
    ) -> String {
        let media = media ?? #""\#(mediaFolder)/clip.mp4""#
        let from =
            from.map { #"{"value": \#($0), "timescale": 1000000000}"# }
            ?? #"{"value": 5000000000, "timescale": 1000000000}"#
        let outPoint =
            outPoint.map { #"{"value": \#($0), "timescale": 1000000000}"# }
            ?? #"{"value": 1000000000, "timescale": 1000000000}"#
        let rate = rate.map { #"{"numerator": \#($0), "denominator": 1}"# } ?? #"{"numerator": 1, "denominator": 1}"#
        return #"{"wall": "hardening", "version": \#(version), "epoch": 0, "segments": [{"from": \#(from), "#
            + #""show": {"kind": "playlist"}, "playlist": {"entries": [{"media": \#(media), "#
            + #""inPoint": {"value": 0, "timescale": 1}, "outPoint": \#(outPoint), "repeats": {"forever": {}}}], "#
            + #""loops": true}, "origin": {"entry": 0, "pass": 0, "offset": {"value": 0, "timescale": 1}}, "#
            + #""rate": \#(rate), "isPlaying": true}]}"#
    }

    // MARK: Values

    private mutating func badMedia() -> String {
        pick([
            #""/dev/kmsg""#, #""/dev/zero""#, #""/etc/passwd""#, #""/proc/self/mem""#, #""relative.mp4""#, #""""#,
            #""\#(mediaFolder)/fifo.mp4""#, #""\#(mediaFolder)/../control.token""#, #""\#(mediaFolder)/missing.mp4""#,
            #""\#(mediaFolder)""#, "12", "true", "[]", "{}", #""\u0000""#,
            "\"" + String(repeating: "/a", count: 3000) + "\"",
        ])
    }

    /// A time no command can act on: negative or past the 4 s item (`forItem`), or long past or
    /// beyond the horizon (host times); special values; malformed.
    private mutating func badTime(forItem: Bool) -> String {
        let numeric =
            forItem
            ? pick(["-1", "-9223372036854775808", "4000000000", "1000000000000", "9223372036854775807"])
            : pick(["0", "-5000000000", "1", "9223372036854775807", "-9223372036854775808"])
        return pick([
            numeric, "1.5", "1e400", "-1e400", #""1""#, #"{"value": 1, "timescale": 1}"#, #""soon""#, "[]", "{}",
            "99999999999999999999999",
        ])
    }

    private mutating func badRate() -> String {
        pick([
            "0", "1000", "3.4e38", "-3.4e38", "1e-30", "1e309", "\"fast\"", "null", "-0", "17", "0.01", "257",
            "2147483648",
        ])
    }

    private mutating func brokenJSON() -> String {
        pick([
            "{", "}", "{\"rate\": }", "not json", "\u{FEFF}{", "{\"a\":" + String(repeating: "[", count: 5000), "\u{0}",
        ])
    }

    private mutating func maybeBody() -> String? {
        int(2) == 0 ? nil : pick(["{}", "x", brokenJSON()])
    }

    private mutating func number() -> String {
        pick([
            "0", "1", "-1", "4096", "4097", "18446744073709551615", "18446744073709551616", "99999999999999999999999",
            "1.5", "1e3", "abc", "", "%20", "0x10", "3840", "3841", "20000",
        ])
    }

    // MARK: Randomness

    private mutating func int(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    private mutating func pick<T>(_ choices: [T]) -> T { choices[int(choices.count)] }
}
