import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LockstepGuard
import LockstepTime
import NIOCore
import WallConsole
import WallControl
import WallProtocol
import XCTest

/// The console's HTTP side in-process (HummingbirdTesting's router mode): login, the cookie, CSRF,
/// and a clear refusal of every bad input, with no node running (an action that passes every check
/// fails on reaching the nodes, and says so).
final class ConsoleRoutesTests: XCTestCase {
    private static let token = "routes-test-token-0123456789"
    private static let viewerToken = "routes-test-viewer-0123456789"

    private func console() throws -> Console {
        let config = try WallConfig.consoleTest(
            "routes", nodes: [("a", 18591), ("b", 18592)],
            extra: "cues:\n  intro: {media: /tmp/clip.mp4, in: 1s, out: 2s, then: return}")

        return try Console(
            config: config, token: try ControlToken(Self.token), viewerToken: try ControlToken(Self.viewerToken),
            secure: false, library: nil, actionWaitLimit: MediaTime(value: 1, timescale: 1),
            audit: AuditLog(
                path: FileManager.default.temporaryDirectory.appendingPathComponent(
                    "lockstep-routes-audit-\(getpid())-\(UUID()).jsonl"
                ).path))
    }

    /// Runs `body` with a console, and closes its connections after, whether `body` threw or not.
    private func withConsole(_ body: (Console) async throws -> Void) async throws {
        let console = try console()
        do {
            try await body(console)
        } catch {
            await console.shutdown()
            throw error
        }
        await console.shutdown()
    }

    private func application(_ console: Console) -> some ApplicationProtocol {
        let router = Router()
        console.routes(router)
        return Application(router: router)
    }

