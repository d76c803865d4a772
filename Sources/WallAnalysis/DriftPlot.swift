import Foundation
import LockstepTime

/// A drift report's skew over time as a standalone SVG document: x is running time in seconds,
/// y is signed skew to the wall's median in milliseconds.
///
/// Per node, a line of the mean skew per bucket over a faint band from its smallest to its largest
/// skew in the bucket, so a single bad frame stays visible after averaging. Nodes in sync overlap,
/// so each has its own colour (colour-blind-safe Okabe–Ito) and the lines narrow from the first
/// node to the last, leaving every one visible on top of the others. The ±threshold band shows
/// what passes. Hand-written SVG, so `wallctl` needs no plotting dependency.
public struct DriftPlot: Sendable {
    public let report: DriftReport
    public let width: Int
    public let height: Int

    /// Colours of the nodes, in order; a wall with more nodes reuses them with dashed lines.
    static let palette = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

    public init(report: DriftReport, width: Int = 960, height: Int = 480) {
        self.report = report
        self.width = max(width, 480)
        self.height = max(height, 240)
    }

    /// The SVG document, UTF-8 text starting with the XML declaration.
    public func svg() -> String {
        // The verdict's sentence, wrapped to the picture's width (about 6.5 px a character at 12 px).
        let verdictLines = Self.wrap(report.verdict.sentence, columns: max(40, Int(Double(width - 72 - 16) / 6.5)))
        let frame = PlotFrame(
            left: 72, top: 56 + 16 * Double(verdictLines.count - 1), right: Double(width) - 200,
            bottom: Double(height) - 52, xRange: timeRange(), yLimit: skewLimit())
        var parts: [String] = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(height)" "#
                + #"viewBox="0 0 \#(width) \#(height)" font-family="sans-serif" font-size="12">"#,
            #"<rect x="0" y="0" width="\#(width)" height="\#(height)" fill="\#(Ink.background)"/>"#,
            #"<text x="\#(frame.left)" y="22" font-size="16" font-weight="bold">"#
                + #"\#(Self.escape(title))</text>"#,
        ]
        for (index, line) in verdictLines.enumerated() {
            parts.append(
                #"<text x="\#(frame.left)" y="\#(40 + 16 * index)" fill="\#(Ink.verdict(report.verdict.outcome))">"#
                    + #"\#(Self.escape(line))</text>"#)
        }
        parts += axes(frame)
        parts += thresholdBand(frame)
        parts.append(#"<g clip-path="url(#plot-area)">"#)
        for (index, series) in report.series.nodes.enumerated() {
            parts += nodeSeries(series, index: index, frame: frame)
        }
        parts.append("</g>")
        parts += legend(frame)
        if report.series.nodes.allSatisfy({ $0.points.isEmpty }) {
            parts.append(
                #"<text x="\#(Self.number((frame.left + frame.right) / 2))" y="\#(Self.number((frame.top + frame.bottom) / 2))" "#
                    + #"text-anchor="middle" fill="\#(Ink.muted)">no frame was aligned on every node</text>"#)
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    private var title: String {
        "Lockstep drift: skew to the wall's median, \(report.framesAligned) frames over "
            + "\(report.duration.secondsText) s"
    }

    // MARK: Scales

    /// The plotted running times in seconds, from the first bucket to the end of the last.
    private func timeRange() -> ClosedRange<Double> {
        let times = report.series.nodes.flatMap { $0.points.map(\.time.seconds) }
        guard let first = times.min(), let last = times.max() else { return 0...1 }
        return first...max(last + report.series.bucketDuration.seconds, first + 1e-3)
    }

    /// The y axis runs from minus to plus this, in milliseconds: room for every band and for the
    /// threshold with a margin, rounded up to a tick.
    private func skewLimit() -> Double {
        let largest = report.series.nodes.flatMap { $0.points.map { $0.maximumMagnitude.seconds * 1_000 } }.max() ?? 0
        let wanted = max(largest, report.verdict.threshold.seconds * 1_000 * 1.5, 0.01)
        let step = Self.tickStep(for: 2 * wanted, count: 8)
        return (wanted / step).rounded(.up) * step
    }

    /// A tick step of 1, 2 or 5 × 10^k that cuts `span` into about `count` parts.
    static func tickStep(for span: Double, count: Int) -> Double {
        let raw = span / Double(count)
        let magnitude = pow(10, floor(log10(raw)))
        let fraction = raw / magnitude
        let nice: Double = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10
        return nice * magnitude
    }

    // MARK: Parts

    private func thresholdBand(_ frame: PlotFrame) -> [String] {
        let limit = report.verdict.threshold.seconds * 1_000
        guard limit < frame.yLimit else { return [] }
        let (upper, lower) = (frame.y(limit), frame.y(-limit))
        let label = "±\(report.verdict.threshold.millisecondsText) ms"
        return [
            #"<rect x="\#(Self.number(frame.left))" y="\#(Self.number(upper))" "#
                + #"width="\#(Self.number(frame.right - frame.left))" height="\#(Self.number(lower - upper))" "#
                + #"fill="\#(Ink.threshold)" fill-opacity="0.08"/>"#,
            horizontalLine(at: upper, frame: frame, attributes: #"stroke="\#(Ink.threshold)" stroke-dasharray="6 4""#),
            horizontalLine(at: lower, frame: frame, attributes: #"stroke="\#(Ink.threshold)" stroke-dasharray="6 4""#),
            #"<text x="\#(Self.number(frame.right - 4))" y="\#(Self.number(upper - 4))" text-anchor="end" "#
                + #"fill="\#(Ink.threshold)">threshold \#(Self.escape(label))</text>"#,
        ]
    }

    private func axes(_ frame: PlotFrame) -> [String] {
        var parts = [
            #"<defs><clipPath id="plot-area"><rect x="\#(Self.number(frame.left))" y="\#(Self.number(frame.top))" "#
                + #"width="\#(Self.number(frame.right - frame.left))" height="\#(Self.number(frame.bottom - frame.top))"/>"#
                + "</clipPath></defs>",
            #"<rect x="\#(Self.number(frame.left))" y="\#(Self.number(frame.top))" "#
                + #"width="\#(Self.number(frame.right - frame.left))" height="\#(Self.number(frame.bottom - frame.top))" "#
                + #"fill="none" stroke="\#(Ink.axis)"/>"#,
        ]
        let yStep = Self.tickStep(for: 2 * frame.yLimit, count: 8)
        var tick = -frame.yLimit
        while tick <= frame.yLimit + yStep / 2 {
            let y = frame.y(tick)
            let zero = abs(tick) < yStep / 2
            parts.append(
                horizontalLine(
                    at: y, frame: frame,
                    attributes: zero
                        ? #"stroke="\#(Ink.axis)" stroke-width="1""# : #"stroke="\#(Ink.grid)" stroke-width="1""#))
            parts.append(
                #"<text x="\#(Self.number(frame.left - 6))" y="\#(Self.number(y + 4))" text-anchor="end">"#
                    + #"\#(Self.label(zero ? 0 : tick, step: yStep))</text>"#)
            tick += yStep
        }
        let xStep = Self.tickStep(for: frame.xRange.upperBound - frame.xRange.lowerBound, count: 8)
        var time = (frame.xRange.lowerBound / xStep).rounded(.up) * xStep
        while time <= frame.xRange.upperBound + xStep * 1e-9 {
            let x = frame.x(time)
            parts.append(
                #"<line x1="\#(Self.number(x))" y1="\#(Self.number(frame.bottom))" x2="\#(Self.number(x))" "#
                    + #"y2="\#(Self.number(frame.bottom + 5))" stroke="\#(Ink.axis)"/>"#)
            parts.append(
                #"<text x="\#(Self.number(x))" y="\#(Self.number(frame.bottom + 18))" text-anchor="middle">"#
                    + #"\#(Self.label(time, step: xStep))</text>"#)
            time += xStep
        }
        parts.append(
            #"<text x="\#(Self.number((frame.left + frame.right) / 2))" y="\#(Self.number(frame.bottom + 38))" "#
                + #"text-anchor="middle">running time (s)</text>"#)
        let middle = Self.number((frame.top + frame.bottom) / 2)
        parts.append(
            #"<text x="18" y="\#(middle)" text-anchor="middle" transform="rotate(-90 18 \#(middle))">"#
                + "skew (ms, + is later than the wall)</text>")
        return parts
    }

    private func nodeSeries(_ series: NodeSkewSeries, index: Int, frame: PlotFrame) -> [String] {
        let colour = Self.palette[index % Self.palette.count]
        let count = report.series.nodes.count
        let strokeWidth = 1.2 + 2.4 * Double(count - 1 - index) / Double(max(count - 1, 1))
        let dash = index >= Self.palette.count ? #" stroke-dasharray="7 3""# : ""
        let half = report.series.bucketDuration.seconds / 2
        let centres = series.points.map { frame.x($0.time.seconds + half) }
        let upper = zip(centres, series.points).map { "\(Self.number($0)),\(Self.number(frame.y(ms($1.maximumSkew))))" }
        let lower = zip(centres, series.points).map { "\(Self.number($0)),\(Self.number(frame.y(ms($1.minimumSkew))))" }
        let mean = zip(centres, series.points).map { "\(Self.number($0)),\(Self.number(frame.y(ms($1.meanSkew))))" }
        var parts = [
            #"<g class="node" data-node="\#(Self.escape(series.node))">"#,
            #"<polygon points="\#((upper + lower.reversed()).joined(separator: " "))" fill="\#(colour)" "#
                + #"fill-opacity="0.15" stroke="none"/>"#,
            #"<polyline points="\#(mean.joined(separator: " "))" fill="none" stroke="\#(colour)" "#
                + #"stroke-width="\#(Self.number(strokeWidth))" stroke-linejoin="round"\#(dash)/>"#,
        ]
        if series.points.count == 1, let point = mean.first?.split(separator: ",") {
            parts.append(#"<circle cx="\#(point[0])" cy="\#(point[1])" r="3" fill="\#(colour)"/>"#)
        }
        parts.append("</g>")
        return parts
    }

    private func legend(_ frame: PlotFrame) -> [String] {
        let x = frame.right + 16
        var parts = [
            #"<text x="\#(Self.number(x))" y="\#(Self.number(frame.top + 4))" font-weight="bold">node (p99 |skew|)</text>"#
        ]
        for (index, node) in report.series.nodes.enumerated() {
            let y = frame.top + 24 + Double(index) * 20
            let colour = Self.palette[index % Self.palette.count]
            let p99 = report.nodes.first { $0.node == node.node }.map { " \($0.skew.p99.millisecondsText) ms" } ?? ""
            parts.append(
                #"<rect x="\#(Self.number(x))" y="\#(Self.number(y - 9))" width="14" height="10" fill="\#(colour)"/>"#)
            parts.append(
                #"<text x="\#(Self.number(x + 20))" y="\#(Self.number(y))">\#(Self.escape(node.node + p99))</text>"#)
        }
        return parts
    }

    private func horizontalLine(at y: Double, frame: PlotFrame, attributes: String) -> String {
        #"<line x1="\#(Self.number(frame.left))" y1="\#(Self.number(y))" x2="\#(Self.number(frame.right))" "#
            + #"y2="\#(Self.number(y))" \#(attributes)/>"#
    }

    private func ms(_ time: MediaTime) -> Double { time.seconds * 1_000 }

    // MARK: Text

    /// A coordinate with two decimals: finer than any screen, short enough for long series.
    static func number(_ value: Double) -> String {
        String(format: "%.2f", value)
    }

    /// A tick label with as many decimals as the step needs.
    static func label(_ value: Double, step: Double) -> String {
        let decimals = max(0, Int(-floor(log10(step))))
        return String(format: "%.\(decimals)f", value)
    }

    /// Text made safe for XML character data and attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

/// The plot's colours besides the nodes'.
extension DriftPlot {
    /// `text` in lines of at most `columns` characters, broken between words.
    static func wrap(_ text: String, columns: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > columns {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}

private enum Ink {
    static let background = "#ffffff"
    static let axis = "#333333"
    static let grid = "#e0e0e0"
    static let muted = "#666666"
    static let threshold = "#2ca02c"
    static let pass = "#1a7f37"
    static let fail = "#b42318"
    static let uncertain = "#b54708"

    static func verdict(_ outcome: DriftVerdict.Outcome) -> String {
        switch outcome {
        case .pass: return pass
        case .fail: return fail
        case .uncertain: return uncertain
        }
    }
}

/// Where the plot area lies in the picture, and what it shows.
private struct PlotFrame {
    let left: Double
    let top: Double
    let right: Double
    let bottom: Double
    let xRange: ClosedRange<Double>
    let yLimit: Double

    func x(_ seconds: Double) -> Double {
        left + (seconds - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * (right - left)
    }

    func y(_ milliseconds: Double) -> Double {
        (top + bottom) / 2 - milliseconds / yLimit * (bottom - top) / 2
    }
}
