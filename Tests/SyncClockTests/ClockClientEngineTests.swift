import LockstepNet
import LockstepTime
import XCTest

@testable import SyncClock

/// The client protocol on a simulated network: deterministic, seeded, no sockets, no sleeping.
final class ClockClientEngineTests: XCTestCase {
    private static let hour: Int64 = 3_600_000_000_000
    private static let second: Int64 = 1_000_000_000

    private func simulation(
        masterOffset: Int64 = hour, masterDrift: Double = 100, clientOffset: Int64 = 0, clientDrift: Double = 0,
        format: WireFormat = .lockstep, seed: UInt64 = 1
    ) -> ClockSimulation {
        ClockSimulation(
            client: SimulatedClock(offset: clientOffset, driftPPM: clientDrift),
            master: SimulatedClock(offset: masterOffset, driftPPM: masterDrift), format: format, seed: seed)
    }

    private func assertLocksQuickly(
        _ simulation: inout ClockSimulation, file: StaticString = #filePath, line: UInt = #line
    ) {
        simulation.run(for: 10 * Self.second)
        guard let firstLocked = simulation.records.first(where: { $0.status.state == .locked }) else {
            return XCTFail("never locked", file: file, line: line)
        }
        XCTAssertLessThanOrEqual(
            firstLocked.status.counters.samplesUsed, 20, "samples before locking", file: file, line: line)
        XCTAssertLessThan(abs(firstLocked.error), 50_000, "error when it locked", file: file, line: line)
        XCTAssertLessThan(simulation.p99Error(after: 2 * Self.second), 10_000, file: file, line: line)
        XCTAssertEqual(simulation.latest?.status.state, .locked, file: file, line: line)
        XCTAssertEqual(simulation.boundViolations.count, 0, "true error beyond the error bound", file: file, line: line)
    }

    func testLocks_whenOffsetIsOneHour() {
        var simulation = simulation(masterOffset: Self.hour, masterDrift: 500)
        assertLocksQuickly(&simulation)
    }

    func testLocks_whenOffsetIsMinusOneHourAndDriftMinus500ppm() {
        var simulation = simulation(masterOffset: -Self.hour, masterDrift: -500)
        assertLocksQuickly(&simulation)
    }

    func testLocks_whenTheLocalClockIsTheOneOffAndDrifting() {
        var simulation = simulation(masterOffset: 0, masterDrift: 0, clientOffset: Self.hour, clientDrift: 500)
        assertLocksQuickly(&simulation)
    }

    func testLocks_inGStreamerFormat() {
        var simulation = simulation(masterDrift: -500, format: .gstreamer)
        assertLocksQuickly(&simulation)
        XCTAssertNil(simulation.latest?.status.master, "GStreamer's format carries no identity")
    }

    func testErrorBound_containsTheTrueError_underJitterLossAndSpikes() {
        for seed: UInt64 in 1...4 {
            var simulation = simulation(
                masterOffset: seed % 2 == 0 ? Self.hour : -Self.hour, masterDrift: Double(seed) * 80 - 250,
                clientDrift: 30, seed: seed)
            for path in [\ClockSimulation.toServer, \ClockSimulation.toClient] {
                simulation[keyPath: path].jitter = 500_000
                simulation[keyPath: path].lossProbability = 0.1
                simulation[keyPath: path].spikeProbability = 0.05
            }
            simulation.run(for: 30 * Self.second)
            XCTAssertGreaterThan(simulation.records.count, 100, "seed \(seed)")
            XCTAssertEqual(simulation.boundViolations.count, 0, "seed \(seed): true error beyond the bound")
            XCTAssertEqual(simulation.latest?.status.state, .locked, "seed \(seed)")
            XCTAssertLessThan(simulation.p99Error(after: 10 * Self.second), 100_000, "seed \(seed)")
        }
    }

    func testDelaySpikes_areRejectedAndDoNotMoveTheEstimate() {
        var simulation = simulation()
        simulation.toServer.spikeProbability = 0.2
        simulation.toClient.spikeProbability = 0.2
        simulation.run(for: 30 * Self.second)
        let counters = simulation.latest!.status.counters
        XCTAssertGreaterThan(counters.rejectedDelaySpikes, 10)
        XCTAssertLessThan(simulation.p99Error(after: 2 * Self.second), 10_000)
        XCTAssertEqual(simulation.boundViolations.count, 0)
    }

