import Foundation

/// The Wayland compositor a waylandsink node draws on, watched through its socket: a compositor
/// that restarts makes its socket anew, and the node's pipelines, connected to the old one, show
/// nothing and say nothing (waylandsink posts no error for a display gone away). A socket that
/// vanished and is back, or that changed identity (device, inode and change time: an inode number
/// is soon reused), is a restart.
struct CompositorWatch: Sendable {
    /// `$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY` (an absolute `WAYLAND_DISPLAY` as it is).
    let socket: String

    init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let name = environment["WAYLAND_DISPLAY"] ?? "wayland-0"
        if name.hasPrefix("/") {
            socket = name
        } else {
            guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
            socket = runtime + "/" + name
        }
    }

    /// The socket's identity now; nil while there is none.
    func identity() -> String? {
        var info = stat()
        guard stat(socket, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino):\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
    }

    /// Calls `restarted` each time the compositor's socket is made anew, until cancelled.
    func watch(every interval: Duration = .milliseconds(500), restarted: @Sendable () async -> Void) async {
        var known = identity()
        var vanished = false
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard let now = identity() else {
                vanished = vanished || known != nil
                continue
            }
            if vanished || (known.map { $0 != now } ?? false) { await restarted() }
            vanished = false
            known = now
        }
    }
}
