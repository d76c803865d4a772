import LockstepGuard
import LockstepLocks
import LockstepTime
import WallConsole
import WallProtocol
import XCTest

final class ConsoleSessionsTests: XCTestCase {
    private let token = try! ControlToken("0123456789abcdef-the-wall")

    /// A clock the test moves by hand.
    private final class Clock: Sendable {
        let now = Mutex(MediaTime(value: 1000, timescale: 1))
        func advance(_ seconds: Int64) { now.withLock { $0 = $0 + MediaTime(value: seconds, timescale: 1) } }
    }

    func testLogin_withTheToken_startsASession_andAWrongTokenIsRefused() throws {
        let sessions = ConsoleSessions(token: token)
        XCTAssertThrowsError(try sessions.login(token: "0123456789abcdef-the-wal")) { error in
            XCTAssertEqual(error as? ConsoleSessions.Refusal, .wrongToken)
        }
        XCTAssertThrowsError(try sessions.login(token: ""))
        let session = try sessions.login(token: " 0123456789abcdef-the-wall\n")
        XCTAssertEqual(try sessions.session(cookie: session.id), session)
        XCTAssertNotEqual(session.id, session.csrf)
        XCTAssertEqual(session.id.count, 64)
    }

    func testAViewersToken_startsAReadOnlySession_refusedEveryAction() throws {
        let viewer = try ControlToken("viewer-token-0123456789")
        let sessions = ConsoleSessions(token: token, viewerToken: viewer)
        let watching = try sessions.login(token: "viewer-token-0123456789")
        XCTAssertEqual(watching.role, .viewer)
        XCTAssertNoThrow(try sessions.session(cookie: watching.id, csrf: watching.csrf), "it may log out")
        XCTAssertThrowsError(try sessions.operatorSession(cookie: watching.id, csrf: watching.csrf)) { error in
            XCTAssertEqual(error as? ConsoleSessions.Refusal, .viewerOnly)
            XCTAssertTrue("\(error)".contains("takes no action"), "\(error)")
        }
        let acting = try sessions.login(token: "0123456789abcdef-the-wall")
        XCTAssertEqual(acting.role, .operator)
        XCTAssertNoThrow(try sessions.operatorSession(cookie: acting.id, csrf: acting.csrf))
        XCTAssertThrowsError(try ConsoleSessions(token: token).login(token: "viewer-token-0123456789"), "no viewers")
    }

    func testSession_expiresOnTheServer_whateverTheCookieSays() throws {
        let clock = Clock()
        let sessions = ConsoleSessions(
            token: token, lifetime: MediaTime(value: 60, timescale: 1), clock: { clock.now.withLock { $0 } })
        let session = try sessions.login(token: "0123456789abcdef-the-wall")
        clock.advance(59)
        XCTAssertNoThrow(try sessions.session(cookie: session.id))
        clock.advance(1)
        XCTAssertThrowsError(try sessions.session(cookie: session.id)) { error in
            XCTAssertEqual(error as? ConsoleSessions.Refusal, .expired)
        }
        // Once seen expired it is gone.
        XCTAssertThrowsError(try sessions.session(cookie: session.id)) { error in
            XCTAssertEqual(error as? ConsoleSessions.Refusal, .noSession)
        }
    }

    func testStateChange_needsTheSessionsCSRFToken() throws {
        let sessions = ConsoleSessions(token: token)
        let session = try sessions.login(token: "0123456789abcdef-the-wall")
        let other = try sessions.login(token: "0123456789abcdef-the-wall")
        XCTAssertNoThrow(try sessions.session(cookie: session.id, csrf: session.csrf))
        for csrf in [nil, "", other.csrf, String(session.csrf.dropLast())] {
            XCTAssertThrowsError(try sessions.session(cookie: session.id, csrf: csrf)) { error in
                XCTAssertEqual(error as? ConsoleSessions.Refusal, .badCSRF)
            }
        }
        XCTAssertThrowsError(try sessions.session(cookie: nil, csrf: session.csrf))
        sessions.logout(session.id)
        XCTAssertThrowsError(try sessions.session(cookie: session.id, csrf: session.csrf))
        XCTAssertNoThrow(try sessions.session(cookie: other.id, csrf: other.csrf))
    }

    func testCookie_isHttpOnly_SameSiteStrict_expiring_andSecureOverTLS() throws {
        let sessions = ConsoleSessions(token: nil, lifetime: MediaTime(value: 3600, timescale: 1))
        XCTAssertFalse(sessions.needsToken)
        let session = try sessions.login(token: "anything")
        let plain = sessions.setCookie(session, secure: false)
        XCTAssertTrue(plain.hasPrefix("\(ConsoleSessions.cookie)=\(session.id);"), plain)
        for part in ["HttpOnly", "SameSite=Strict", "Path=/"] { XCTAssertTrue(plain.contains(part), plain) }
        XCTAssertTrue(plain.contains("Max-Age=3600") || plain.contains("Max-Age=3599"), plain)
        XCTAssertFalse(plain.contains("Secure"), plain)
        XCTAssertTrue(sessions.setCookie(session, secure: true).hasSuffix("; Secure"))
    }
}