    func testMapping_onceLocked_isContinuousAndNeverRunsBackwards() {
        var simulation = simulation(masterDrift: 400)
        simulation.toServer.jitter = 300_000
        simulation.toClient.jitter = 300_000
        simulation.run(for: 20 * Self.second)
        let locked = simulation.records.drop { $0.status.state != .locked }
        XCTAssertGreaterThan(locked.count, 50)
        for (previous, next) in zip(locked, locked.dropFirst())
        where next.status.generation == previous.status.generation {
            let anchor = next.status.mapping.localTime.nanoseconds!
            let before = previous.status.mapping.masterNanoseconds(atLocalNanoseconds: anchor)
            let after = next.status.mapping.masterNanoseconds(atLocalNanoseconds: anchor)
            XCTAssertLessThanOrEqual(abs(after - before), 1, "the new line starts where the old one was")
            XCTAssertGreaterThan(next.status.mapping.rate, 0.99)
            XCTAssertLessThan(abs(next.status.mapping.ratePPM - next.status.ratePPM), 501, "slew within its limit")
        }
        XCTAssertEqual(locked.last?.status.generation, 1)
    }

    func testPolling_burstsWhileLockingAndSlowsWhenStable() {
        var simulation = simulation()
        simulation.run(for: 200_000_000)
        XCTAssertGreaterThanOrEqual(simulation.latest!.status.counters.requestsSent, 10, "a burst while locking")
        simulation.run(for: 30 * Self.second)
        XCTAssertEqual(simulation.latest?.status.pollInterval, MediaTime(value: 500, timescale: 1000))
        XCTAssertLessThan(simulation.latest!.status.counters.requestsSent, 150)
    }

    func testPolling_staysFasterWhenTheNetworkIsJittery() {
        var simulation = simulation()
        simulation.toServer.jitter = 2_000_000
        simulation.toClient.jitter = 2_000_000
        simulation.run(for: 15 * Self.second)
        XCTAssertEqual(simulation.latest?.status.pollInterval, MediaTime(value: 100, timescale: 1000))
    }

    func testHoldover_whenMasterGoesSilent_keepsTheRateAndTheBoundGrowsAsPredicted() {
        var simulation = simulation(masterDrift: 250, clientDrift: -40)
        simulation.run(for: 30 * Self.second)
        XCTAssertEqual(simulation.latest?.status.state, .locked)
        simulation.serverAnswers = false
        simulation.run(for: 5 * Self.second)
        guard let entry = simulation.records.first(where: { $0.status.state == .holdover }) else {
            return XCTFail("no holdover after 5 s of silence")
        }
        XCTAssertGreaterThan(entry.status.errorBoundGrowthPPM, 0)
        // 30 s of samples whose constraints are ~100 µs wide pin the rate down to a few ppm.
        XCTAssertLessThan(entry.status.errorBoundGrowthPPM, 5)
        for _ in 0..<12 {
            simulation.run(for: 5 * Self.second)
            let local = simulation.client.reading(at: simulation.now)
            let predicted = entry.status.errorBound(atLocal: MediaTime(nanoseconds: local)).nanoseconds!
            let reported = simulation.engine.status(at: local)
            XCTAssertEqual(reported.state, .holdover)
            XCTAssertLessThanOrEqual(
                reported.errorBound.nanoseconds!, predicted, "the bound grows no faster than predicted")
            XCTAssertLessThanOrEqual(
                abs(simulation.error(atTrueTime: simulation.now)), reported.errorBound.nanoseconds!)
        }
        let local = simulation.client.reading(at: simulation.now)
        let elapsed = Double(local - entry.status.localTime.nanoseconds!) / 1e9
        let growth = entry.status.errorBound(atLocal: MediaTime(nanoseconds: local)) - entry.status.errorBound
        XCTAssertEqual(
            Double(growth.nanoseconds!), entry.status.errorBoundGrowthPPM * 1e3 * elapsed, accuracy: 2,
            "bound = entry bound + growth × time")
        simulation.serverAnswers = true
        simulation.run(for: 5 * Self.second)
        XCTAssertEqual(simulation.latest?.status.state, .locked, "back from holdover")
        XCTAssertEqual(simulation.latest?.status.generation, 1, "no step needed")
    }

