import Foundation
import LockstepTime
import WallCalibration
import WallProtocol

/// What `wallctl calibrate --video` says: each node's light against the wall's, and the
/// display-latency that cancels it (`GlassCorrection`).
struct GlassReport {
    var lines: [String] = []
    /// Node id → its new display-latency, in seconds.
    var latencies: [String: Double] = [:]

    init(result: GlassTiming.Result, config: WallConfig, rate: Int) throws {
        let correction = try GlassCorrection(
            result, nodes: config.nodes.map { (id: $0.id, latency: $0.displayLatency.seconds) })
        latencies = correction.latencies
        lines.append(
            String(
                format: "calibrate: %d of %d screens read; the camera read its picture top to bottom in %.2f ms",
                result.screens.count, config.nodes.count, result.readout * 1e3))
        lines.append("  node                 on the glass    uncertainty   display-latency now -> new")
        for screen in correction.screens {
            lines.append(
                String(
                    format: "  %@ %+9.3f ms  ±%7.3f ms   %8.3f ms -> %.3f ms",
                    screen.node.padding(toLength: 20, withPad: " ", startingAt: 0), screen.offset * 1e3,
                    screen.uncertainty * 1e3, screen.latency * 1e3, screen.corrected * 1e3))
        }
        if !correction.unseen.isEmpty {
            lines.append("  not in the film (no change made): \(correction.unseen.joined(separator: ", "))")
        }
        lines.append(
            "  On the glass: when the screen's light changes, less the mean of the screens read (+ is later). "
                + "A later screen gets more display-latency, so that it is given its frames that much sooner.")
        switch result.assumption {
        case .none:
            lines.append(
                String(
                    format:
                        "  Nothing assumed: the films taken both ways up tell the camera's readout from the screens' "
                        + "own scan-out (%.2f ms between the pattern's upper and lower bands).",
                    (result.scanOut ?? 0) * 1e3))
        case .screensShowRowsAtOnce:
            lines.append(
                "  Assumed: each screen shows all its rows at once. Where screens sit at different heights in the film and "
                    + "scan out top to bottom (most LCDs), film again upside down and give both films.")
        case .readoutUnknown:
            lines.append(
                "  The screens scan out top to bottom: one film cannot tell that from the camera's readout, and the "
                    + "uncertainty includes it. Film again with the phone upside down and give both films.")
        }
        lines.append(
            String(
                format: "  What stays: a screen whose output is not genlocked shows each frame at its next refresh, so "
                    + "screens stay apart by a part of a refresh (up to %.1f ms at %d Hz) that drifts as their refresh "
                    + "clocks do; this film measured it as it was.", 1000 / Double(rate), rate))
    }

    /// A duration as the config writes it: milliseconds with three decimals.
    static func duration(_ seconds: Double) -> String {
        String(format: "%.3fms", max(0, seconds) * 1e3)
    }
}
