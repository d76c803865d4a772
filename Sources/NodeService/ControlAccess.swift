import Foundation
import Hummingbird
import LockstepGuard
import WallProtocol

/// Who may use the control API: requests from web pages are refused outright (a page an operator
/// visits must not be able to stop the wall), and with a token configured every request must carry
/// it, except `GET /metrics` where the config leaves metrics open.
struct ControlAccess<Context: RequestContext>: RouterMiddleware {
    let token: ControlToken?
    let metricsOpen: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if request.headers[.origin] != nil {
            return ControlServer.json(
                ControlReply(
                    ok: false,
                    error:
                        "requests from web pages (with an Origin header) are refused: the control API is for wallctl",
                    status: nil),
                status: .forbidden)
        }
        if let token, !(metricsOpen && request.uri.path == ControlPath.metrics),
            !token.accepts(authorization: request.headers[.authorization])
        {
            let reason =
                request.headers[.authorization] == nil
                ? "this node needs the wall's control token (Authorization: Bearer ...)"
                : "the control token is not this wall's"
            var response = ControlServer.json(
                ControlReply(ok: false, error: reason, status: nil), status: .unauthorized)
            response.headers[.wwwAuthenticate] = "Bearer realm=\"lockstep\""
            return response
        }
        return try await next(request, context)
    }
}
