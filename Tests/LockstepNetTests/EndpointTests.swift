import LockstepNet
import XCTest

final class EndpointTests: XCTestCase {
    private func parseError(_ text: String) -> NetworkError? {
        do {
            _ = try Endpoint(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    func testParse_acceptsIPv4HostnamesAndBracketedIPv6() throws {
        XCTAssertEqual(try Endpoint(parsing: "192.0.2.1:5637"), Endpoint(host: "192.0.2.1", port: 5637))
        XCTAssertEqual(try Endpoint(parsing: "wall-master.local:1"), Endpoint(host: "wall-master.local", port: 1))
        XCTAssertEqual(try Endpoint(parsing: "[::1]:65535"), Endpoint(host: "::1", port: 65535))
        XCTAssertEqual(try Endpoint(parsing: " [fe80::1%eth0]:0 ").host, "fe80::1%eth0")
    }

    func testDescription_bracketsIPv6AndRoundTrips() throws {
        for text in ["127.0.0.1:80", "[::1]:5637", "host.example:9"] {
            XCTAssertEqual(try Endpoint(parsing: text).description, text)
            XCTAssertEqual(Endpoint(text)?.description, text)
        }
    }

    func testParse_whenMalformed_namesTheProblem() {
        XCTAssertEqual(parseError("192.0.2.1"), .missingPort(input: "192.0.2.1"))
        XCTAssertEqual(parseError("[::1]"), .missingPort(input: "[::1]"))
        XCTAssertEqual(parseError(":5637"), .emptyHost(input: ":5637"))
        XCTAssertEqual(parseError("host:"), .invalidPort(input: "host:", port: ""))
        XCTAssertEqual(parseError("host:65536"), .invalidPort(input: "host:65536", port: "65536"))
        XCTAssertEqual(parseError("host:-1"), .invalidPort(input: "host:-1", port: "-1"))
        XCTAssertEqual(parseError("host:http"), .invalidPort(input: "host:http", port: "http"))
        XCTAssertEqual(parseError("::1:5637"), .unbracketedIPv6(input: "::1:5637"))
        XCTAssertEqual(parseError("[::1:5637"), .malformedBrackets(input: "[::1:5637"))
        XCTAssertEqual(parseError("[::1]x:5637"), .malformedBrackets(input: "[::1]x:5637"))
        XCTAssertEqual(parseError("[not-v6]:5637"), .invalidIPv6Address(input: "[not-v6]:5637"))
        XCTAssertNil(Endpoint("nonsense"))
    }

    func testErrors_describeThemselvesInSentencesNamingTheInput() {
        let errors: [NetworkError] = [
            .missingPort(input: "a"), .invalidPort(input: "a:x", port: "x"), .emptyHost(input: ":1"),
            .unbracketedIPv6(input: "::1:2"), .malformedBrackets(input: "[x"), .invalidIPv6Address(input: "[x]:1"),
        ]
        for error in errors {
            XCTAssertTrue(error.description.contains("\""), "\(error) quotes what was given")
        }
        XCTAssertTrue(NetworkError.unknownHost(host: "h", detail: "d").description.contains("\"h\""))
    }

    func testResolve_numericHostsWithoutALookup() throws {
        XCTAssertEqual(try Endpoint(host: "127.0.0.1", port: 7).resolve(), [.ipv4Loopback(port: 7)])
        XCTAssertEqual(try Endpoint(host: "::1", port: 7).resolve(), [.ipv6Loopback(port: 7)])
    }

    func testResolve_localhostByName() throws {
        let addresses = try Endpoint(host: "localhost", port: 5637).resolve()
        XCTAssertFalse(addresses.isEmpty)
        XCTAssertTrue(addresses.allSatisfy { $0.isLoopback && $0.port == 5637 })
    }

    func testResolve_whenTheHostIsUnknown_throwsUnknownHost() {
        XCTAssertThrowsError(try Endpoint(host: "no-such-host.invalid", port: 1).resolve()) { error in
            guard case .unknownHost(let host, let detail) = error as? NetworkError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(host, "no-such-host.invalid")
            XCTAssertFalse(detail.isEmpty)
        }
    }
}
