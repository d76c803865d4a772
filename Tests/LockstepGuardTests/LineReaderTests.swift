import LockstepGuard
import XCTest

final class LineReaderTests: XCTestCase {
    private func lines(_ chunks: [String], longest: Int = 8) throws -> [String] {
        var reader = LineReader(longest: longest)
        return try chunks.flatMap { try reader.feed(Array($0.utf8)) }.map { String(decoding: $0, as: UTF8.self) }
    }

    func testLines_endWithNewlineOrCRLF_blankOnesSkipped() throws {
        XCTAssertEqual(try lines(["a\nb\r\n\r\n \t\nc"]), ["a", "b"])
        XCTAssertEqual(try lines(["ab", "c\r", "\nd\n"]), ["abc", "d"])
    }

    func testTheBound_isOnTheLineWithoutItsEnd() throws {
        XCTAssertEqual(try lines(["12345678\r\n"]), ["12345678"], "exactly the bound, with CRLF")
        XCTAssertEqual(try lines(["12345678", "\r", "\n"]), ["12345678"])
        XCTAssertThrowsError(try lines(["123456789\n"]))
        XCTAssertThrowsError(try lines(["12345678", "9"]), "past the bound before its end")
        XCTAssertThrowsError(try lines(["12345678\r", "x\n"]))
    }

    func testPartialLine_isReported() throws {
        var reader = LineReader(longest: 8)
        XCTAssertEqual(try reader.feed(Array("ab".utf8)), [])
        XCTAssertTrue(reader.hasPartialLine)
        XCTAssertEqual(try reader.feed(Array("\n".utf8)), [Array("ab".utf8)])
        XCTAssertFalse(reader.hasPartialLine)
    }
}
