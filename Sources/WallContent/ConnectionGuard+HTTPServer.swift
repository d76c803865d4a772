import HummingbirdCore
import HummingbirdTLS
import LockstepGuard
import NIOSSL

extension ConnectionGuard {
    /// An HTTP/1.1 server, over TLS when `tls` is given, each of whose connections this guard
    /// admits and times (`HTTPGuardHandler`); the answers to content requests leave as bulk traffic.
    public func httpServer(tls: TLSConfiguration?) throws -> HTTPServerBuilder {
        // A handler for each connection: the configuration's handlers are made anew for every one.
        let http1 = HTTPServerBuilder.http1(
            configuration: HTTP1Channel.Configuration(
                additionalChannelHandlers: [HTTPGuardHandler(guard: self, bulkPaths: [ContentServer.pathPrefix])]))
        guard let tls else { return http1 }
        return try .tls(http1, tlsConfiguration: tls)
    }
}