    private static func login(_ client: some TestClientProtocol, token: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/console/login", method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(
                string: "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")))
    }

    func testLogin_setsAStrictHttpOnlyCookie_andAWrongTokenGetsASentence() async throws {
        try await withConsole { console in
            try await self.application(console).test(.router) { client in
                let page = try await client.execute(uri: "/console", method: .get)
                XCTAssertEqual(page.status, .ok)
                XCTAssertTrue(String(buffer: page.body).contains("Control token"))
                XCTAssertNotNil(page.headers[HTTPField.Name("Content-Security-Policy")!])

                let wrong = try await Self.login(client, token: Self.token + "x")
                XCTAssertEqual(wrong.status, .unauthorized)
                XCTAssertTrue(
                    String(buffer: wrong.body).contains("not this wall's control token"), String(buffer: wrong.body))
                XCTAssertNil(wrong.headers[.setCookie])

                let right = try await Self.login(client, token: Self.token)
                XCTAssertEqual(right.status, .seeOther)
                XCTAssertEqual(right.headers[.location], "/console")
                let cookie = try XCTUnwrap(right.headers[.setCookie])
                XCTAssertTrue(
                    cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age="),
                    cookie)
                XCTAssertFalse(cookie.contains(Self.token), "the cookie is a session, not the token")
                let session = String(cookie.split(separator: ";")[0])
                let app = try await client.execute(uri: "/console", method: .get, headers: [.cookie: session])
                XCTAssertTrue(String(buffer: app.body).contains("console.js"))
                XCTAssertFalse(String(buffer: app.body).contains(Self.token))
            }
        }
    }

    func testAViewersLogin_watches_andEveryActionIsRefusedWithASentence() async throws {
        try await withConsole { console in
            try await self.application(console).test(.router) { client in
                let loggedIn = try await Self.login(client, token: Self.viewerToken)
                XCTAssertEqual(loggedIn.status, .seeOther, String(buffer: loggedIn.body))
                let cookie = try XCTUnwrap(loggedIn.headers[.setCookie])
                let id = String(cookie.split(separator: ";")[0].dropFirst("\(ConsoleSessions.cookie)=".count))
                let session = try console.sessions.session(cookie: id)
                XCTAssertEqual(session.role, .viewer)
                var headers: HTTPFields = [
                    .cookie: "\(ConsoleSessions.cookie)=\(id)", .contentType: "application/json",
                ]
                headers[HTTPField.Name(ConsoleSessions.csrfHeader)!] = session.csrf
                let page = try await client.execute(uri: "/console", method: .get, headers: headers)
                XCTAssertTrue(String(buffer: page.body).contains("console.js"), "a viewer gets the page")
                let pause = try await client.execute(
                    uri: "/console/action", method: .post, headers: headers,
                    body: ByteBuffer(string: #"{"verb":"pause"}"#))
                XCTAssertEqual(pause.status, .forbidden)
                XCTAssertTrue(String(buffer: pause.body).contains("takes no action"), String(buffer: pause.body))
                let upload = try await client.execute(
                    uri: "/console/upload?name=a.mp4", method: .put, headers: headers, body: ByteBuffer(string: "abc"))
                XCTAssertEqual(upload.status, .forbidden, String(buffer: upload.body))

                // Each is in the audit log: who (the credential, the login), what, and the refusal.
                let wrong = try await Self.login(client, token: "not-a-token-of-this-wall")
                XCTAssertEqual(wrong.status, .unauthorized)
                let audit = try XCTUnwrap(console.audit)
                XCTAssertEqual(
                    audit.recent.map { "\($0.who) \($0.via ?? "-") \($0.action) \($0.outcome)" },
                    [
                        "viewer login 1 login done", "viewer login 1 an action refused",
                        "viewer login 1 an upload refused",
                        "unknown - login refused",
                    ])
                XCTAssertTrue(audit.recent[1].reason?.contains("takes no action") == true)
                let file = try await client.execute(uri: "/console/audit", method: .get, headers: headers)
                XCTAssertEqual(file.status, .ok)
                XCTAssertEqual(String(buffer: file.body).split(separator: "\n").count, 4, String(buffer: file.body))
                let anonymous = try await client.execute(uri: "/console/audit", method: .get)
                XCTAssertEqual(anonymous.status, .unauthorized)
            }
        }
    }

    func testStateChanges_needTheSession_itsCSRFHeader_andThisOrigin() async throws {
        try await withConsole { console in
            try await self.application(console).test(.router) { client in
                let loggedIn = try await Self.login(client, token: Self.token)
                let cookie = try XCTUnwrap(loggedIn.headers[.setCookie])
                let id = String(cookie.split(separator: ";")[0].dropFirst("\(ConsoleSessions.cookie)=".count))
                let csrf = try console.sessions.session(cookie: id).csrf
                let session = "\(ConsoleSessions.cookie)=\(id)"
                let pause = ByteBuffer(string: #"{"verb":"pause"}"#)
                let csrfField = HTTPField.Name(ConsoleSessions.csrfHeader)!

                let none = try await client.execute(uri: "/console/action", method: .post, body: pause)
                XCTAssertEqual(none.status, .unauthorized)
                let noCSRF = try await client.execute(
                    uri: "/console/action", method: .post, headers: [.cookie: session], body: pause)
                XCTAssertEqual(noCSRF.status, .forbidden)
                XCTAssertTrue(String(buffer: noCSRF.body).contains("X-Console-CSRF"))
                let foreign = try await client.execute(
                    uri: "/console/action", method: .post,
                    headers: [.cookie: session, csrfField: csrf, .origin: "https://elsewhere.example"], body: pause)
                XCTAssertEqual(foreign.status, .forbidden)

                var headers: HTTPFields = [.cookie: session, .contentType: "application/json"]
                headers[csrfField] = csrf
                for (body, status, words) in [
                    (#"{"verb":"seek","seconds":-1}"#, HTTPResponse.Status.badRequest, "zero or more"),
                    (#"{"verb":"seek"}"#, .badRequest, "seconds"),
                    (#"{"verb":"identify","seconds":1000}"#, .badRequest, "1 to 600"),
                    (#"{"verb":"still","image":"relative.png"}"#, .badRequest, "absolute path"),
                    (#"{"verb":"cue","name":"nowhere"}"#, .notFound, "its cues are intro"),
                    (#"{"verb":"cue","name":"bad name!"}"#, .badRequest, "cue name"),
                    (#"{"verb":"launch"}"#, .notFound, "no action"),
                    (#"not json"#, .badRequest, "JSON"),
                    (#"{"verb":""# + String(repeating: "x", count: 20_000) + #""}"#, .contentTooLarge, "at most"),
                ] {
                    let reply = try await client.execute(
                        uri: "/console/action", method: .post, headers: headers, body: ByteBuffer(string: body))
                    XCTAssertEqual(reply.status, status, body.prefix(60) + ": " + String(buffer: reply.body))
                    XCTAssertTrue(String(buffer: reply.body).contains(words), String(buffer: reply.body))
                }
                // Every check passed: the wall is asked, and not being there is said (no crash, no hang).
                let unreachable = try await client.execute(
                    uri: "/console/action", method: .post, headers: headers, body: pause)
                XCTAssertEqual(unreachable.status, .badGateway, String(buffer: unreachable.body))
                XCTAssertTrue(String(buffer: unreachable.body).contains("pause"), String(buffer: unreachable.body))
                // The operator's pause that reached no node is in the audit log as failed; a bad request
                // as refused.
                let last = try XCTUnwrap(console.audit?.recent.last)
                XCTAssertEqual(
                    [last.who, last.via, last.action, last.outcome], ["operator", "login 1", "pause", "failed"])
                XCTAssertTrue(console.audit?.recent.contains { $0.action == "seek" && $0.outcome == "refused" } == true)

                let noLibrary = try await client.execute(
                    uri: "/console/upload?name=clip.mp4", method: .put, headers: headers.merging([.contentLength: "3"]),
                    body: ByteBuffer(string: "abc"))
                XCTAssertEqual(noLibrary.status, .notFound)
                let badName = try await client.execute(
                    uri: "/console/upload?name=..%2Fetc", method: .put, headers: headers,
                    body: ByteBuffer(string: "abc"))
                XCTAssertEqual(badName.status, .badRequest)
                let thumbnail = try await client.execute(
                    uri: "/console/thumbnail/zz", method: .get, headers: [.cookie: session])
                XCTAssertEqual(thumbnail.status, .notFound)
                XCTAssertTrue(String(buffer: thumbnail.body).contains("no node"))

                let logout = try await client.execute(uri: "/console/logout", method: .post, headers: headers)
                XCTAssertEqual(logout.status, .seeOther)
                XCTAssertTrue(logout.headers[.setCookie]?.contains("Max-Age=0") == true)
                let after = try await client.execute(
                    uri: "/console/action", method: .post, headers: headers, body: pause)
                XCTAssertEqual(after.status, .unauthorized)
            }
        }
    }
}

extension HTTPFields {
    fileprivate func merging(_ other: HTTPFields) -> HTTPFields {
        var all = self
        for field in other { all[field.name] = field.value }
        return all
    }
}
