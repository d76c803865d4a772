import ArgumentParser
import Foundation
import WallControl

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

    /// The push these options ask for, its progress drawn on the terminal.
    func push(_ wall: Wall) -> ContentPush {
        let display = ProgressDisplay()
        return ContentPush(wall: wall, origin: origin, noPush: noPush) { display.show($0) }
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
}
