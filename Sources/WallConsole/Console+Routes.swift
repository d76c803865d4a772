import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WallContent
import WallControl
import WallProtocol

extension Console {
    /// The largest JSON body of an action.
    static let actionBodyLimit = 16 << 10

    /// Adds the console's routes to the daemon's router, beside its other routes:
    ///
    /// - `GET /console`: the page, or the login form without a session; `GET /console/console.js`
    ///   and `console.css`, what the page loads (nothing from elsewhere);
    /// - `POST /console/login` (form field `token`) and `POST /console/logout`;
    /// - `GET /console/events`: the server-sent events the page lives on;
    /// - `GET /console/thumbnail/NODE`: a node's newest thumbnail;
    /// - `POST /console/action` (JSON) and `PUT /console/upload?name=FILE` (the file's bytes);
    /// - `GET /console/audit`: the audit log as JSON lines.
    /// - `GET /console/plays?from=24h&to=now&format=csv|json`: proof of play (`PlayReport`), for
    ///   viewers too.
    ///
    /// Every route but the page's assets and the login needs a session cookie; the state-changing
    /// ones also the session's CSRF header, and an `Origin` (where the browser sends one) of this
    /// daemon.
    public func routes(_ router: Router<BasicRequestContext>) {
        router.get("/") { _, _ -> Response in Self.redirect("/console") }
        router.get("/console") { request, _ -> Response in
            if (try? self.sessions.session(cookie: Self.cookie(request))) != nil {
                return Self.asset(ConsolePage.html, type: "text/html; charset=utf-8")
            }
            return Self.asset(
                ConsolePage.login(message: nil, needsToken: self.sessions.needsToken), type: "text/html; charset=utf-8")
        }
        router.get("/console/console.js") { _, _ -> Response in
            Self.asset(ConsolePage.script, type: "text/javascript; charset=utf-8")
        }
        router.get("/console/console.css") { _, _ -> Response in
            Self.asset(ConsolePage.style, type: "text/css; charset=utf-8")
        }
        router.post("/console/login") { request, _ -> Response in
            if let refused = Self.foreignOrigin(request) { return refused }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: 4096)
            } catch {
                return Self.loginPage(
                    "the login form is over 4 KiB", status: .contentTooLarge, needsToken: self.sessions.needsToken)
            }
            let token = Self.formField("token", in: String(buffer: body)) ?? ""
            do {
                let session = try self.sessions.login(token: token)
                self.note(session, "login", outcome: "done")
                var response = Self.redirect("/console")
                response.headers[.setCookie] = self.sessions.setCookie(session, secure: self.secure)
                return response
            } catch {
                self.note(nil, "login", outcome: "refused", reason: "\(error)")
                // A guesser waits for each answer; an operator who mistyped hardly notices.
                try? await Task.sleep(for: Self.refusalDelay)
                return Self.loginPage("\(error)", status: .unauthorized, needsToken: self.sessions.needsToken)
            }
        }
        router.post("/console/logout") { request, _ -> Response in
            if let refused = Self.foreignOrigin(request) { return refused }
            if let session = try? self.sessions.session(
                cookie: Self.cookie(request), csrf: request.headers[Self.csrfField])
            {
                self.sessions.logout(session.id)
                self.note(session, "logout", outcome: "done")
            }
            var response = Self.redirect("/console")
            response.headers[.setCookie] = ConsoleSessions.clearCookie(secure: self.secure)
            return response
        }
        router.get("/console/events") { request, _ -> Response in
            let session: ConsoleSessions.Session
            do {
                session = try self.sessions.session(cookie: Self.cookie(request))
            } catch {
                return Self.json(.unauthorized, ["error": "\(error)"])
            }
            let (id, events) = self.monitor.subscribe(wallInfo: self.info(session))
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            let monitor = self.monitor
            let sessions = self.sessions
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    defer { monitor.unsubscribe(id) }
                    for await frame in events {
                        // A session that expired or logged out ends its stream too (at the latest
                        // with the next keep-alive, 15 s): the page then asks for a login.
                        guard (try? sessions.session(cookie: session.id)) != nil else { break }
                        try await writer.write(ByteBuffer(string: frame))
                    }
                    try await writer.finish(nil)
                })
        }
        router.get("/console/audit") { request, _ -> Response in
            do {
                _ = try self.sessions.session(cookie: Self.cookie(request))
            } catch {
                return Self.json(.unauthorized, ["error": "\(error)"])
            }
            guard let audit = self.audit else {
                return Self.json(.notFound, ["error": "this console keeps no audit log"])
            }
            // The file as it is: one JSON record a line, oldest first (the one before it is <file>.1).
            let data = (try? Data(contentsOf: URL(fileURLWithPath: audit.path))) ?? Data()
            var headers = HTTPFields()
            headers[.contentType] = "application/jsonl; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get("/console/plays") { request, _ -> Response in
            do {
                _ = try self.sessions.session(cookie: Self.cookie(request))
            } catch {
                return Self.json(.unauthorized, ["error": "\(error)"])
            }
            let query = request.uri.queryParameters
            let format = query.get("format") ?? "json"
            let now = AuditRecord.now()
            guard format == "json" || format == "csv" else {
                return Self.json(.badRequest, ["error": "format must be csv or json, got \"\(format.prefix(32))\""])
            }
            let from: Int64
            let to: Int64
            switch PlayRecord.span(from: query.get("from") ?? "24h", to: query.get("to") ?? "now", nowUnixMs: now) {
            case .success(let span): (from, to) = span
            case .failure(let error): return Self.json(.badRequest, ["error": error.description])
            }
            // One report at a time: each reads every node's files.
            let mine = self.reporting.withLock { busy -> Bool in
                guard !busy else { return false }
                busy = true
                return true
            }
            guard mine else {
                return Self.json(
                    .tooManyRequests, ["error": "a report is being gathered for another console: ask again in a moment"]
                )
            }
            defer { self.reporting.withLock { $0 = false } }
            let report = await PlayReport.gather(self.actionWall, fromUnixMs: from, toUnixMs: to)
            guard format == "csv" else { return Self.json(.ok, report) }
            var headers = HTTPFields()
            headers[.contentType] = "text/csv; charset=utf-8; header=present"
            headers[.cacheControl] = "no-store"
            let name = "\(self.config.name)-plays-\(PlayRecord.utc(from))-\(PlayRecord.utc(to)).csv"
                .replacingOccurrences(of: ":", with: "")
            headers[.contentDisposition] = "attachment; filename=\"\(name.filter { $0.isASCII && $0 != "\"" })\""
            return Response(
                status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: report.csv)))
        }
        router.get("/console/thumbnail/:node") { request, context -> Response in
            do {
                _ = try self.sessions.session(cookie: Self.cookie(request))
            } catch {
                return Self.json(.unauthorized, ["error": "\(error)"])
            }
            let node = context.parameters.get("node") ?? ""
            guard self.config.node(node) != nil else {
                return Self.json(.notFound, ["error": "no node \"\(node.prefix(64))\" in wall \(self.config.name)"])
            }
            guard let picture = self.monitor.thumbnail(node) else {
                return Self.json(.notFound, ["error": "no thumbnail of \(node) yet"])
            }
            var headers = HTTPFields()
            headers[.contentType] = "image/bmp"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: picture)))
        }
        router.post("/console/action") { request, _ -> Response in
            let session: ConsoleSessions.Session
            switch self.authorize(request, "an action") {
            case .success(let found): session = found
            case .failure(let refused): return refused.response
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: Self.actionBodyLimit)
            } catch {
                return Self.json(
                    .contentTooLarge, ["error": "an action's body is at most \(Self.actionBodyLimit) bytes"])
            }
            let action: ActionRequest
            do throws(JSONBodyError) {
                action = try JSONBody.decode(ActionRequest.self, from: Data(buffer: body))
            } catch {
                return Self.json(.badRequest, ["error": "an action is JSON such as {\"verb\": \"pause\"}: \(error)"])
            }
            do throws(ActionError) {
                return Self.json(.ok, try await self.act(action, by: session))
            } catch {
                return Self.json(.init(code: error.status), ["error": error.description])
            }
        }
        router.put("/console/upload") { request, _ -> Response in
            let session: ConsoleSessions.Session
            switch self.authorize(request, "an upload") {
            case .success(let found): session = found
            case .failure(let refused): return refused.response
            }
            guard let name = request.uri.queryParameters.get("name"), Self.isFileName(name) else {
                return Self.json(
                    .badRequest,
                    [
                        "error":
                            "PUT /console/upload?name=FILE: a file name of 1 to 255 characters, no / or control characters"
                    ])
            }
            guard let length = request.headers[.contentLength].flatMap({ UInt64($0) }) else {
                return Self.json(.lengthRequired, ["error": "an upload says its length (Content-Length)"])
            }
            do throws(ActionError) {
                return Self.json(
                    .ok,
                    try await self.upload(
                        name: name, size: length, body: request.body.map { Data(buffer: $0) }, by: session))
            } catch {
                return Self.json(.init(code: error.status), ["error": error.description])
            }
        }
    }

    static let csrfField = HTTPField.Name(ConsoleSessions.csrfHeader)!
    /// How long a wrong token's refusal waits.
    static let refusalDelay = Duration.milliseconds(500)

    /// A refusal as the route answers it.
    struct Refused: Error {
        var response: Response
    }

    /// The operator's session an action (`what`) comes from, or its refusal: from another site,
    /// without a live session and its CSRF header, or a viewer's. A refusal of a logged-in
    /// browser goes to the audit log.
    func authorize(_ request: Request, _ what: String) -> Result<ConsoleSessions.Session, Refused> {
        if let refused = Self.foreignOrigin(request) { return .failure(Refused(response: refused)) }
        do {
            return .success(
                try sessions.operatorSession(cookie: Self.cookie(request), csrf: request.headers[Self.csrfField]))
        } catch {
            if error == .viewerOnly || error == .badCSRF {
                note(try? sessions.session(cookie: Self.cookie(request)), what, outcome: "refused", reason: "\(error)")
            }
            let status: HTTPResponse.Status = error == .badCSRF || error == .viewerOnly ? .forbidden : .unauthorized
            return .failure(Refused(response: Self.json(status, ["error": "\(error)"])))
        }
    }

    /// A request whose `Origin` names another site than the one it was sent to.
    static func foreignOrigin(_ request: Request) -> Response? {
        guard let origin = request.headers[.origin], origin != "null" else { return nil }
        let host = request.head.authority ?? ""
        let named = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
        guard named != host else { return nil }
        return json(.forbidden, ["error": "a request from \(origin.prefix(100)), not from this console"])
    }

    static func cookie(_ request: Request) -> String? {
        request.cookies[ConsoleSessions.cookie]?.value
    }

    /// A file name for the library: no folders, nothing a terminal or a page could misread.
    static func isFileName(_ name: String) -> Bool {
        (1...255).contains(name.utf8.count) && !name.contains("/") && name != "." && name != ".."
            && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// A field of an `application/x-www-form-urlencoded` body.
    static func formField(_ name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }

    static func asset(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        headers[.init("Content-Security-Policy")!] =
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func loginPage(_ message: String, status: HTTPResponse.Status, needsToken: Bool) -> Response {
        var response = asset(
            ConsolePage.login(message: message, needsToken: needsToken), type: "text/html; charset=utf-8")
        response.status = status
        return response
    }

    static func redirect(_ location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        let data = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
