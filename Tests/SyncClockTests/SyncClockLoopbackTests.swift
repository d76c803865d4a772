import LockstepLocks
import LockstepNet
import LockstepTime
import XCTest

@testable import SyncClock

/// Server and client on real sockets, on this machine's loopback.
final class SyncClockLoopbackTests: XCTestCase {
    private static let fiveSeconds = MediaTime(value: 5, timescale: 1)

    private func assertLocks(host: String, format: WireFormat = .lockstep) async throws {
        let server = LoopbackClock.server(on: host)
        let address = try server.start()[0]
        defer { server.stop() }
        let client = SyncClockClient(
            server: Endpoint(host: host, port: address.port), configuration: .init(format: format), clock: .monotonic)
        try await LoopbackClock.following(client) {
            let locked = try await client.waitUntilLocked(timeout: Self.fiveSeconds)
            XCTAssertEqual(locked.master?.epoch, format == .lockstep ? server.epoch : nil)
            let (error, bound) = LoopbackClock.error(of: client)
            XCTAssertLessThanOrEqual(abs(error), bound, "the true error is within the bound")
            XCTAssertLessThan(abs(error), 500_000)
        }
        XCTAssertGreaterThan(server.statistics.datagrams, 0)
        XCTAssertEqual(server.statistics.rejectedTotal, 0)
    }

    func testServerAndClient_lockOnIPv4Loopback() async throws {
        try await assertLocks(host: "127.0.0.1")
    }

    func testServerAndClient_lockOnIPv6Loopback() async throws {
        guard (try? UDPSocket.bound(to: .ipv6Loopback(port: 0))) != nil else {
            throw XCTSkip("this machine has no IPv6 loopback")
        }
        try await assertLocks(host: "::1")
    }

    func testServerAndClient_lockInGStreamerFormat() async throws {
        try await assertLocks(host: "127.0.0.1", format: .gstreamer)
    }

    func testClient_staysLocked_whileTheServerIsFloodedWithMalformedDatagrams() async throws {
        let server = LoopbackClock.server()
        let address = try server.start()[0]
        defer { server.stop() }
        let client = SyncClockClient(server: Endpoint(host: "127.0.0.1", port: address.port), clock: .monotonic)
        try await LoopbackClock.following(client) {
            _ = try await client.waitUntilLocked(timeout: Self.fiveSeconds)
            let flooder = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
            var random = SplitMix64(seed: 11)
            var sent = 0
            for round in 0..<40 {
                for _ in 0..<250 {
                    // Lengths around and beyond the valid sizes, never exactly a valid packet's.
                    var length = Int.random(in: 0...1_400, using: &random)
                    if length == 16 || length == 56 || length == 72 || length == 96 { length += 1 }
                    let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                    if bytes.withUnsafeBytes({ (try? flooder.send($0, to: address)) == true }) { sent += 1 }
                }
                try await Task.sleep(for: .milliseconds(25))
                let status = client.status
                XCTAssertEqual(status.state, .locked, "round \(round)")
                XCTAssertEqual(status.generation, 1)
                let (error, bound) = LoopbackClock.error(of: client)
                XCTAssertLessThanOrEqual(abs(error), bound, "round \(round)")
            }
            XCTAssertGreaterThan(sent, 5_000)
        }
        let statistics = server.statistics
        XCTAssertGreaterThan(statistics.rejectedTotal, 5_000, "\(statistics)")
        XCTAssertGreaterThan(statistics.lockstepReplies, 0)
    }

