import Foundation
import TestSupport
import WallAnalysis
import XCTest

/// `wallctl drift --json` with a ground-truth collector on every node's sink: the nodes' report,
/// ground truth's, and what the command printed, for a test's messages.
struct GroundTruthDrift: Decodable {
    let drift: DriftReport
    let groundTruth: GroundTruthReport?
    private(set) var summary = ""

    private enum CodingKeys: String, CodingKey { case drift, groundTruth }

    /// Ground truth's report; a failure naming what the command printed when there is none.
    func truth() throws -> GroundTruthReport { try XCTUnwrap(groundTruth, "no ground-truth report:\n\(summary)") }

    /// Ground truth's worst pair p99, seconds.
    func worstTruthP99() throws -> Double { try truth().pairs.map(\.truthSkew.p99.seconds).max() ?? .infinity }

    /// Measures `config`'s wall for `seconds`, with ground truth from `truth` (node id, collector
    /// port), writing the JSON to `report`; `extra` goes on the command line (`--threshold`, say).
    static func measure(
        config: URL, seconds: Int, truth: [(id: String, port: Int)], report: URL, extra: [String] = []
    ) throws -> GroundTruthDrift {
        let arguments =
            ["drift", "--config", config.path, "--duration", "\(seconds)", "--json", report.path] + extra
            + truth.flatMap { ["--ground-truth", "\($0.id)=\($0.port)"] }
        let run = try ChildProcess.run(ChildProcess.product("wallctl"), arguments)
        var reports = try JSONDecoder().decode(GroundTruthDrift.self, from: Data(contentsOf: report))
        reports.summary = "\(report.lastPathComponent):\n\(run.output)\n\(run.errors)"
        return reports
    }
}
