import ArgumentParser
import Foundation
import WallControl
import WallProtocol

/// `wallctl push`: files from this machine onto every node, by what they hold.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send media files from this machine to every node's content store, verified, before a show.",
        discussion: """
            Computes each file's SHA-256 here, serves the files while the nodes fetch them, and shows each node's \
            progress (bytes, rate, time left) until every node holds every file, verified. Nodes fetch from the \
            peers that already hold a file before this machine, one transfer at a time from here, so the uplink \
            carries each file about once; a cut transfer resumes where it stopped, and a file is kept only once \
            its digest matches. A path with {id} sends each node its own tile (media/{id}.mp4). Then `wallctl \
            play --media FILE` or `wallctl load FILE` plays them from the nodes' stores (and pushes what a node \
            lacks by itself).
            """)

    @OptionGroup var options: WallOptions
    @OptionGroup var origin: OriginOptions

    @Argument(help: "Media files on this machine (or templates with {id}, one file per node).")
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file to push") }
        guard !origin.noPush else { throw ValidationError("--no-push: push has nothing else to do") }
    }

    func run() async throws {
        try await options.withWall { wall in
            let paths = files.map(absolute)
            for path in paths {
                for node in wall.clients.map(\.id)
                where !FileManager.default.fileExists(atPath: path.replacingOccurrences(of: "{id}", with: node)) {
                    throw ControlError.config(
                        "\(path.replacingOccurrences(of: "{id}", with: node)): no such file on this machine")
                }
            }
            let distributed = try await origin.push(wall).distribute(paths)
            for path in paths {
                let ids = Set(distributed[path]?.values.map(\.sha256) ?? [])
                Output.line("  \(path)  " + (ids.count == 1 ? "sha256 \(ids.first!)" : "\(ids.count) tiles"))
            }
        }
    }
}
