import HummingbirdCore
import HummingbirdTLS
import LockstepGuard
import NIOSSL

extension ConnectionGuard {
    /// An HTTP/1.1 server, over TLS when `tls` is given, each of whose connections this guard
    /// admits and times (`HTTPGuardHandler`).
    public func httpServer(tls: TLSConfiguration?) throws -> HTTPServerBuilder {
        let http1 = HTTPServerBuilder.http1(
            configuration: HTTP1Channel.Configuration(additionalChannelHandlers: [HTTPGuardHandler(guard: self)]))
        guard let tls else { return http1 }
        return try .tls(http1, tlsConfiguration: tls)
    }
}