    /// The bound describes the timeline the client follows. After the master's time really jumped, a
    /// locked client stays on the old one until the jump has persisted (a couple of seconds), and a
    /// status it reports meanwhile (a slew ending) is about the old timeline: not counted.
    private func assertNoBoundViolations(
        _ simulation: ClockSimulation, exceptOnTheOldTimelineAfter jump: Int64, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        let violations = simulation.boundViolations.filter { $0.trueTime < jump || $0.status.generation > 1 }
        XCTAssertEqual(violations.count, 0, "true error beyond the bound", file: file, line: line)
    }

    func testRestart_whenEpochChanges_relocksOnANewTimeline() {
        var simulation = simulation()
        simulation.run(for: 10 * Self.second)
        let restart = simulation.now
        simulation.master.offset += 7 * Self.second
        simulation.serverEpoch = 0xE2
        simulation.serverIdentity = 0xB
        // The clock holds the old epoch while no source serves it, for the selector's epoch holdoff
        // (10 s), then steps onto the new one.
        simulation.run(for: 15 * Self.second)
        let status = simulation.latest!.status
        XCTAssertEqual(status.counters.estimateRestarts, 1)
        XCTAssertEqual(status.generation, 2)
        XCTAssertEqual(status.state, .locked)
        XCTAssertEqual(status.master?.epoch, 0xE2)
        XCTAssertLessThan(abs(simulation.latest!.error), 10_000)
        XCTAssertGreaterThanOrEqual(
            status.counters.suspectEpochChanges, 4, "a locked client waits for the new epoch to persist")
        assertNoBoundViolations(simulation, exceptOnTheOldTimelineAfter: restart)
    }

    func testRestart_whenAGStreamerMasterTimeJumps_isDetectedAndRelocked() {
        var simulation = simulation(format: .gstreamer)
        simulation.run(for: 10 * Self.second)
        let jump = simulation.now
        simulation.master.offset -= 42 * Self.second
        simulation.run(for: 10 * Self.second)
        let status = simulation.latest!.status
        XCTAssertEqual(status.counters.estimateRestarts, 1)
        XCTAssertEqual(status.generation, 2)
        XCTAssertEqual(status.state, .locked)
        XCTAssertLessThan(abs(simulation.latest!.error), 10_000)
        assertNoBoundViolations(simulation, exceptOnTheOldTimelineAfter: jump)
    }

    func testStandbyMaster_onTheSameEpoch_takesOverWithoutAStep() {
        var simulation = simulation()
        simulation.run(for: 10 * Self.second)
        simulation.serverIdentity = 0xF00
        simulation.run(for: 5 * Self.second)
        let status = simulation.latest!.status
        XCTAssertEqual(status.counters.masterChanges, 1)
        XCTAssertEqual(status.counters.estimateRestarts, 0)
        XCTAssertEqual(status.generation, 1)
        XCTAssertTrue(simulation.records.drop { $0.status.state != .locked }.allSatisfy { $0.status.state == .locked })
    }

    func testStrayDatagrams_fuzzed_neverDisturbALockedClient() {
        var simulation = simulation()
        simulation.duplicateProbability = 0.1
        var random = SplitMix64(seed: 99)
        for _ in 0..<5_000 {
            let time = Int64.random(in: (2 * Self.second)...(20 * Self.second), using: &random)
            let length = [16, 96, Int.random(in: 0...120, using: &random)].randomElement(using: &random)!
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if length == 96, Bool.random(using: &random) {
                // Structurally valid replies with random times, sequence and nonce: only those and the
                // echoed send time could make them count, and they are not guessable.
                bytes.replaceSubrange(0..<6, with: Array("LSCK".utf8) + [LockstepTimePacket.version, 2])
            }
            simulation.injected.append((time, bytes))
        }
        simulation.run(for: 20 * Self.second)
        let counters = simulation.latest!.status.counters
        XCTAssertGreaterThan(counters.rejectedMalformed + counters.unmatchedReplies, 5_000)
        XCTAssertEqual(simulation.latest?.status.state, .locked)
        XCTAssertEqual(simulation.latest?.status.generation, 1)
        XCTAssertLessThan(simulation.p99Error(after: 2 * Self.second), 10_000)
        XCTAssertEqual(simulation.boundViolations.count, 0)
    }