    func testServer_capsRepliesToAFloodingAddress_whileAClientLocks() async throws {
        let limit = ReplyRateLimit(repliesPerSecond: 200, burst: 50)
        let server = SyncClockServer(
            configuration: .init(listen: [Endpoint(host: "127.0.0.1", port: 0)], rateLimit: limit),
            clock: LoopbackClock.masterClock)
        let address = try server.start()[0]
        defer { server.stop() }
        // Buckets are per address: the flood comes from 127.0.0.2, the client from 127.0.0.1.
        let flooder = try UDPSocket.bound(to: SocketAddress(numericHost: "127.0.0.2", port: 0)!)
        let request = {
            var bytes = [UInt8](repeating: 0, count: LockstepTimePacket.size)
            bytes.withUnsafeMutableBytes {
                LockstepTimePacket(kind: .request, sequence: 1, clientSendTime: 1).encode(into: $0)
            }
            return bytes
        }()
        let client = SyncClockClient(server: Endpoint(host: "127.0.0.1", port: address.port), clock: .monotonic)
        let start = LocalClock.monotonic.nowNanoseconds()
        let sent = Mutex(0)
        try await LoopbackClock.following(client) {
            while client.status.state != .locked {
                XCTAssertLessThan(LocalClock.monotonic.nowNanoseconds() - start, 5_000_000_000, "never locked")
                if LocalClock.monotonic.nowNanoseconds() - start > 5_000_000_000 { return }
                for _ in 0..<200 where request.withUnsafeBytes({ (try? flooder.send($0, to: address)) == true }) {
                    sent.withLock { $0 += 1 }
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        let elapsed = Double(LocalClock.monotonic.nowNanoseconds() - start) / 1e9
        let statistics = server.statistics
        let floodReplies = statistics.lockstepReplies - client.status.counters.requestsSent
        let flooded = sent.withLock { $0 }
        XCTAssertGreaterThan(flooded, 2_000)
        XCTAssertGreaterThan(statistics.rateLimited, flooded / 2, "\(statistics)")
        XCTAssertLessThanOrEqual(
            Double(floodReplies), limit.burst + limit.repliesPerSecond * elapsed + 1, "\(statistics) in \(elapsed) s")
        XCTAssertTrue(statistics.description.contains("over the rate limit"), statistics.description)
    }

    func testServer_neverAnswersMalformedDatagrams_andCountsThem() throws {
        let server = LoopbackClock.server()
        let address = try server.start()[0]
        defer { server.stop() }
        let socket = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        try socket.connect(to: address)
        var valid = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        valid.withUnsafeMutableBytes {
            LockstepTimePacket(kind: .request, sequence: 9, clientSendTime: 1).encode(into: $0)
        }
        var wrongVersion = valid
        wrongVersion[4] = 7
        for datagram in [[UInt8](repeating: 1, count: 3), valid + [0], wrongVersion, valid] {
            _ = try datagram.withUnsafeBytes { try socket.send($0) }
        }
        // The server answers in order, so the first reply shows whether a bad datagram was answered.
        let poller = try Poller()
        _ = try poller.wait(for: [socket.descriptor], timeoutNanoseconds: 5_000_000_000)
        var buffer = [UInt8](repeating: 0, count: 2048)
        let datagram = try buffer.withUnsafeMutableBytes { try socket.receive(into: $0) }
        XCTAssertEqual(datagram?.length, LockstepTimePacket.size)
        guard
            case .packet(.lockstep(let reply)) = buffer.withUnsafeBytes({
                ClockPacket.decode($0, length: LockstepTimePacket.size)
            })
        else {
            return XCTFail("no Lockstep reply")
        }
        XCTAssertEqual(reply.sequence, 9)
        // The server counts a reply after sending it: the client can see the reply a moment first.
        let deadline = LocalClock.monotonic.now() + MediaTime(value: 2, timescale: 1)
        while server.statistics.lockstepReplies == 0, LocalClock.monotonic.now() < deadline {
            usleep(1_000)
        }
        let statistics = server.statistics
        XCTAssertEqual(statistics.rejected, [.tooShort: 1, .oversized: 1, .unsupportedVersion: 1])
        XCTAssertEqual(statistics.lockstepReplies, 1)
    }

    func testServer_whenThePortIsInUse_throwsCannotListen() throws {
        let occupant = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let port = occupant.localAddress!.port
        let server = SyncClockServer(configuration: .init(listen: [Endpoint(host: "127.0.0.1", port: port)]))
        XCTAssertThrowsError(try server.start()) { error in
            guard case .cannotListen(let endpoint, let underlying) = error as? SyncClockError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(endpoint, "127.0.0.1:\(port)")
            XCTAssertTrue(underlying.description.contains("already in use"), underlying.description)
        }
    }

    func testClient_whenTheHostIsUnknown_throwsCannotReachServer() async {
        let client = SyncClockClient(server: Endpoint(host: "no-such-host.invalid", port: 5637), clock: .monotonic)
        do {
            try await client.run()
            XCTFail("run returned")
        } catch {
            guard case .cannotReachServer(_, .unknownHost(let host, _)) = error else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(host, "no-such-host.invalid")
        }
    }

    func testClient_whenRunTwice_throwsAlreadyRunning() async throws {
        let client = SyncClockClient(server: Endpoint(host: "no-such-host.invalid", port: 5637), clock: .monotonic)
        try? await client.run()
        do {
            try await client.run()
            XCTFail("run returned")
        } catch {
            guard case .alreadyRunning = error else { return XCTFail("unexpected \(error)") }
        }
    }

    func testWaitUntilLocked_whenTheServerIsSilent_throwsNotLocked() async throws {
        let silent = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let client = SyncClockClient(
            server: Endpoint(host: "127.0.0.1", port: silent.localAddress!.port), clock: .monotonic)
        try await LoopbackClock.following(client) {
            do {
                _ = try await client.waitUntilLocked(timeout: MediaTime(value: 300, timescale: 1000))
                XCTFail("locked to a silent server")
            } catch {
                XCTAssertEqual(
                    error as? SyncClockError,
                    .notLocked(timeout: MediaTime(value: 300, timescale: 1000), state: .unsynced))
            }
        }
        XCTAssertGreaterThan(client.status.counters.requestsSent, 0)
    }
}
