import Foundation
import TestSupport
import XCTest

/// A node runs for months: looping must not cost memory or descriptors per pass.
///
/// bench/memory measures this over an hour; this is its short form. A 1 s clip loops sixty times a
/// minute, so a leak per pass shows within a minute (the leak this guards against grew resident
/// memory by about 110 KB per pass: some 6 MB a minute on this clip).
final class NodeMemoryTests: XCTestCase {
    private let node = TestNode(port: 17871)
    /// Resident memory may settle a little after warm-up (allocator arenas, caches): 2.5 MB was seen
    /// once in CI. The leak this guards against grows it by some 6 MB over the measured minute.
    private static let allowedGrowthMB = 3.5
    private static let warmUp = 20.0
    private static let measured = 60.0

    func testLooping_keepsMemoryAndDescriptorsFlat() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-memory-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try TestWall(
            name: "memory", clockPort: 15961, media: try TestMedia.frameCode(seconds: 1, size: "320x180").path,
            canvas: (320, 180), stateDirectory: folder.appendingPathComponent("state").path, extra: ["loop: true"],
            nodes: [TestWall.Node(id: "only", controlPort: node.port, tile: (0, 0, 320, 180))]
        ).write(to: folder.appendingPathComponent("wall.yaml"))
        let wallnode = try ChildProcess(
            ChildProcess.product("wallnode"), ["run", "--config", config.path, "--id", "only", "--use-local-clock"])
        defer { wallnode.signal(SIGTERM) }
        try await node.waitUntilAnswering()
        let start = try ChildProcess.run(ChildProcess.product("wallctl"), ["start", "--config", config.path])
        XCTAssertEqual(start.status, 0, start.errors)

        let pid = wallnode.process.processIdentifier
        try await Task.sleep(for: .seconds(Self.warmUp))
        let before = try Self.sample(pid)
        let framesBefore = try framesPresented()
        var peak = before
        let end = Date().addingTimeInterval(Self.measured)
        while Date() < end {
            try await Task.sleep(for: .seconds(5))
            let now = try Self.sample(pid)
            peak = (max(peak.rssMB, now.rssMB), max(peak.fds, now.fds))
        }
        let after = try Self.sample(pid)
        let loops = Double(try framesPresented() - framesBefore) / 30
        XCTAssertGreaterThan(loops, Self.measured * 0.8, "the 1 s clip kept looping")
        XCTAssertLessThan(
            after.rssMB - before.rssMB, Self.allowedGrowthMB,
            "RSS \(before.rssMB) MB after warm-up, \(after.rssMB) MB \(Self.measured) s and \(Int(loops)) loops later")
        XCTAssertLessThanOrEqual(after.fds, before.fds + 2, "open descriptors \(before.fds) -> \(after.fds)")
        XCTAssertLessThanOrEqual(peak.fds, before.fds + 8, "open descriptors peaked at \(peak.fds)")
        XCTAssertTrue(wallnode.process.isRunning)
    }

    private func framesPresented() throws -> Int {
        let player = try node.status()["player"] as? [String: Any]
        return player?["framesPresented"] as? Int ?? 0
    }

    /// Resident memory (VmRSS, MB) and open descriptors of a process, from /proc.
    private static func sample(_ pid: Int32) throws -> (rssMB: Double, fds: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1])
        else { throw TestSupportError("no VmRSS in /proc/\(pid)/status") }
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        return (kilobytes / 1024, fds)
    }
}
