import HTTPTypes
import Hummingbird
import WallProtocol

/// Which wall a request is for: a request naming another wall is refused with 409, naming both,
/// on every endpoint; a request that changes something must name its wall. So `wallctl` given
/// another wall's config, or a peer of another wall, can never stop, pause or replace this one.
/// Every answer names the node's wall too, so a client tells "another wall" from any other refusal.
struct WallIdentity<Context: RequestContext>: RouterMiddleware {
    let wall: String
    let node: String

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await check(request, context: context, next: next)
        response.headers[HTTPField.Name(WallHeader.wall)!] = wall
        return response
    }

    private func check(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let named = request.headers[HTTPField.Name(WallHeader.wall)!]
        if let named, named != wall {
            return ControlServer.json(
                ControlReply(
                    ok: false,
                    error: "this is node \(node) of wall \"\(wall)\"; the request is for wall \"\(named)\": refused",
                    status: nil),
                status: .conflict)
        }
        if named == nil, request.method != .get, request.method != .head {
            return ControlServer.json(
                ControlReply(
                    ok: false,
                    error:
                        "a request that changes a node names its wall (header \(WallHeader.wall): \(wall)); "
                        + "wallctl does",
                    status: nil),
                status: .badRequest)
        }
        return try await next(request, context)
    }
}
