import Foundation
import LockstepLocks
import LockstepNet
import LockstepTime
import TestSupport
import XCTest

@testable import SyncClock

/// A master, a boundary clock relaying it, and clients, on real sockets on this machine's loopback;
/// each on its own simulated clock.
final class ClockFailoverTests: XCTestCase {
    private static let tenSeconds = MediaTime(value: 10, timescale: 1)
    private static let relayClock = try! LocalClock(
        simulatedOffset: MediaTime(value: -100, timescale: 1), driftPPM: -50)
    private static let clientClock = try! LocalClock(
        simulatedOffset: MediaTime(value: 1800, timescale: 1), driftPPM: 150)

    /// The master time the loopback master serves when the client's clock reads `local`.
    private static func trueMaster(atClientLocal local: Int64) -> Int64 {
        // Both simulations are linear maps of CLOCK_MONOTONIC.
        let monotonic = Self.clientClock.monotonicNanoseconds(atLocal: local)
        return LoopbackClock.masterClock.localNanoseconds(atMonotonic: monotonic)
    }

    /// A boundary clock: follows `sources`, and serves what it follows on a port of its own.
    private struct Relay {
        let server: SyncClockServer
        let sources: ClockSources
        let address: SocketAddress

        init(following sources: [Endpoint]) throws {
            let relay = ClockRelay()
            server = SyncClockServer(
                configuration: .init(listen: [Endpoint(host: "127.0.0.1", port: 0)]),
                clock: ClockFailoverTests.relayClock,
                relaying: relay)
            self.sources = ClockSources(
                sources: sources, clock: ClockFailoverTests.relayClock, ownRelay: server.identity, feeding: relay)
            address = try server.start()[0]
        }
    }

    func testARelay_servesTheMastersTimeline_toLockstepAndItsStratum() async throws {
        let master = LoopbackClock.server()
        let masterAddress = try master.start()[0]
        defer { master.stop() }
        let relay = try Relay(following: [Endpoint(host: "127.0.0.1", port: masterAddress.port)])
        defer { relay.server.stop() }
        let client = SyncClockClient(
            server: Endpoint(host: "127.0.0.1", port: relay.address.port), clock: Self.clientClock)
        let relaying = Task { try await relay.sources.run() }
        defer { relaying.cancel() }
        try await LoopbackClock.following(client) {
            let locked = try await client.waitUntilLocked(timeout: Self.tenSeconds)
            XCTAssertEqual(locked.master?.epoch, master.epoch, "the master's timeline")
            XCTAssertEqual(locked.master?.identity, master.identity, "the master's identity")
            XCTAssertEqual(locked.path?.stratum, 1)
            XCTAssertEqual(locked.path?.relay, relay.server.identity)
            XCTAssertEqual(locked.path?.upstream, master.identity, "the master is its own relay identity")
            XCTAssertLessThan(locked.path?.rootErrorBound.seconds ?? 1, 0.001)
            try await Task.sleep(for: .seconds(1))
            let status = client.status
            let now = Self.clientClock.nowNanoseconds()
            let error = status.mapping.masterNanoseconds(atLocalNanoseconds: now) - Self.trueMaster(atClientLocal: now)
            let bound = status.errorBound(atLocal: MediaTime(nanoseconds: now)) + (status.path?.rootErrorBound ?? .zero)
            XCTAssertLessThanOrEqual(abs(error), bound.nanoseconds ?? 0, "through the relay, within both bounds")
            XCTAssertLessThan(abs(error), 500_000)
        }
        XCTAssertGreaterThan(relay.server.statistics.lockstepReplies, 8)
    }

    func testAStockGstNetClientClock_followsTheMastersTimeThroughARelay() async throws {
        guard ChildProcess.hasGStreamerPython else {
            throw XCTSkip(
                "/usr/bin/python3 lacks GStreamer's bindings (python3-gi, gir1.2-gstreamer-1.0): run make setup")
        }
        let master = LoopbackClock.server()
        let masterAddress = try master.start()[0]
        defer { master.stop() }
        let relay = try Relay(following: [Endpoint(host: "127.0.0.1", port: masterAddress.port)])
        defer { relay.server.stop() }
        let relaying = Task { try await relay.sources.run() }
        defer { relaying.cancel() }
        _ = try await relay.sources.waitUntilLocked(timeout: Self.tenSeconds)
        let client = try ChildProcess(
            "/usr/bin/python3",
            [
                ChildProcess.gstNetClockScript, "client", "--port", String(relay.address.port), "--duration", "5",
                "--interval", "50",
            ])
        var settled: [Int64] = []
        while let sample = client.readJSON() {
            guard let mono = sample["monoNs"] as? Int64, let time = sample["clockNs"] as? Int64,
                let elapsed = sample["elapsedNs"] as? Int64, elapsed > 3_000_000_000
            else { continue }
            settled.append(time - LoopbackClock.masterClock.localNanoseconds(atMonotonic: mono))
        }
        XCTAssertGreaterThan(settled.count, 20, "samples after GStreamer's own settling time")
        XCTAssertLessThan(settled.map { abs($0) }.max() ?? .max, 1_000_000, "within 1 ms of the master's own time")
        XCTAssertGreaterThan(relay.server.statistics.gstreamerReplies, 4)
    }

    func testARelayFollowingNoMaster_staysSilent() async throws {
        let silent = try UDPSocket.bound(to: .ipv4Loopback(port: 0))
        let relay = try Relay(following: [Endpoint(host: "127.0.0.1", port: silent.localAddress!.port)])
        defer { relay.server.stop() }
        let relaying = Task { try await relay.sources.run() }
        defer { relaying.cancel() }
        let client = SyncClockClient(
            server: Endpoint(host: "127.0.0.1", port: relay.address.port), clock: Self.clientClock)
        try await LoopbackClock.following(client) {
            try await Task.sleep(for: .seconds(1))
            XCTAssertEqual(client.status.state, .unsynced)
        }
        XCTAssertGreaterThan(relay.server.statistics.notFollowing, 5, "\(relay.server.statistics)")
        XCTAssertEqual(relay.server.statistics.lockstepReplies, 0)
    }

