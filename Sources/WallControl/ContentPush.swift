import AsyncHTTPClient
import Foundation
import LockstepNet
import LockstepTime
import NIOCore
import NIOPosix
import NIOSSL
import WallContent
import WallProtocol
import WallTimeline

#if canImport(Glibc)
    import Glibc
#endif

/// Pushes files from this machine to every node that lacks them: content IDs computed here, an
/// origin serving them while the nodes fetch (from each other first), progress on the terminal.
public struct ContentPush: Sendable {
    public let wall: Wall
    /// HOST[:PORT] the nodes fetch pushed files from (nil: this machine's address toward the first
    /// node, any free port).
    public let origin: String?
    /// Name files by path only, as the nodes' media roots hold them: send nothing.
    public let noPush: Bool
    /// Hears every node's progress about twice a second while they fetch.
    public let progress: @Sendable ([ContentControl.Progress]) -> Void

    public init(
        wall: Wall, origin: String? = nil, noPush: Bool = false,
        progress: @escaping @Sendable ([ContentControl.Progress]) -> Void = { _ in }
    ) {
        self.wall = wall
        self.origin = origin
        self.noPush = noPush
        self.progress = progress
    }

    /// The files of `media` that exist here (for a template, every node's), with each node's ID of
    /// each, by media name; once every node holds them. Media not found here are left to the
    /// nodes' media roots.
    public func distribute(_ media: [String]) async throws -> [String: [String: ContentID]] {
        guard !noPush else { return [:] }
        let (needs, paths, lists) = try Self.needs(media, nodes: wall.clients.map(\.id))
        guard !paths.isEmpty else { return [:] }
        var distributed: [String: [String: ContentID]] = [:]
        for (node, list) in needs {
            for need in list { distributed[need.name, default: [:]][node] = need.id }
        }
        let total = paths.keys.reduce(UInt64(0)) { $0 + $1.size }
        wall.say(
            "push: \(paths.count) file\(paths.count == 1 ? "" : "s"), \(String(format: "%.1f", Double(total) / 1e6)) MB"
        )
        let delivered = String(format: "%.1f", Double(needs.values.flatMap { $0 }.reduce(0) { $0 + $1.id.size }) / 1e6)
        if let daemon = wall.config.controllerOrigin {
            // The daemon's library is the origin: each file uploaded to it once, kept there for nodes
            // that come later.
            let uploaded = try await upload(paths, to: daemon)
            let sentBefore = await librarySent(daemon)
            try await ContentControl(wall: wall).distribute(needs, origins: [daemon]) { progress($0) }
            let sentAfter = await librarySent(daemon)
            let sent = sentBefore.flatMap { before in
                sentAfter.map { after in String(format: "%.1f", Double(after - min(before, after)) / 1e6) }
            }
            wall.say(
                "push: every node holds every file; \(String(format: "%.1f", Double(uploaded) / 1e6)) MB uploaded "
                    + "to the daemon's library; the origin sent \(sent ?? "an unknown number of") MB of \(delivered) MB "
                    + "delivered")
            return distributed
        }
        let origin = ContentOrigin(
            files: paths, lists: lists, token: wall.token, bytesPerSecond: wall.config.contentBandwidth)
        let (host, port) = try originAddress()
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Int.self)
        let tls = try Self.originTLS(wall.config)
        let serving = Task { try await origin.run(host: host, port: port, tls: tls) { boundContinuation.yield($0) } }
        defer { serving.cancel() }
        var ports = bound.makeAsyncIterator()
        guard let boundPort = await ports.next() else { throw ControlError.config("the origin did not start") }
        let address = host.contains(":") ? "[\(host)]" : host
        let scheme = tls == nil ? "http" : "https"
        try await ContentControl(wall: wall).distribute(
            needs, origins: ["\(scheme)://\(address):\(boundPort)"], report: progress)
        wall.say(
            "push: every node holds every file; the origin sent \(String(format: "%.1f", Double(origin.server.bytesSent) / 1e6)) MB "
                + "of \(delivered) MB delivered")
        return distributed
    }

    /// What a push of `media` sends: the files found here (for a template, every node's), each
    /// node's by content, where each is and its chunk list (one reading of each file); media not
    /// found here are left to the nodes' media roots.
    public static func needs(_ media: [String], nodes: [String]) throws
        -> (needs: [String: [ContentNeed]], paths: [ContentID: String], lists: [ChunkList])
    {
        let local = Array(
            Set(
                media.filter { file in
                    nodes.allSatisfy {
                        FileManager.default.fileExists(atPath: file.replacingOccurrences(of: "{id}", with: $0))
                    }
                })
        ).sorted()
        guard !local.isEmpty else { return ([:], [:], []) }
        var lists: [ChunkList] = []
        let (needs, paths) = try ContentControl.needs(files: local, nodes: nodes) { path in
            // What cannot play is refused here, by the operator's name for it, before any node
            // takes a copy.
            if let refusal = MediaSignature.refusal(ofFileAt: path, name: path) { throw ControlError.config(refusal) }
            do {
                let list = try ContentDigest.chunkList(ofFileAt: path)
                lists.append(list)
                return list.id
            } catch {
                throw ControlError.config("\(path): \(error)")
            }
        }
        return (needs, paths, lists)
    }

    /// The bytes the daemon's library has sent the nodes (its `GET /content`); nil when it does not
    /// say.
    private func librarySent(_ origin: String) async -> UInt64? {
        guard let client = wall.clients.first else { return nil }
        let library = NodeClient(
            id: "the control daemon", base: origin, wall: wall.config.name, http: client.http,
            authorization: client.authorization, timeout: client.timeout)
        return try? await library.library().bytesSent
    }

    /// Uploads the files of `paths` the daemon's library lacks; returns the bytes sent.
    private func upload(_ paths: [ContentID: String], to origin: String) async throws -> UInt64 {
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(10), read: .seconds(600)))
        configuration.tlsConfiguration = try wall.config.security.tls.map { tls throws(ControlError) in
            try ControlConnection.tls(tls)
        }
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        do {
            var sent: UInt64 = 0
            for (id, path) in paths.sorted(by: { $0.key < $1.key }) {
                var request = HTTPClientRequest(url: "\(origin)/content/\(id.sha256)?size=\(id.size)")
                request.method = .PUT
                if let authorization = wall.clients.first?.authorization {
                    request.headers.add(name: "Authorization", value: authorization)
                }
                guard let handle = FileHandle(forReadingAtPath: path) else {
                    throw ControlError.config("\(path): cannot be read")
                }
                // Read as the upload asks for it, a mebibyte at a time: the whole file never waits
                // in memory (it did: 597 MB resident for a 1 GB push).
                let chunks = AsyncThrowingStream<ByteBuffer, any Error>(unfolding: {
                    guard let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty else {
                        try? handle.close()
                        return nil
                    }
                    return ByteBuffer(bytes: chunk)
                })
                request.body = .stream(chunks, length: .known(Int64(id.size)))
                let response: HTTPClientResponse
                let reply: ByteBuffer
                do {
                    response = try await http.execute(request, timeout: .hours(24))
                    reply = try await response.body.collect(upTo: 1 << 16)
                } catch {
                    throw ControlError.config(
                        "the daemon at \(origin) did not take \(path): \(NodeClient.reason(error, timeout: MediaTime(value: 600, timescale: 1), server: "wallctl serve"))"
                    )
                }
                let text = String(buffer: reply).trimmingCharacters(in: .whitespacesAndNewlines)
                guard response.status == .ok else {
                    throw ControlError.config(
                        "the daemon at \(origin) refused \(path): HTTP \(response.status.code) \(text)")
                }
                if text != "held already" {
                    sent += id.size
                    wall.say("push: \(path) uploaded to the daemon's library")
                }
            }
            try await http.shutdown()
            return sent
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    /// The address the origin listens on and the nodes fetch from.
    private func originAddress() throws -> (String, Int) {
        if let origin {
            if let endpoint = try? Endpoint(parsing: origin) { return (endpoint.host, Int(endpoint.port)) }
            return (origin, 0)
        }
        guard let first = wall.config.nodes.first, let endpoint = try? Endpoint(parsing: first.control) else {
            throw ControlError.config("no node address to find this machine's address toward")
        }
        guard let host = Self.localAddress(toward: endpoint.host, port: endpoint.port) else {
            throw ControlError.config(
                "cannot tell this machine's address toward \(endpoint.host): give --origin HOST[:PORT]")
        }
        return (host, 0)
    }

    /// The local IPv4 address the kernel routes through toward `host` (a UDP socket connected there;
    /// nothing is sent).
    static func localAddress(toward host: String, port: UInt16) -> String? {
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &target.sin_addr) == 1 else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return nil }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &local.sin_addr, &text, socklen_t(text.count)) != nil else { return nil }
        return String(cString: text)
    }

    /// The TLS an origin serves with: the wall's `control-tls`, as the nodes' control API; nil without.
    static func originTLS(_ config: WallConfig) throws -> TLSConfiguration? {
        try config.security.tls.map { tls in
            do {
                return try ContentOrigin.serverTLS(certificate: tls.certificate, key: tls.key)
            } catch {
                throw ControlError.config("control-tls: \(error)")
            }
        }
    }
}
