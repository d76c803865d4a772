import Foundation
import XCTest

@testable import SyncClock

/// HMAC-SHA256 through libcrypto, against RFC 4231's test vectors; the clock key and its file.
final class HMACSHA256Tests: XCTestCase {
    private func hex(_ text: String) -> [UInt8] { ClockKey.hexDecoded(Array(text.utf8))! }

    private func assertVector(
        key: [UInt8], data: [UInt8], _ expected: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let mac = try XCTUnwrap(HMACSHA256(key: key), file: file, line: line)
        let expectedBytes = hex(expected)
        XCTAssertEqual(
            mac.authenticationCode(of: data, length: expectedBytes.count), expectedBytes, file: file, line: line)
    }

    func testRFC4231_testCase1() throws {
        try assertVector(
            key: [UInt8](repeating: 0x0B, count: 20), data: Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    func testRFC4231_testCase2_aKeyShorterThanTheOutput() throws {
        try assertVector(
            key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testRFC4231_testCase3() throws {
        try assertVector(
            key: [UInt8](repeating: 0xAA, count: 20), data: [UInt8](repeating: 0xDD, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
    }

    func testRFC4231_testCase4() throws {
        try assertVector(
            key: Array(1...25), data: [UInt8](repeating: 0xCD, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
    }

    func testRFC4231_testCase5_truncatedTo128Bits() throws {
        try assertVector(
            key: [UInt8](repeating: 0x0C, count: 20), data: Array("Test With Truncation".utf8),
            "a3b6167473100ee06e0c796c2955552b")
    }

    func testRFC4231_testCases6And7_keysLongerThanABlock() throws {
        let key = [UInt8](repeating: 0xAA, count: 131)
        try assertVector(
            key: key, data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        try assertVector(
            key: key,
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key "
                    + "needs to be hashed before being used by the HMAC algorithm.").utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    func testConstantTimeEqual_comparesWholeBuffers() {
        let a: [UInt8] = [1, 2, 3, 4]
        a.withUnsafeBytes { a in
            XCTAssertTrue(HMACSHA256.constantTimeEqual(a, a))
            [1, 2, 3, 5].withUnsafeBytes { XCTAssertFalse(HMACSHA256.constantTimeEqual(a, $0)) }
            [1, 2, 3].withUnsafeBytes { XCTAssertFalse(HMACSHA256.constantTimeEqual(a, $0)) }
        }
    }

    // MARK: Clock key

    private func keyFile(_ content: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clock-\(UUID().uuidString).key").path
        FileManager.default.createFile(atPath: path, contents: Data(content))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testKeyFile_ofHexDigits_isDecoded() throws {
        let text = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF\n"
        let key = try ClockKey(contentsOfFile: keyFile(Array(text.utf8)))
        XCTAssertEqual(key.bytes, hex(String(text.dropLast())))
        XCTAssertEqual(key.bytes.count, 32)
    }

    func testKeyFile_ofRawBytes_isTakenAsIs() throws {
        let raw: [UInt8] = (0..<32).map { UInt8(($0 * 7 + 200) & 0xFF) }
        XCTAssertEqual(try ClockKey(contentsOfFile: keyFile(raw)).bytes, raw)
    }

    func testKeyFile_tooShort_isAnErrorNamingTheFileButNotTheKey() throws {
        let path = try keyFile(Array("0011223344556677".utf8))
        XCTAssertThrowsError(try ClockKey(contentsOfFile: path)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains(path) && text.contains("8 bytes, at least 16"), text)
            XCTAssertFalse(text.contains("0011223344556677"), "the key never appears in messages")
        }
        XCTAssertThrowsError(try ClockKey(contentsOfFile: "/nonexistent/clock.key")) { error in
            XCTAssertTrue("\(error)".contains("cannot read the key file /nonexistent/clock.key"), "\(error)")
        }
    }

    func testKey_describesItselfWithoutItsBytes() throws {
        let key = try ClockKey(bytes: [UInt8](repeating: 0x41, count: 16))
        XCTAssertEqual(key.description, "clock key (16 bytes)")
        XCTAssertEqual("\(key)", "clock key (16 bytes)")
    }
}
