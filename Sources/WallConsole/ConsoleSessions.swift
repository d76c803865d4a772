import Foundation
import LockstepGuard
import LockstepLocks
import LockstepTime
import WallProtocol

/// The console's logins: the wall's control token is posted once, and the browser holds a session
/// cookie from then on, so the token never rides in a URL or in the page. Each session has its own
/// CSRF token, which every state-changing request must carry in a header (`X-Console-CSRF`): a
/// page of another site can make the browser send the cookie (not with SameSite=Strict, but an old
/// browser may), never read the page's CSRF token. Sessions end on the server at `lifetime`
/// whatever the cookie says, and at logout.
public final class ConsoleSessions: Sendable {
    /// What a login may do: an operator acts on the wall; a viewer (a lobby screen, a client)
    /// watches it: the page, its events, thumbnails and reports, no action.
    public enum Role: String, Sendable, Hashable, Codable {
        case `operator`, viewer
    }

    /// One logged-in browser.
    public struct Session: Sendable, Hashable {
        public var id: String
        public var csrf: String
        /// On the monotonic clock.
        public var expires: MediaTime
        public var role: Role = .operator
        /// The login's number since the daemon started, as the audit log names it (`login 7`).
        public var number = 0

        /// Who the audit log says acted: the credential and the login.
        public var actor: (who: String, via: String) { (role.rawValue, "login \(number)") }
    }

    /// Why a request is refused, as the page shows it.
    public enum Refusal: Error, Hashable, CustomStringConvertible {
        case wrongToken
        case noSession
        case expired
        case badCSRF
        case viewerOnly

        public var description: String {
            switch self {
            case .wrongToken:
                "that is not this wall's control token (the file control-token-file names on the controller)"
            case .noSession: "not logged in: open the console and give the wall's control token"
            case .expired: "the session has expired: log in again"
            case .badCSRF: "the request lacks this session's X-Console-CSRF header: reload the console"
            case .viewerOnly:
                "this login watches the wall and takes no action (a viewer's token): log in with the wall's control "
                    + "token to act"
            }
        }
    }

    /// The cookie's name.
    public static let cookie = "lockstep_console"
    /// The header a state-changing request carries the session's CSRF token in.
    public static let csrfHeader = "X-Console-CSRF"
    /// The most sessions kept: past it, the oldest is ended, so a flood of logins holds no memory.
    static let maximumSessions = 256

    private let token: ControlToken?
    private let viewerToken: ControlToken?
    public let lifetime: MediaTime
    private let clock: @Sendable () -> MediaTime
    private let sessions = Mutex<[String: Session]>([:])
    private let logins = Mutex(0)

    /// - Parameters:
    ///   - token: the wall's control token; nil when the wall has none (then any login is taken).
    ///   - viewerToken: the viewers' token (`viewer-token-file`): a login with it is read only.
    ///   - lifetime: how long a session lasts after its login.
    ///   - clock: monotonic now, injected for tests.
    public init(
        token: ControlToken?, viewerToken: ControlToken? = nil,
        lifetime: MediaTime = MediaTime(value: 12 * 3600, timescale: 1),
        clock: @escaping @Sendable () -> MediaTime = { LocalClock.monotonic.now() }
    ) {
        self.token = token
        self.viewerToken = viewerToken
        self.lifetime = lifetime
        self.clock = clock
    }

    /// Whether the wall asks for a token at all.
    public var needsToken: Bool { token != nil }

    /// A new session for `given` (the token as typed): an operator's with the control token, a
    /// viewer's with the viewers' token, or `.wrongToken`.
    public func login(token given: String) throws(Refusal) -> Session {
        var role = Role.operator
        if let token {
            let typed = "Bearer " + given.trimmingCharacters(in: .whitespacesAndNewlines)
            if token.accepts(authorization: typed) {
                role = .operator
            } else if viewerToken?.accepts(authorization: typed) == true {
                role = .viewer
            } else {
                throw .wrongToken
            }
        }
        let now = clock()
        let number = logins.withLock { count in
            count += 1
            return count
        }
        let session = Session(
            id: Self.randomHex(), csrf: Self.randomHex(), expires: now + lifetime, role: role, number: number)
        sessions.withLock { all in
            all = all.filter { $0.value.expires > now }
            if all.count >= Self.maximumSessions, let oldest = all.values.min(by: { $0.expires < $1.expires }) {
                all[oldest.id] = nil
            }
            all[session.id] = session
        }
        return session
    }

    /// The session a request's cookie names, if it is alive.
    public func session(cookie value: String?) throws(Refusal) -> Session {
        guard let value, !value.isEmpty else { throw .noSession }
        let now = clock()
        let found = sessions.withLock { all -> Session? in
            guard let session = all[value] else { return nil }
            if session.expires <= now {
                all[value] = nil
                return Session(id: "", csrf: "", expires: .zero)
            }
            return session
        }
        guard let found else { throw .noSession }
        guard !found.id.isEmpty else { throw .expired }
        return found
    }

    /// The session of a state-changing request: alive, and carrying its CSRF token.
    public func session(cookie value: String?, csrf: String?) throws(Refusal) -> Session {
        let session = try session(cookie: value)
        guard let csrf, Self.equal(Array(csrf.utf8), Array(session.csrf.utf8)) else { throw .badCSRF }
        return session
    }

    /// The session of an action: alive, carrying its CSRF token, and an operator's.
    public func operatorSession(cookie value: String?, csrf: String?) throws(Refusal) -> Session {
        let session = try session(cookie: value, csrf: csrf)
        guard session.role == .operator else { throw .viewerOnly }
        return session
    }

    /// Ends a session.
    public func logout(_ id: String) {
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// The `Set-Cookie` value that starts `session` in the browser: HttpOnly (no script reads it),
    /// SameSite=Strict (no other site's page sends it), Secure over TLS, expiring with the session.
    public func setCookie(_ session: Session, secure: Bool) -> String {
        let seconds = max(0, Int((session.expires - clock()).seconds))
        return "\(Self.cookie)=\(session.id); Path=/; Max-Age=\(seconds); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that ends the session in the browser.
    public static func clearCookie(secure: Bool) -> String {
        "\(cookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// 32 random bytes as hex, from the system's generator.
    static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }

    /// Compares in time that does not depend on where the first difference lies.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
