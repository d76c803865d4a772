import LockstepNet
import LockstepTime
import XCTest

final class UDPSocketTests: XCTestCase {
    func testSocketAddress_describesBothFamilies() {
        XCTAssertEqual(SocketAddress.ipv4Loopback(port: 5637).description, "127.0.0.1:5637")
        XCTAssertEqual(SocketAddress.ipv6Loopback(port: 5637).description, "[::1]:5637")
        XCTAssertEqual(SocketAddress(numericHost: "192.0.2.10", port: 1)?.description, "192.0.2.10:1")
        XCTAssertEqual(SocketAddress(numericHost: "2001:db8::5", port: 2)?.description, "[2001:db8::5]:2")
        XCTAssertNil(SocketAddress(numericHost: "example.com", port: 1))
    }

    func testReceive_carriesTheKernelStampOnTheMonotonicClock() throws {
        let receiver = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        try receiver.enableReceiveTimestamps()
        let sender = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let before = LocalClock.monotonicNanoseconds()
        let payload: [UInt8] = [1, 2, 3]
        XCTAssertTrue(try payload.withUnsafeBytes { try sender.send($0, to: receiver.localAddress!) })
        let poller = try Poller()
        let readiness = try poller.wait(for: [receiver.descriptor], timeoutNanoseconds: 5_000_000_000)
        XCTAssertEqual(readiness.readable, [true])
        var buffer = [UInt8](repeating: 0, count: 2)
        let datagram = try XCTUnwrap(try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0) })
        let after = LocalClock.monotonicNanoseconds()
        XCTAssertTrue(datagram.isKernelTimestamp)
        XCTAssertTrue((before...after).contains(datagram.monotonicNanoseconds))
        XCTAssertEqual(datagram.length, 3)
        XCTAssertEqual(datagram.count, 2)
        XCTAssertTrue(datagram.isTruncated)
        XCTAssertEqual(datagram.source, sender.localAddress)
        XCTAssertNil(try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0) }, "nothing more waiting")
    }

    func testMarking_setsTheDiffServCodePoint_inBothFamilies() throws {
        let clock = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        XCTAssertEqual(clock.codePoint, 0)
        try clock.mark(.expedited)
        XCTAssertEqual(clock.codePoint, 46, "EF")
        let bulk = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        try bulk.mark(.bulk)
        XCTAssertEqual(bulk.codePoint, 8, "CS1")
        if let six = try? UDPSocket.bound(to: .ipv6Loopback(port: 0)) {
            try six.mark(.expedited)
            XCTAssertEqual(six.codePoint, 46)
        }
    }

    func testBind_whenThePortIsTaken_saysSo() throws {
        let first = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        XCTAssertThrowsError(try UDPSocket.bound(to: first.localAddress!)) { error in
            XCTAssertTrue((error as? NetworkError)?.description.contains("already in use") == true, "\(error)")
        }
    }

    func testPoller_wakesFromAnotherThread() async throws {
        let poller = try Poller()
        let socket = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let waiter = Task.detached { try poller.wait(for: [socket.descriptor], timeoutNanoseconds: nil).woken }
        poller.wake()
        let woken = try await waiter.value
        XCTAssertTrue(woken)
    }
}
