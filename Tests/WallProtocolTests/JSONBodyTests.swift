import Foundation
import WallProtocol
import XCTest

/// Request bodies a client got wrong, each named for what it is: Foundation's decoder on Linux
/// calls every number that does not fit "not valid JSON".
final class JSONBodyTests: XCTestCase {
    private struct Body: Decodable {
        var version: UInt64
        var entries: [Entry]?
        struct Entry: Decodable { var repeats: Int }
    }

    private func reason(_ text: String) -> String {
        do {
            _ = try JSONBody.decode(Body.self, from: Data(text.utf8))
            return "decoded"
        } catch {
            return error.reason
        }
    }

    func testNumbersThatDoNotFit_areNamed_notCalledInvalidJSON() {
        XCTAssertEqual(
            reason(#"{"version": -1}"#),
            "a number does not fit its field (counts, versions and times are whole numbers within their bounds): version = -1"
        )
        XCTAssertTrue(reason(#"{"version": 99999999999999999999999}"#).hasSuffix("version = 99999999999999999999999"))
        XCTAssertTrue(reason(#"{"version": 1, "entries": [{"repeats": 1.5}]}"#).hasSuffix("entries[0].repeats = 1.5"))
    }

    func testTextThatIsNotJSON_saysWhereItStops() {
        XCTAssertTrue(reason(#"{"version": 1"#).hasPrefix("not valid JSON: "), reason(#"{"version": 1"#))
        XCTAssertTrue(reason(#"{"version": 1e400}"#).contains("1e400"), reason(#"{"version": 1e400}"#))
    }

    func testAMissingOrMistypedField_isNamed() {
        XCTAssertEqual(reason("{}"), "missing version")
        XCTAssertTrue(reason(#"{"version": "one"}"#).hasPrefix("version: "), reason(#"{"version": "one"}"#))
        XCTAssertEqual(reason(#"{"version": 3}"#), "decoded")
    }
}
