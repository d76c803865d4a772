import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import LockstepCLI
import LockstepGuard
import LockstepTime
import Logging
import NIOCore
import WallContent
import WallPlayer
import WallProtocol
import WallTimeline

/// The node's control API over HTTP/JSON (paths in `ControlPath`).
///
/// Commands reply with `ControlReply`: the node's status after the command, or a sentence saying
/// what went wrong, with a 4xx/5xx status. A body that is not the JSON expected gets 400 naming
/// what was wrong with it; a value out of bounds gets 422 naming the field (`RequestChecks`).
/// `ControlAccess` decides who may ask, `ConnectionGuard` how much of the node a client may hold.
public enum ControlServer {
    /// The node's control API as a Hummingbird application on its address.
    ///
    /// - Parameter fileLimit: the node's open-file limit: past `FileLimit.connections(within:)`
    ///   open connections a new one gets a 503, and past its `accepted` the node stops accepting
    ///   (the rest wait in the kernel's backlog) instead of spinning on EMFILE.
    public static func application(
        node: Node, metrics: NodeMetrics, fileLimit: UInt64, logger: Logger,
        onServerRunning: @escaping @Sendable () async -> Void = {}
    ) throws(NodeError) -> some ApplicationProtocol {
        let settings = node.settings
        let address = settings.control
        let connections = ConnectionGuard(surface: "control", policy: .http(fileLimit: fileLimit), logger: logger)
        let server: HTTPServerBuilder
        do {
            server = try connections.httpServer(tls: try settings.controlTLS.map(serverTLS))
        } catch {
            throw .config("control-tls: \(error)")
        }
        return Application(
            router: router(node: node, metrics: metrics), server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: Int(address.port)), serverName: "wallnode",
                availableConnectionsDelegate: MaximumAvailableConnections(
                    FileLimit.connections(within: fileLimit).accepted, logger: logger)),
            onServerRunning: { _ in await onServerRunning() },
            logger: logger)
    }

    /// The routes, with who may ask (`ControlAccess`) and for which wall (`WallIdentity`): what
    /// `application` serves, and what tests drive in-process.
    public static func router(node: Node, metrics: NodeMetrics) -> Router<BasicRequestContext> {
        let settings = node.settings
        let router = Router()
        router.add(middleware: ControlAccess(token: settings.controlToken, metricsOpen: settings.metricsOpen))
        router.add(middleware: WallIdentity(wall: settings.wallName, node: settings.id))
        router.get(RouterPath(ControlPath.status)) { _, _ in
            json(await node.status())
        }
        router.get(RouterPath(ControlPath.timeline)) { _, _ in
            await answer { () throws(NodeError) in try await node.timeline() }
        }
        router.put(RouterPath(ControlPath.timeline)) { request, context in
            let timeline = try await decode(Timeline.self, request, context)
            return await command(node) { () throws(NodeError) in try await node.adopt(timeline) }
        }
        router.post(RouterPath(ControlPath.mediaDurations)) { request, context in
            let body = try await decode(MediaDurationsRequest.self, request, context)
            return await answer { () throws(NodeError) in
                MediaDurationsReply(
                    node: settings.id, durations: try await node.mediaDurations(body.media, content: body.content))
            }
        }
        for (path, replacement) in ControlPath.retired {
            router.on(RouterPath(path), method: .post) { _, _ in
                json(
                    ControlReply(
                        ok: false,
                        error:
                            "POST \(path) is no longer a node command: every command is an edit of the wall's "
                            + "timeline, sent with PUT \(ControlPath.timeline) (\(replacement))",
                        status: nil),
                    status: .gone)
            }
        }
        router.get(RouterPath(ControlPath.frames)) { request, _ in
            let after = try wholeParameter("after", in: request) ?? 0
            let limit = try wholeParameter("limit", in: request) ?? RequestChecks.maximumFramesLimit
            do throws(RequestRejection) {
                try RequestChecks.framesLimit(limit)
            } catch {
                return json(
                    ControlReply(ok: false, error: error.description, status: nil), status: .unprocessableContent)
            }
            let (records, missed) = node.frames.records(after: after, limit: Int(limit))
            let clock = node.clock.report()
            return json(
                FramesReply(
                    node: settings.id, records: records, missed: missed, clockErrorBound: clock.errorBound,
                    clockLineage: clock.lineage, guaranteedClockErrorBound: clock.guaranteedErrorBound,
                    peerClocks: clock.peers))
        }
        router.get(RouterPath(ControlPath.plays)) { request, _ in
            let from = try wholeParameter("fromUnixMs", in: request, as: Int64.self) ?? .min
            let to = try wholeParameter("toUnixMs", in: request, as: Int64.self) ?? .max
            let limit = try wholeParameter("limit", in: request) ?? UInt64(PlaysReply.mostPlays)
            do throws(RequestRejection) {
                try RequestChecks.limit(limit, atMost: UInt64(PlaysReply.mostPlays))
                try RequestChecks.span(fromUnixMs: from, toUnixMs: to)
            } catch {
                return json(
                    ControlReply(ok: false, error: error.description, status: nil), status: .unprocessableContent)
            }
            return json(node.plays.plays(fromUnixMs: from, toUnixMs: to, limit: Int(limit)))
        }
        router.get(RouterPath(ControlPath.snapshot)) { request, _ in
            try await snapshot(request, node: node)
        }
        router.get(RouterPath(ControlPath.check)) { _, _ in
            let sinks = [("video", settings.video.sinkDescription)] + (settings.audioSink.map { [("audio", $0)] } ?? [])
            return json(
                NodeCheck(
                    node: settings.id, version: LockstepVersion.current, configSHA256: settings.wall.digest,
                    sinks: sinks.map {
                        SinkCheck(role: $0.0, description: $0.1, problem: sinkProblem($0.1, role: $0.0))
                    },
                    still: settings.still?.path, stillProblem: node.screen.stillProblem,
                    frameCost: await node.frameCost()))
        }
        router.get(RouterPath(ControlPath.content)) { _, _ in
            json(node.content.report())
        }
        router.get(RouterPath(ControlPath.content + "/:sha256")) { request, context in
            node.content.server.response(
                sha256: context.parameters.get("sha256") ?? "", range: request.headers[.range])
        }
        router.get(RouterPath(ControlPath.content + "/:sha256/chunks")) { request, context in
            node.content.server.chunks(
                sha256: context.parameters.get("sha256") ?? "",
                holdingsOnly: request.uri.queryParameters.get("have") != nil)
        }
        router.post(RouterPath(ControlPath.contentFetch)) { request, context in
            let body = try await decode(ContentFetchRequest.self, request, context)
            return await answer { () throws(NodeError) in
                try node.content.want(body)
                return node.content.report()
            }
        }
        router.get(RouterPath(ControlPath.metrics)) { _, _ in
            let text = metrics.render(status: await node.status())
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
        return router
    }

    /// The frame on the screen now, or at a master time, as raw RGB.
    private static func snapshot(_ request: Request, node: Node) async throws -> Response {
        let settings = node.settings
        let width = try wholeParameter("width", in: request)
        let height = try wholeParameter("height", in: request)
        let size: PixelSize?
        do throws(RequestRejection) {
            size = try RequestChecks.snapshotSize(
                width: width, height: height,
                output: settings.video.outputSize.map { CanvasSize(width: $0.width, height: $0.height) }
            ).map { PixelSize(width: $0.width, height: $0.height) }
        } catch {
            return json(ControlReply(ok: false, error: error.description, status: nil), status: .unprocessableContent)
        }
        // At a master time: every node asked for the same one copies the frame on its screen then.
        if let at = try wholeParameter("atNs", in: request, as: Int64.self).map({ MediaTime(nanoseconds: $0) }) {
            guard let clock = node.clock.masterClock else {
                return json(ControlReply(ok: false, error: "atNs: no master clock yet", status: nil), status: .conflict)
            }
            let now = clock.now()
            do throws(RequestRejection) {
                try RequestChecks.hostTime(
                    at, field: "atNs", now: now, minimumLead: .zero, horizon: Self.snapshotHorizon)
            } catch {
                return json(
                    ControlReply(ok: false, error: error.description, status: nil), status: .unprocessableContent)
            }
            try await Task.sleep(for: .nanoseconds((at - now).nanoseconds ?? 0))
        }
        guard let frame = try node.screen.copyCurrentVideoFrame(format: .rgb, size: size) else {
            return json(
                ControlReply(ok: false, error: "no frame yet: the screen has shown nothing", status: nil),
                status: .conflict)
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.init(SnapshotHeader.width)!] = "\(frame.size.width)"
        headers[.init(SnapshotHeader.height)!] = "\(frame.size.height)"
        if let pts = frame.presentationTimestamp.nanoseconds {
            headers[.init(SnapshotHeader.presentationTimestamp)!] = "\(pts)"
        }
        if let copied = node.clock.masterClock?.now().nanoseconds {
            headers[.init(SnapshotHeader.copiedAt)!] = "\(copied)"
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: frame.data)))
    }

    /// The TLS configuration serving `tls`'s certificate chain and key.
    private static func serverTLS(_ tls: ControlTLS) throws -> TLSConfiguration {
        try ContentOrigin.serverTLS(certificate: tls.certificate, key: tls.key)
    }

    /// Runs a command and replies with the status after it, or the error.
    private static func command(
        _ node: Node, _ work: @Sendable () async throws(NodeError) -> Void
    ) async -> Response {
        do {
            try await work()
            return json(ControlReply(ok: true, status: await node.status()))
        } catch {
            return json(
                ControlReply(ok: false, error: error.description, status: await node.status()),
                status: HTTPResponse.Status(code: error.httpStatus))
        }
    }

    /// Replies with what `work` returns, or the error with its status.
    private static func answer<T: Encodable & Sendable>(_ work: @Sendable () async throws(NodeError) -> T) async
        -> Response
    {
        let result = await Result.of(work)
        switch result {
        case .success(let value):
            return json(value)
        case .failure(let error):
            return json(
                ControlReply(ok: false, error: error.description, status: nil),
                status: HTTPResponse.Status(code: error.httpStatus))
        }
    }

    /// The JSON body of a request, or a 400 naming what is wrong with it.
    private static func decode<T: Decodable>(
        _ type: T.Type, _ request: Request, _ context: some RequestContext, emptyAs empty: T? = nil
    ) async throws -> T {
        let body = try await request.body.collect(upTo: 64 * 1024)
        if body.readableBytes == 0, let empty { return empty }
        do throws(JSONBodyError) {
            return try JSONBody.decode(T.self, from: Data(buffer: body))
        } catch {
            throw HTTPError(.badRequest, message: "malformed \(T.self): \(error)")
        }
    }

    /// How far ahead a snapshot may be asked for.
    static let snapshotHorizon = MediaTime(value: 10, timescale: 1)

    /// A whole-number query parameter (`UInt64` for counts and sizes, `Int64` for times), nil when
    /// absent, a 400 naming it when it is not one.
    private static func wholeParameter<Value: FixedWidthInteger>(
        _ name: String, in request: Request, as type: Value.Type = UInt64.self
    ) throws -> Value? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let value = Value(text) else {
            throw HTTPError(.badRequest, message: "query parameter \(name) must be a whole number, got \"\(text)\"")
        }
        return value
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