    // MARK: Hardening

    /// A request sent by `engine` at local time `sent`, and the reply a server would give.
    private func exchange(
        _ engine: inout ClockClientEngine, nonce: UInt32, sent: Int64, serverTime: Int64,
        authenticator: PacketAuthenticator? = nil
    ) -> [UInt8] {
        var request = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        let size = request.withUnsafeMutableBytes { buffer in
            let size = engine.prepareRequest(into: buffer, nonce: nonce)
            engine.stampRequest(buffer, sentAt: sent)
            return size
        }
        engine.recordRequest(sentAt: sent)
        var responder = TimeResponder(identity: 1, epoch: 2, flags: [], serverPorts: [])
        responder.authenticator = authenticator
        var reply = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        let count = request.withUnsafeBytes { requestBytes in
            reply.withUnsafeMutableBytes { replyBytes -> Int in
                guard
                    case .reply(let format, let count) = responder.respond(
                        to: UnsafeRawBufferPointer(rebasing: requestBytes[..<size]), length: size, sourcePort: 40_000,
                        receiveTime: serverTime, kernelStamped: true, into: replyBytes),
                    responder.stamp(replyBytes, format: format, receiveTime: serverTime, sendTime: serverTime + 10_000)
                else { return 0 }
                return count
            }
        }
        return Array(reply[..<count])
    }

    private func receive(_ engine: inout ClockClientEngine, _ bytes: [UInt8], at time: Int64, fromServer: Bool = true)
        -> Bool
    {
        bytes.withUnsafeBytes { engine.receive($0, length: bytes.count, at: time, now: time, fromServer: fromServer) }
    }

    func testReply_mustEchoTheRequestsNonceSequenceAndSendTime_andComeFromTheServer() {
        var engine = ClockClientEngine(configuration: .init(), firstSequence: 100)
        let reply = exchange(&engine, nonce: 0xC0FF_EE00, sent: Self.second, serverTime: Self.hour)
        for (offset, what) in [(12, "nonce"), (8, "sequence"), (16, "send time")] {
            var forged = reply
            forged[offset + 3] ^= 0x01
            XCTAssertFalse(receive(&engine, forged, at: Self.second + 100_000), what)
        }
        XCTAssertFalse(receive(&engine, reply, at: Self.second + 100_000, fromServer: false), "another source")
        XCTAssertEqual(engine.counters.unmatchedReplies, 4)
        XCTAssertTrue(receive(&engine, reply, at: Self.second + 100_000), "the real reply still counts")
        XCTAssertEqual(engine.counters.samplesUsed, 1)
        XCTAssertFalse(receive(&engine, reply, at: Self.second + 200_000), "a replay")
        XCTAssertEqual(engine.counters.unmatchedReplies, 5)
    }

    func testGStreamerReply_mustEchoTheExactSendTimeOfARequest() {
        var configuration = ClockClientEngine.Configuration()
        configuration.format = .gstreamer
        var engine = ClockClientEngine(configuration: configuration, firstSequence: 0)
        let reply = exchange(&engine, nonce: 0, sent: Self.second, serverTime: Self.hour)
        var forged = reply
        forged[7] ^= 0x01
        XCTAssertFalse(receive(&engine, forged, at: Self.second + 100_000))
        XCTAssertEqual(engine.counters.unmatchedReplies, 1)
        XCTAssertTrue(receive(&engine, reply, at: Self.second + 100_000))
    }

