import LockstepGuard
import XCTest

final class ControlTokenTests: XCTestCase {
    func testAccepts_onlyTheExactBearerToken() throws {
        let token = try ControlToken("0123456789abcdef0123")
        XCTAssertTrue(token.accepts(authorization: "Bearer 0123456789abcdef0123"))
        XCTAssertFalse(token.accepts(authorization: nil))
        XCTAssertFalse(token.accepts(authorization: "Bearer 0123456789abcdef012"))
        XCTAssertFalse(token.accepts(authorization: "Bearer 0123456789abcdef01234"))
        XCTAssertFalse(token.accepts(authorization: "Bearer 0123456789abcdef0124"))
        XCTAssertFalse(token.accepts(authorization: "Basic 0123456789abcdef0123"))
        XCTAssertFalse(token.accepts(authorization: "Bearer "))
        XCTAssertEqual(token.authorization, "Bearer 0123456789abcdef0123")
    }

    func testAccepts_nothingLongerThanTheToken_whateverTheLengthDifference() throws {
        let token = try ControlToken("0123456789abcdef0123")
        for extra in [1, 255, 256, 512, 1024, 65_536] {
            let header = "Bearer 0123456789abcdef0123" + String(repeating: "\u{0}", count: extra)
            XCTAssertFalse(token.accepts(authorization: header), "\(extra) NULs after the token")
            XCTAssertFalse(
                token.accepts(authorization: "Bearer 0123456789abcdef0123" + String(repeating: "x", count: extra)))
        }
        XCTAssertFalse(token.accepts(authorization: "Bearer " + String(repeating: "\u{0}", count: 256)))
    }

    func testInit_refusesShortOrSpacedTokens() {
        XCTAssertThrowsError(try ControlToken("short")) { error in
            XCTAssertTrue("\(error)".contains("at least 16 characters"), "\(error)")
        }
        XCTAssertThrowsError(try ControlToken("0123456789 abcdef0123"))
        XCTAssertThrowsError(try ControlToken(contentsOfFile: "/nonexistent/token")) { error in
            XCTAssertTrue("\(error)".hasPrefix("/nonexistent/token: cannot read the control token"), "\(error)")
        }
    }
}
