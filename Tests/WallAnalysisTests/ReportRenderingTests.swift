import Foundation
import FoundationXML
import LockstepTime
import XCTest

@testable import WallAnalysis

final class ReportRenderingTests: XCTestCase {
    // MARK: Table

    func testTable_showsNodesAndPairsInMillisecondsThenTheVerdict() throws {
        let report = try lateNodeReport()
        let lines = report.table().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let rows = Dictionary(lines.map { line in (line.split(separator: " ").first.map(String.init) ?? "", line) }) {
            first, _ in first
        }
        XCTAssertEqual(
            lines[0], "drift: 300 frames aligned over 4.983 s of running time; skew is to the wall's median, in ms")
        XCTAssertEqual(tokens(rows["c"]), ["c", "0.700", "0.700", "0.700", "0.700", "0.700", "+0.700"])
        XCTAssertEqual(tokens(rows["a–c"]), ["a–c", "0.700", "0.700", "0.700", "0.700", "0.700", "-0.700"])
        XCTAssertEqual(tokens(rows["a–b"]), ["a–b", "0.000", "0.000", "0.000", "0.000", "0.000", "+0.000"])
        XCTAssertEqual(tokens(rows["wall"]), ["wall", "spread", "0.700", "0.700", "0.700", "0.700", "0.700"])
        XCTAssertEqual(lines.last, report.verdict.sentence)
        XCTAssertTrue(lines.allSatisfy { !$0.hasSuffix(" ") }, "no trailing spaces")
    }

    func testTable_whenCountersAreUnknown_showsDashes() throws {
        let report = try lateNodeReport()
        let health = report.table().split(separator: "\n").map(String.init).filter { $0.hasPrefix("a ") }.last
        // Bound max, bound last, guaranteed max, late, dropped: unknown.
        XCTAssertEqual(tokens(health), ["a", "300", "0.100", "0.100", "0.100", "-", "-", "-", "-", "-", "0", "0", "0"])
    }

