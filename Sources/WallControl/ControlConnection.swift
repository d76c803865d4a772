import AsyncHTTPClient
import LockstepGuard
import LockstepTime
import NIOCore
import NIOPosix
import NIOSSL
import WallProtocol

/// Clients for some nodes of a wall, sharing one `HTTPClient` configured from the wall's config:
/// the control token every request carries, TLS trusting only the config's roots, and every
/// request bounded by `timeout`. `wallctl` drives a wall with them; a node asks its peers for the
/// wall's timeline with them.
public struct ControlConnection: Sendable {
    public let http: HTTPClient
    public let clients: [NodeClient]
    /// The wall's control token, which every request carries; nil: the wall has none.
    public let token: ControlToken?

    /// Connects to `nodes` of `config` (none is contacted yet).
    public init(config: WallConfig, nodes: [NodeConfig], timeout: MediaTime) throws(ControlError) {
        var token: ControlToken?
        if let file = config.security.tokenFile {
            do {
                token = try ControlToken(contentsOfFile: file)
            } catch {
                throw .config("\(error)")
            }
        }
        let authorization = token?.authorization
        var configuration = Self.http(timeout)
        configuration.tlsConfiguration = try config.security.tls.map { tls throws(ControlError) in try Self.tls(tls) }
        let scheme = configuration.tlsConfiguration == nil ? "http" : "https"
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        do {
            clients = try nodes.map { node throws(ControlError) in
                try NodeClient(
                    node: node, wall: config.name, configSHA256: config.digest, http: http, scheme: scheme,
                    authorization: authorization, timeout: timeout)
            }
        } catch {
            try? http.syncShutdown()
            throw error
        }
        self.http = http
        self.token = token
    }

    public func shutdown() async throws {
        try await http.shutdown()
    }

    /// TLS that trusts only the config's roots, verifying the whole chain and that the certificate
    /// names the address connected to (its IP address, or the host name given in `control`).
    public static func tls(_ tls: ControlTLS) throws(ControlError) -> TLSConfiguration {
        let roots: [NIOSSLCertificate]
        do {
            roots = try NIOSSLCertificate.fromPEMFile(tls.trustRoots)
        } catch {
            throw .config("control-tls.trust-roots: cannot read \(tls.trustRoots): \(error)")
        }
        guard !roots.isEmpty else {
            throw .config("control-tls.trust-roots: \(tls.trustRoots) holds no PEM certificate")
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(roots)
        configuration.certificateVerification = .fullVerification
        return configuration
    }

    /// The HTTP client's configuration: connect and read bounded by `timeout`, no retried
    /// connections (a refused one fails the request at once), no redirects, no proxies.
    static func http(_ timeout: MediaTime) -> HTTPClient.Configuration {
        let limit = TimeAmount.nanoseconds(timeout.nanoseconds ?? Int64.max)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: HTTPClient.Configuration.Timeout(connect: limit, read: limit))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.httpVersion = .http1Only
        return configuration
    }
}
