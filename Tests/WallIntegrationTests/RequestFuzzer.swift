import LockstepNet

/// One generated control request: well-formed HTTP with any method, path, headers and body, or
/// bytes that are not HTTP at all.
struct FuzzRequest: CustomStringConvertible {
    enum Credentials { case token, none, wrongToken, tokenFromWebPage }

    var method = "GET"
    var path = "/status"
    var body: String?
    var contentType = "application/json"
    var credentials = Credentials.token
    /// Bytes sent instead of a request built from the fields above.
    var raw: [UInt8]?

    var isWellFormedHTTP: Bool { raw == nil }

    func bytes(port: Int, token: String) -> [UInt8] {
        if let raw { return raw }
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
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
        return "\(method) \(path) [\(credentials)] \(body.map { String($0.prefix(200)) } ?? "")"
    }
}

/// Generates control requests that a node must refuse or answer harmlessly: a command endpoint
/// only ever gets a body with at least one field a valid command cannot have, so the node being
/// still in play afterwards shows that nothing slipped through.
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
            Array("POST /start HTTP/1.1\r\nContent-Length: -5\r\n\r\n".utf8),
            Array("POST /start HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n{}".utf8),
            Array("GET /status HTTP/1.1\r\nX-Long: \(String(repeating: "a", count: 100_000))\r\n\r\n".utf8),
            Array("\r\n\r\n\r\n".utf8),
        ]
        return FuzzRequest(raw: pick(shapes))
    }

    private mutating func strangeRoute() -> FuzzRequest {
        let paths = [
            "/", "/status/", "/../../etc/passwd", "/%00", "/start?x=1", "/load/extra",
            "/" + String(repeating: "a", count: 4000),
            "/metrics?format=%ff", "/frames/1", "/snapshot.png", "//status", "/STATUS",
        ]
        let methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "BREW"]
        let commands = ["/load", "/preroll", "/start", "/pause", "/seek", "/stop", "/identify"]
        if int(2) == 0 {
            // A command by the wrong method, or a query endpoint by POST.
            return FuzzRequest(method: pick(["GET", "PUT", "DELETE"]), path: pick(commands), body: maybeBody())
        }
        return FuzzRequest(method: pick(methods), path: pick(paths), body: maybeBody())
    }

    /// Any command, even a valid one, without the token or from a web page: always refused.
    private mutating func credentialsOnly() -> FuzzRequest {
        let commands = [
            ("/stop", ""), ("/pause", "{}"), ("/load", "{}"), ("/seek", #"{"itemTimeNs": 0}"#),
        ]
        let (path, body) = pick(commands)
        return FuzzRequest(
            method: "POST", path: path, body: body, contentType: pick(["application/json", "text/plain"]),
            credentials: pick([.none, .wrongToken, .tokenFromWebPage]))
    }

    private mutating func query() -> FuzzRequest {
        switch int(4) {
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
        default:
            return FuzzRequest(path: "/metrics")
        }
    }

    private mutating func command() -> FuzzRequest {
        let contentType =
            int(4) == 0 ? pick(["text/plain", "", "application/x-www-form-urlencoded"]) : "application/json"
        let body: String
        let path: String
        switch int(5) {
        case 0:
            path = "/load"
            body = pick([#"{"media": \#(badMedia())}"#, brokenJSON(), #"{"media": \#(badMedia()), "extra": 1}"#])
        case 1:
            path = pick(["/preroll", "/seek"])
            body = pick([#"{"itemTimeNs": \#(badTime(forItem: true))}"#, brokenJSON(), "{}", "[]", "null"])
        case 2:
            path = "/start"
            let rate = int(2) == 0 ? badRate() : pick(["1", "1.0", "-1", "2"])
            let itemTime = int(2) == 0 ? badTime(forItem: true) : #"0"#
            body = pick([
                #"{"rate": \#(rate), "itemTimeNs": \#(itemTime), "hostTimeNs": \#(badTime(forItem: false))}"#,
                #"{"rate": \#(rate), "itemTimeNs": \#(itemTime)}"#, brokenJSON(),
            ])
        case 3:
            path = pick(["/pause", "/identify"])
            let key = path == "/pause" ? "hostTimeNs" : "durationNs"
            body = pick([#"{"\#(key)": \#(badTime(forItem: false))}"#, brokenJSON()])
        default:
            path = pick(["/load", "/start", "/seek", "/pause", "/identify"])
            body = "[" + String(repeating: "1,", count: 40_000) + "1]"  // over the 64 KiB body limit
        }
        return FuzzRequest(method: "POST", path: path, body: body, contentType: contentType)
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
        pick(["0", "1000", "3.4e38", "-3.4e38", "1e-30", "1e309", "\"fast\"", "null", "-0", "17", "0.01"])
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