    func testGroundTruthTable_endsWithTheSummaryLineAndTheSentence() throws {
        var comparison = try GroundTruthComparison(nodes: ["a", "b"])
        let arrivals = (0..<30).flatMap { frame in
            ["a", "b"].map { node in
                GroundTruthArrival(
                    node: node, code: frame, arrivedAt: MediaTime(nanoseconds: Int64(frame) * 33_333_333 + 5_000_000))
            }
        }
        try comparison.ingest(arrivals)
        try comparison.ingest(
            (0..<30).map { frame in
                let time = MediaTime(nanoseconds: Int64(frame) * 33_333_333)
                return AlignedFrame(
                    nodes: ["a", "b"], runningTime: time, presentationTimestamp: time, presentedAt: [time, time])
            })
        let lines = comparison.report().table().split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "ground truth: 30 frames matched on every node, 0 not; times in ms")
        XCTAssertEqual(tokens(lines[2]), ["a–b", "0.000", "0.000", "0.000", "0.000", "0.000", "0.000"])
        XCTAssertEqual(
            lines[lines.count - 2],
            "ground truth: p99 skew 0.000 ms, nodes' report agrees within 0.000 ms at p99 → CONFIRMED")
        XCTAssertEqual(lines.last, comparison.report().verdict.sentence)
    }

    // MARK: SVG

    func testSVG_isWellFormedWithOnePolylinePerNode() throws {
        var wall = SyntheticWall(nodes: ["left", #"tile "B" & <C>"#, "right"])
        wall.skew = ["right": { 700_000 + Int64($0 % 10) * 30_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<600, to: &analyzer)
        let svg = DriftPlot(report: analyzer.report()).svg()

        let elements = try parse(svg)
        XCTAssertEqual(elements.first?.name, "svg")
        XCTAssertEqual(elements.filter { $0.name == "polyline" }.count, 3)
        XCTAssertEqual(elements.filter { $0.name == "polygon" }.count, 3, "one max-skew band per node")
        XCTAssertEqual(
            elements.filter { $0.name == "g" && $0.attributes["class"] == "node" }.map { $0.attributes["data-node"] },
            ["left", #"tile "B" & <C>"#, "right"])
        // 10 s in 1 s buckets: ten points a node.
        let right = try XCTUnwrap(elements.filter { $0.name == "polyline" }.last?.attributes["points"])
        XCTAssertEqual(right.split(separator: " ").count, 10)
        let texts = elements.filter { $0.name == "text" }.map(\.text)
        XCTAssertTrue(texts.contains { $0.hasPrefix("Lockstep drift: skew to the wall's median, 600 frames") })
        XCTAssertTrue(texts.contains("threshold ±1.000 ms"))
        XCTAssertTrue(texts.contains("running time (s)"))
        XCTAssertTrue(texts.contains(#"tile "B" & <C> 0.000 ms"#), "legend with the node's p99")
        XCTAssertTrue(texts.contains("0.5") && texts.contains("-0.5"), "y ticks")
    }

    func testSVG_whenNothingAligned_isStillWellFormedAndSaysSo() throws {
        let analyzer = try DriftAnalyzer(nodes: ["a", "b"])
        let elements = try parse(DriftPlot(report: analyzer.report()).svg())
        XCTAssertEqual(elements.filter { $0.name == "polyline" }.count, 2)
        XCTAssertTrue(elements.contains { $0.name == "text" && $0.text == "no frame was aligned on every node" })
    }

    func testSVG_keepsTheVerdictInsideThePicture_wrappedBetweenWords() throws {
        var wall = SyntheticWall(nodes: ["a-rather-long-node-name", "another-long-node-name"])
        wall.skew = ["another-long-node-name": { _ in 1_700_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<100, to: &analyzer)
        let report = analyzer.report()
        let plot = DriftPlot(report: report, width: 480, height: 240)
        let verdict = try parse(plot.svg()).filter { $0.name == "text" && $0.attributes["y"].map { Int($0) ?? 0 } ?? 0 >= 40 }
            .prefix { $0.attributes["fill"] != nil }.map(\.text)
        XCTAssertGreaterThan(verdict.count, 1, "a long verdict takes several lines")
        XCTAssertEqual(verdict.joined(separator: " "), report.verdict.sentence, "nothing lost or reordered")
        for line in verdict { XCTAssertLessThanOrEqual(Double(line.count) * 6.5, 480 - 72, "\(line)") }
        XCTAssertEqual(DriftPlot.wrap("one two three", columns: 7), ["one two", "three"])
        XCTAssertEqual(DriftPlot.wrap("", columns: 7), [""])
    }

    func testTickStep_isOneTwoOrFiveTimesAPowerOfTen() {
        XCTAssertEqual(DriftPlot.tickStep(for: 3, count: 8), 0.5)
        XCTAssertEqual(DriftPlot.tickStep(for: 50, count: 8), 10)
        XCTAssertEqual(DriftPlot.tickStep(for: 0.011, count: 8), 0.002)
    }

    // MARK: Helpers

    private func lateNodeReport() throws -> DriftReport {
        var wall = SyntheticWall(nodes: ["a", "b", "c"])
        wall.skew = ["c": { _ in 700_000 }]
        var analyzer = try DriftAnalyzer(nodes: wall.nodes)
        try wall.feed(0..<300, to: &analyzer)
        return analyzer.report()
    }

    private func tokens(_ line: String?) -> [String] {
        (line ?? "").split(separator: " ").map(String.init)
    }

    private func parse(_ svg: String) throws -> [XMLElementRecord] {
        let parser = XMLParser(data: Data(svg.utf8))
        let recorder = XMLRecorder()
        parser.delegate = recorder
        XCTAssertTrue(parser.parse(), "not well-formed: \(parser.parserError.map { "\($0)" } ?? "?")\n\(svg)")
        return recorder.elements
    }
}

private struct XMLElementRecord {
    let name: String
    let attributes: [String: String]
    var text = ""
}

/// Records every element of a document, in order, with its attributes and text.
private final class XMLRecorder: NSObject, XMLParserDelegate {
    var elements: [XMLElementRecord] = []
    private var open: [Int] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        open.append(elements.count)
        elements.append(XMLElementRecord(name: elementName, attributes: attributes))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let current = open.last { elements[current].text += string }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
    }
}
