import Foundation
import LockstepTime
import Logging
import XCTest

@testable import LockstepCLI

final class LogFormatTests: XCTestCase {
    private let metadata: Logger.Metadata = [
        "node.id": "top left", "timeline.version": .value(UInt64(7)), "start.rate": .value(Float(0.5)),
        "clock.authenticated": .value(true), "start.in_ns": .nanoseconds(MediaTime(value: 3, timescale: 2)),
        "seek.time_ns": .nanoseconds(.indefinite), "note": #"say "hi"=x"#,
    ]

    private func line(_ format: LoggingOptions.Format) -> String {
        StructuredLogHandler.line(
            format: format, time: "2026-11-23T06:00:00.000Z", level: .info, label: "lockstep.node", message: "anchored",
            metadata: metadata)
    }

    func testJSON_numbersAndFlagsStayNumbersAndFlags() throws {
        let object = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(line(.json).utf8)) as? [String: Any], line(.json))
        XCTAssertEqual(object["message"] as? String, "anchored")
        XCTAssertEqual(object["timeline.version"] as? Int, 7)
        XCTAssertEqual(object["start.rate"] as? Double, 0.5)
        XCTAssertEqual(object["clock.authenticated"] as? Bool, true)
        XCTAssertEqual(object["start.in_ns"] as? Int, 1_500_000_000)
        XCTAssertEqual(object["seek.time_ns"] as? String, "indefinite")
        XCTAssertEqual(object["node.id"] as? String, "top left")
        XCTAssertEqual(object["note"] as? String, #"say "hi"=x"#)
    }

    func testLogfmt_quotesOnlyWhatNeedsIt() {
        XCTAssertEqual(
            line(.logfmt),
            #"time=2026-11-23T06:00:00.000Z level=info label=lockstep.node msg=anchored clock.authenticated=true "#
                + #"node.id="top left" note="say \"hi\"=x" seek.time_ns=indefinite start.in_ns=1500000000 "#
                + #"start.rate=0.5 timeline.version=7"#)
        XCTAssertEqual(StructuredLogHandler.logfmtValue(""), #""""#)
        XCTAssertEqual(StructuredLogHandler.logfmtValue("a\nb"), #""a\nb""#)
    }
}