    func testForgedReplies_aFew30msOff_whileLocked_doNotMoveTheEstimate() {
        var simulation = simulation()
        simulation.run(for: 10 * Self.second)
        XCTAssertEqual(simulation.latest?.status.state, .locked)
        let before = simulation.latest!.status.counters.rejectedInconsistent
        simulation.forgedShift = 30_000_000
        simulation.run(for: 1_600_000_000)
        simulation.forgedShift = 0
        simulation.run(for: 10 * Self.second)
        let status = simulation.latest!.status
        XCTAssertGreaterThanOrEqual(
            status.counters.rejectedInconsistent - before, 3, "the forged replies were held back")
        XCTAssertEqual(status.generation, 1)
        XCTAssertEqual(status.counters.estimateRestarts, 0)
        let locked = simulation.records.drop { $0.status.state != .locked }
        XCTAssertTrue(locked.allSatisfy { $0.status.state == .locked })
        XCTAssertLessThan(locked.map { abs($0.error) }.max() ?? .max, 20_000, "the estimate never moved")
        XCTAssertEqual(simulation.boundViolations.count, 0, "the error bound stayed honest")
    }

    func testForgedReplies_whenTheyPersistForSeconds_areTakenAsANewTimeline_notBefore() {
        var simulation = simulation()
        simulation.run(for: 10 * Self.second)
        let start = simulation.now
        simulation.forgedShift = 30_000_000
        simulation.run(for: 8 * Self.second)
        let status = simulation.latest!.status
        XCTAssertEqual(status.generation, 2, "without a key, an attacker who answers every request for seconds wins")
        let switched = simulation.records.first { $0.status.generation == 2 }!
        XCTAssertGreaterThanOrEqual(switched.trueTime - start, 2 * Self.second, "but not within the first seconds")
    }

    func testForgedEpoch_inAFewReplies_doesNotResetALockedClient() {
        var simulation = simulation()
        simulation.run(for: 10 * Self.second)
        simulation.serverEpoch = 0xBAD
        simulation.run(for: 1_200_000_000)
        simulation.serverEpoch = 0xE
        simulation.run(for: 5 * Self.second)
        let status = simulation.latest!.status
        XCTAssertGreaterThanOrEqual(status.counters.suspectEpochChanges, 2)
        XCTAssertEqual(status.counters.estimateRestarts, 0)
        XCTAssertEqual(status.generation, 1)
        XCTAssertEqual(status.master?.epoch, 0xE)
        XCTAssertTrue(simulation.records.drop { $0.status.state != .locked }.allSatisfy { $0.status.state == .locked })
        XCTAssertEqual(simulation.boundViolations.count, 0)
    }

    func testWithAKey_locks_andRejectsRepliesAnAttackerAltered_howeverLong() throws {
        let key = try ClockKey(bytes: Array(100..<132))
        var simulation = ClockSimulation(
            client: SimulatedClock(offset: 0, driftPPM: 0), master: SimulatedClock(offset: Self.hour, driftPPM: 100),
            authenticator: try PacketAuthenticator(key: key))
        assertLocksQuickly(&simulation)
        simulation.forgedShift = 30_000_000
        simulation.run(for: 8 * Self.second)
        simulation.forgedShift = 0
        simulation.run(for: 5 * Self.second)
        let status = simulation.latest!.status
        XCTAssertGreaterThan(status.counters.unauthenticatedReplies, 10)
        XCTAssertEqual(status.generation, 1)
        XCTAssertEqual(status.state, .locked)
        XCTAssertEqual(simulation.boundViolations.count, 0)
        XCTAssertLessThan(simulation.records.drop { $0.status.state != .locked }.map { abs($0.error) }.max()!, 20_000)
    }

    func testWithAKey_repliesFromAServerWithoutIt_areRejected() throws {
        let authenticator = try PacketAuthenticator(key: ClockKey(bytes: Array(0..<16)))
        var engine = ClockClientEngine(configuration: .init(), firstSequence: 7, authenticator: authenticator)
        let unsigned = exchange(&engine, nonce: 1, sent: Self.second, serverTime: Self.hour)
        XCTAssertFalse(receive(&engine, unsigned, at: Self.second + 100_000))
        XCTAssertEqual(engine.counters.unauthenticatedReplies, 1)
        let signed = exchange(
            &engine, nonce: 2, sent: 2 * Self.second, serverTime: Self.hour + Self.second, authenticator: authenticator)
        XCTAssertTrue(receive(&engine, signed, at: 2 * Self.second + 100_000))
    }
}
