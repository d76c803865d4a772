import Foundation

/// Starts Xvfb on `display` (":72") with one `width`×`height` screen and returns once it takes
/// clients; stale lock files of an earlier run are removed first.
///
/// Its socket appears before it takes clients, so it is up once a client (xrandr) gets an answer.
/// `-noreset`: an X server resets when its last client leaves and refuses connections meanwhile,
/// so without it the client that found it up would make the next one fail ("cannot open X
/// display"), and RandR monitors set by a client would not outlive it.
public func startXvfb(display: String, width: Int, height: Int) async throws -> ChildProcess {
    let xvfb = try installedTool("Xvfb")
    let xrandr = try installedTool("xrandr")
    let number = display.dropFirst()
    try? FileManager.default.removeItem(atPath: "/tmp/.X\(number)-lock")
    try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
    let server = try ChildProcess(
        xvfb, [display, "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"])
    do {
        try await withTimeout(10, "Xvfb on \(display) answering") {
            while try ChildProcess.run(xrandr, ["-display", display, "--listmonitors"]).status != 0 {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    } catch {
        server.signal(SIGTERM)
        _ = server.finish()
        throw error
    }
    return server
}
