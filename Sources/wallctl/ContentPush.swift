import ArgumentParser
import Foundation
import LockstepNet
import WallContent
import WallControl
import WallProtocol
import WallTimeline

#if canImport(Glibc)
    import Glibc
#endif

/// Where `wallctl` serves the files it pushes while the nodes fetch them.
struct OriginOptions: ParsableArguments {
    @Option(
        name: .customLong("origin"),
        help: ArgumentHelp(
            "HOST[:PORT] the nodes fetch pushed files from: an address of this machine they reach (default: the one "
                + "this machine uses toward the first node, any free port)."))
    var origin: String?

    @Flag(
        name: .customLong("no-push"),
        help: "Name files by path only, as the nodes' media roots hold them: send nothing, even files found here.")
    var noPush = false
}

/// Pushes files from this machine to every node that lacks them: content IDs computed here, an
/// origin serving them while the nodes fetch (from each other first), progress on the terminal.
struct ContentPush {
    let wall: Wall
    let options: OriginOptions

    /// The files of `media` that exist here (for a template, every node's), with each node's ID of
    /// each, by media name; once every node holds them. Media not found here are left to the
    /// nodes' media roots.
    func distribute(_ media: [String]) async throws -> [String: [String: ContentID]] {
        guard !options.noPush else { return [:] }
        let nodes = wall.clients.map(\.id)
        let local = Array(Set(media.filter { file in nodes.allSatisfy { FileManager.default.fileExists(atPath: file.replacingOccurrences(of: "{id}", with: $0)) } })).sorted()
        guard !local.isEmpty else { return [:] }
        let (needs, paths) = try ContentControl.needs(files: local, nodes: nodes) { path in
            do {
                return try ContentDigest.id(ofFileAt: path)
            } catch {
                throw ControlError.config("\(path): \(error)")
            }
        }
        var distributed: [String: [String: ContentID]] = [:]
        for (node, list) in needs {
            for need in list { distributed[need.name, default: [:]][node] = need.id }
        }
        let total = paths.keys.reduce(UInt64(0)) { $0 + $1.size }
        wall.say("push: \(paths.count) file\(paths.count == 1 ? "" : "s"), \(String(format: "%.1f", Double(total) / 1e6)) MB")
        let origin = ContentOrigin(files: paths, authorization: wall.clients.first?.authorization)
        let (host, port) = try originAddress()
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Int.self)
        let serving = Task { try await origin.run(host: host, port: port) { boundContinuation.yield($0) } }
        defer { serving.cancel() }
        var ports = bound.makeAsyncIterator()
        guard let boundPort = await ports.next() else { throw ControlError.config("the origin did not start") }
        let address = host.contains(":") ? "[\(host)]" : host
        let display = ProgressDisplay()
        try await ContentControl(wall: wall).distribute(needs, origins: ["http://\(address):\(boundPort)"]) {
            display.show($0)
        }
        display.finish()
        wall.say(
            "push: every node holds every file; the origin sent \(String(format: "%.1f", Double(origin.server.bytesSent) / 1e6)) MB "
                + "of \(String(format: "%.1f", Double(total * UInt64(nodes.count)) / 1e6)) MB delivered")
        return distributed
    }

    /// The address the origin listens on and the nodes fetch from.
    private func originAddress() throws -> (String, Int) {
        if let origin = options.origin {
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
}

/// Transfer progress: one line per node redrawn in place on a terminal, a line every few seconds
/// otherwise.
final class ProgressDisplay: @unchecked Sendable {
    private let terminal = isatty(1) == 1
    private var drawn = 0
    private var lastPrinted = Date.distantPast

    func show(_ progress: [ContentControl.Progress]) {
        if terminal {
            var text = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
            for node in progress {
                let fraction = node.total > 0 ? Double(node.have) / Double(node.total) : 1
                let filled = Int(fraction * 20)
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 20 - filled)
                text += "\u{1B}[2K[\(bar)] \(node.line)\n"
            }
            drawn = progress.count
            Output.line(String(text.dropLast()))
        } else if Date().timeIntervalSince(lastPrinted) >= 2 || progress.allSatisfy(\.done) {
            lastPrinted = Date()
            for node in progress { Output.line("  " + node.line) }
        }
    }

    func finish() {}
}
