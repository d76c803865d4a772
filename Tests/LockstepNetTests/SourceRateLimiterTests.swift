import XCTest

@testable import LockstepNet

/// Per-address token buckets (the clock server's replies, show-control messages) on injected times: no sockets, no sleeping.
final class SourceRateLimiterTests: XCTestCase {
    private static let millisecond: Int64 = 1_000_000
    private static let second: Int64 = 1_000_000_000

    private func address(_ index: Int, port: UInt16 = 40_000) -> SocketAddress {
        SocketAddress(numericHost: "10.\(index >> 16 & 255).\(index >> 8 & 255).\(index & 255)", port: port)!
    }

    private func allowed(_ limiter: inout SourceRateLimiter, _ source: SocketAddress, times: Int, at now: Int64) -> Int
    {
        (0..<times).reduce(0) { count, _ in count + (limiter.allows(source, at: now) ? 1 : 0) }
    }

    func testAllows_theBurstAtOnce_thenTheRate() {
        var limiter = SourceRateLimiter(perSecond: 100, burst: 20)
        let client = address(1)
        XCTAssertEqual(allowed(&limiter, client, times: 50, at: Self.second), 20, "the burst")
        XCTAssertEqual(
            allowed(&limiter, client, times: 50, at: Self.second + 100 * Self.millisecond), 10, "100 ms at 100/s")
        XCTAssertEqual(allowed(&limiter, client, times: 50, at: 10 * Self.second), 20, "refilled to the burst, no more")
    }

    func testAllows_aClientPollingBelowTheRate_everyTime() {
        var limiter = SourceRateLimiter(perSecond: 1_000, burst: 200)
        var time = Self.second
        for _ in 0..<10_000 {
            XCTAssertTrue(limiter.allows(address(7), at: time))
            time += 16 * Self.millisecond
        }
    }

    func testBuckets_areKeyedByAddressNotPort() {
        var limiter = SourceRateLimiter(perSecond: 10, burst: 5)
        let ports = (0..<20).map { address(1, port: UInt16(30_000 + $0)) }
        XCTAssertEqual(ports.filter { limiter.allows($0, at: Self.second) }.count, 5, "ports share one bucket")
        XCTAssertEqual(allowed(&limiter, address(2), times: 10, at: Self.second), 5, "another address has its own")
        let v6 = SocketAddress(numericHost: "2001:db8::1", port: 1)!
        XCTAssertEqual(allowed(&limiter, v6, times: 10, at: Self.second), 5)
    }

    func testTable_staysBounded_underAFloodFromSpoofedAddresses_andKeepsPollingClients() {
        var limiter = SourceRateLimiter(perSecond: 100, burst: 10, tableCapacity: 64)
        let clients = (0..<8).map { address(1_000_000 + $0) }
        var time = Self.second
        for client in clients { XCTAssertTrue(limiter.allows(client, at: time)) }
        var floodAllowed = 0
        var clientsDenied = 0
        // 10 s of 10,000 datagrams a second, each from a new address; the clients poll every 100 ms.
        for step in 0..<100_000 {
            time += 100_000
            if limiter.allows(address(step), at: time) { floodAllowed += 1 }
            XCTAssertLessThanOrEqual(limiter.trackedAddresses, limiter.tableCapacity)
            if step % 1_000 == 0 {
                clientsDenied += clients.filter { !limiter.allows($0, at: time) }.count
            }
        }
        XCTAssertEqual(clientsDenied, 0, "clients already in the table keep their buckets")
        // The flood's addresses take the table's free places once per idle timeout (twice in 10 s) and
        // otherwise share the overflow bucket.
        XCTAssertLessThanOrEqual(floodAllowed, 2 * 64 + 10 + 100 * 10)
        XCTAssertGreaterThan(floodAllowed, 100)
    }

    func testTable_freesAddressesThatFellSilent() {
        var limiter = SourceRateLimiter(perSecond: 100, burst: 10, tableCapacity: 16)
        for index in 0..<16 { XCTAssertTrue(limiter.allows(address(index), at: Self.second)) }
        XCTAssertEqual(limiter.trackedAddresses, 16)
        let later = Self.second + SourceRateLimiter.idleTimeout
        XCTAssertEqual(allowed(&limiter, address(99), times: 10, at: later), 10, "a new address gets its own burst")
        XCTAssertEqual(limiter.trackedAddresses, 1, "silent addresses were swept")
    }
}