    func testWhenTheMasterFallsSilent_clientsMoveToTheRelay_withoutAStep() async throws {
        let master = LoopbackClock.server()
        let masterAddress = try master.start()[0]
        let masterEndpoint = Endpoint(host: "127.0.0.1", port: masterAddress.port)
        let relay = try Relay(following: [masterEndpoint])
        defer { relay.server.stop() }
        let relaying = Task { try await relay.sources.run() }
        defer { relaying.cancel() }
        let client = ClockSources(
            sources: [masterEndpoint, Endpoint(host: "127.0.0.1", port: relay.address.port)], clock: Self.clientClock)
        let following = Task { try await client.run() }
        defer { following.cancel() }

        _ = try await client.waitUntilLocked(timeout: Self.tenSeconds)
        XCTAssertEqual(client.selectedSource, masterEndpoint)
        // Both locked, the relay on standby.
        let deadline = Date().addingTimeInterval(10)
        while client.reports().last?.kind != .standby, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(client.reports().map(\.kind), [.followed, .standby])

        // Watch the published master time through the kill: every 10 ms, the time the client's
        // mapping gives now, and its true error.
        struct Reading {
            let local: Int64
            let master: Int64
            let error: Int64
            let bound: Int64
        }
        var readings: [Reading] = []
        let killAt = Date().addingTimeInterval(1)
        var killed = false
        while Date() < killAt.addingTimeInterval(8) {
            if !killed, Date() >= killAt {
                master.stop()
                killed = true
            }
            let status = client.status
            let now = Self.clientClock.nowNanoseconds()
            let time = status.mapping.masterNanoseconds(atLocalNanoseconds: now)
            readings.append(
                Reading(
                    local: now, master: time, error: time - Self.trueMaster(atClientLocal: now),
                    bound: status.errorBound(atLocal: MediaTime(nanoseconds: now)).nanoseconds ?? .max))
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(client.selectedSource?.port, relay.address.port, "on the relay: \(client.reports())")
        XCTAssertEqual(client.status.state, .locked)
        XCTAssertEqual(client.status.path?.stratum, 1)
        XCTAssertEqual(client.status.generation, 1, "no new timeline")
        // The master time read never jumps: between readings it advances at the rate of the
        // master against this clock (-50 ppm... as simulated), give or take the 500 ppm slew.
        let nominal = LoopbackClock.masterClock.rate / Self.clientClock.rate
        var worst = 0.0
        for (before, after) in zip(readings, readings.dropFirst()) {
            let rate = Double(after.master - before.master) / Double(after.local - before.local)
            worst = max(worst, abs(rate - nominal) * 1e6)
        }
        XCTAssertLessThanOrEqual(worst, 520, "ppm away from the master's rate at worst")
        let errors = readings.map { abs($0.error) }
        XCTAssertLessThan(errors.max() ?? .max, 1_000_000, "true error at worst, ns")
        let outside = readings.filter { abs($0.error) > $0.bound }.count
        XCTAssertEqual(outside, 0, "readings outside the bound")
    }
    /// Three nodes, each following the master and then the next node round a ring: when the master
    /// goes, each one's fallback follows another's, a loop of three that no one-hop check sees.
    /// The strata climb round the ring until the nodes refuse one another and hold the timeline.
    func testARingOfRelays_whenTheMasterGoes_isRefusedByItsStrata_andTheNodesHold() async throws {
        let master = LoopbackClock.server()
        let masterAddress = try master.start()[0]
        defer { master.stop() }
        let masterEndpoint = Endpoint(host: "127.0.0.1", port: masterAddress.port)
        let relays = (0..<3).map { _ in ClockRelay() }
        let servers = relays.map { relay in
            SyncClockServer(
                configuration: .init(listen: [Endpoint(host: "127.0.0.1", port: 0)]), clock: Self.relayClock,
                relaying: relay)
        }
        defer { for server in servers { server.stop() } }
        let ports = try servers.map { try $0.start()[0].port }
        let nodes = (0..<3).map { index in
            ClockSources(
                sources: [masterEndpoint, Endpoint(host: "127.0.0.1", port: ports[(index + 1) % 3])],
                clock: Self.relayClock, ownRelay: servers[index].identity, feeding: relays[index])
        }
        let running = nodes.map { node in Task { try await node.run() } }
        defer { for task in running { task.cancel() } }

        func waitFor(_ what: String, seconds: Double, _ condition: () -> Bool) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while !condition() {
                guard Date() < deadline else {
                    return XCTFail("\(what) within \(seconds) s: \(nodes.map { $0.reports().map(\.standing) })")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await waitFor("every node on the master, its neighbour on standby", seconds: 15) {
            nodes.allSatisfy { $0.reports().map(\.kind) == [.followed, .standby] }
        }
        master.stop()
        try await waitFor("every node holding the timeline, following no one", seconds: 30) {
            nodes.allSatisfy { node in
                node.selectedSource == nil && node.reports()[1].kind == .tooManyRelays
            }
        }
        // And they stay so: no node takes another up again.
        try await Task.sleep(for: .seconds(3))
        for node in nodes {
            XCTAssertNil(node.selectedSource, "\(node.reports().map(\.standing))")
            XCTAssertEqual(node.status.state, .holdover)
            XCTAssertEqual(node.status.generation, 1, "no new timeline")
        }
    }
}
