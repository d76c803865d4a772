import LockstepNet
import LockstepTime
import XCTest

@testable import NetImpair

/// The proxy on loopback, between test sockets.
final class ImpairmentProxyTests: XCTestCase {
    private let poller = try! Poller()

    /// Waits for and receives one datagram, or nil after five seconds.
    private func receive(on socket: UDPSocket) throws -> (UDPSocket.Datagram, [UInt8])? {
        guard try poller.wait(for: [socket.descriptor], timeoutNanoseconds: 5_000_000_000).readable[0] else {
            return nil
        }
        var buffer = [UInt8](repeating: 0, count: 2048)
        guard let datagram = try buffer.withUnsafeMutableBytes({ try socket.receive(into: $0) }) else { return nil }
        return (datagram, Array(buffer[..<datagram.count]))
    }

    private func send(_ bytes: [UInt8], from socket: UDPSocket, to address: SocketAddress) throws {
        _ = try bytes.withUnsafeBytes { try socket.send($0, to: address) }
    }

    func testRelay_givesEachClientItsOwnUpstreamAndDelaysBothWays() throws {
        let server = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        try server.enableReceiveTimestamps()
        let proxy = ImpairmentProxy(
            listen: Endpoint(host: "127.0.0.1", port: 0),
            forward: Endpoint(host: "127.0.0.1", port: server.localAddress!.port),
            impairment: Impairment(delay: MediaTime(value: 3, timescale: 1000)))
        let proxyAddress = try proxy.start()
        defer { proxy.stop() }
        let alice = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let bob = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        try alice.enableReceiveTimestamps()

        let sent = LocalClock.monotonicNanoseconds()
        try send([1], from: alice, to: proxyAddress)
        try send([2], from: bob, to: proxyAddress)
        let (first, firstBytes) = try XCTUnwrap(try receive(on: server))
        let (second, _) = try XCTUnwrap(try receive(on: server))
        XCTAssertGreaterThanOrEqual(first.monotonicNanoseconds - sent, 3_000_000, "held for the delay")
        XCTAssertNotEqual(first.source, second.source, "one upstream socket per client")

        // Reply to whichever came from alice; it must come back to alice only, delayed again.
        let aliceUpstream = firstBytes == [1] ? first.source! : second.source!
        let replied = LocalClock.monotonicNanoseconds()
        try send([9], from: server, to: aliceUpstream)
        let (reply, replyBytes) = try XCTUnwrap(try receive(on: alice))
        XCTAssertEqual(replyBytes, [9])
        XCTAssertEqual(reply.source, proxyAddress)
        XCTAssertGreaterThanOrEqual(reply.monotonicNanoseconds - replied, 3_000_000)

        let statistics = proxy.statistics
        XCTAssertEqual(statistics.sent[.toServer], 2)
        XCTAssertEqual(statistics.sent[.toClient], 1)
        XCTAssertNotNil(statistics.lateness[.toServer]?.quantile(0.5))
        XCTAssertNotNil(statistics.lateness[.toClient]?.quantile(0.5))
    }

    func testRelay_withFullLoss_forwardsNothingAndCounts() throws {
        let server = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let proxy = ImpairmentProxy(
            listen: Endpoint(host: "127.0.0.1", port: 0),
            forward: Endpoint(host: "127.0.0.1", port: server.localAddress!.port),
            impairment: Impairment(lossPercent: 100))
        let proxyAddress = try proxy.start()
        let client = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        for byte: UInt8 in 0..<20 { try send([byte], from: client, to: proxyAddress) }
        // The proxy's counters say what it did once it has taken in all 20 (polled, at most 5 s).
        let deadline = LocalClock.monotonicNanoseconds() + 5_000_000_000
        while proxy.statistics.received[.toServer, default: 0] < 20, LocalClock.monotonicNanoseconds() < deadline {
            _ = try poller.wait(for: [], timeoutNanoseconds: 1_000_000)
        }
        proxy.stop()
        XCTAssertEqual(proxy.statistics.received[.toServer], 20)
        XCTAssertEqual(proxy.statistics.lost[.toServer], 20)
        XCTAssertEqual(proxy.statistics.sent[.toServer, default: 0], 0)
    }

    func testStart_whenTheListenPortIsTaken_throwsCannotListen() throws {
        let occupant = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let proxy = ImpairmentProxy(
            listen: Endpoint(host: "127.0.0.1", port: occupant.localAddress!.port),
            forward: Endpoint(host: "127.0.0.1", port: 9), impairment: Impairment())
        XCTAssertThrowsError(try proxy.start()) { error in
            guard case .cannotListen = error as? ImpairmentError else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue("\(error)".contains("already in use"))
        }
    }

    func testStart_whenTheForwardHostIsUnknown_throwsCannotForward() {
        let proxy = ImpairmentProxy(
            listen: Endpoint(host: "127.0.0.1", port: 0), forward: Endpoint(host: "no-such-host.invalid", port: 9),
            impairment: Impairment())
        XCTAssertThrowsError(try proxy.start()) { error in
            guard case .cannotForward(let endpoint, .unknownHost) = error as? ImpairmentError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(endpoint, "no-such-host.invalid:9")
        }
    }
}
