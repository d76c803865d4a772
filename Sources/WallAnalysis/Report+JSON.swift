import Foundation

extension DriftReport {
    /// The report as JSON for `wallctl drift --json`: pretty-printed with sorted keys, so two runs
    /// diff cleanly. Times are `MediaTime`s (`{"timescale": …, "value": …}`).
    public func jsonData() throws(AnalysisError) -> Data {
        try ReportJSON.encode(self)
    }
}

extension GroundTruthReport {
    /// The report as JSON, like `DriftReport.jsonData()`.
    public func jsonData() throws(AnalysisError) -> Data {
        try ReportJSON.encode(self)
    }
}

/// What `wallctl drift --json` writes: the nodes' report and, when it was measured, the ground
/// truth's.
public struct DriftReports: Sendable, Encodable {
    public var drift: DriftReport
    public var groundTruth: GroundTruthReport?

    public init(drift: DriftReport, groundTruth: GroundTruthReport?) {
        self.drift = drift
        self.groundTruth = groundTruth
    }

    /// Both reports as one JSON object, like `DriftReport.jsonData()`.
    public func jsonData() throws(AnalysisError) -> Data {
        try ReportJSON.encode(self)
    }
}

/// The one JSON encoding of the module's reports.
enum ReportJSON {
    static func encode(_ value: some Encodable) throws(AnalysisError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw .encodingFailed(reason: "\(error)")
        }
    }
}
