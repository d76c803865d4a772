import Foundation
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A node's control API as a test talks to it: plain requests, replies as status code and text.
struct NodeHTTP: Sendable {
    let port: Int

    /// Waits until the node answers `GET /status`.
    func waitUntilAnswering(within seconds: Double = 20) async throws {
        try await withTimeout(seconds, "the node's control API on port \(port)") {
            while true {
                if let reply = try? await get("/status"), reply.code == 200 { return }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func get(_ path: String) async throws -> (code: Int, text: String) {
        try await send(URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!))
    }

    func post(_ path: String, _ body: String) async throws -> (code: Int, text: String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        return try await send(request)
    }

    /// `GET /status` as JSON.
    func status() async throws -> [String: Any] {
        let reply = try await get("/status")
        guard let object = try JSONSerialization.jsonObject(with: Data(reply.text.utf8)) as? [String: Any] else {
            throw TestSupportError("/status is not a JSON object: \(reply.text)")
        }
        return object
    }

    /// The `error` sentence of a command's JSON reply.
    static func errorSentence(_ reply: (code: Int, text: String)) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(reply.text.utf8)) as? [String: Any]
        return object?["error"] as? String ?? reply.text
    }

    private func send(_ request: URLRequest) async throws -> (code: Int, text: String) {
        var request = request
        request.timeoutInterval = 60
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}

extension ChildProcess {
    /// Seconds until the child exits, polled, or nil if it still runs after `limit`.
    func secondsUntilExit(limit: Double) async -> Double? {
        let started = Date()
        while process.isRunning {
            if Date().timeIntervalSince(started) > limit { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return Date().timeIntervalSince(started)
    }
}
