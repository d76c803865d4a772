import LockstepTime
import XCTest

@testable import SyncClock

/// Following the system clock as linuxptp disciplines it: pmc's answers as ptp4l 3.1 gives them
/// (captured from ptp4l in software-timestamping mode across a veth pair), and the bounds they make.
final class LinuxPTPTests: XCTestCase {
    /// `pmc -u -b 0 'GET CURRENT_DATA_SET' 'GET PORT_DATA_SET' 'GET TIME_STATUS_NP'`.
    static let answer = """
        sending: GET CURRENT_DATA_SET
        sending: GET PORT_DATA_SET
        sending: GET TIME_STATUS_NP
        	6232f2.fffe.12e379-0 seq 0 RESPONSE MANAGEMENT CURRENT_DATA_SET 
        		stepsRemoved     1
        		offsetFromMaster -169.0
        		meanPathDelay    2393.0
        	6232f2.fffe.12e379-1 seq 1 RESPONSE MANAGEMENT PORT_DATA_SET 
        		portIdentity            6232f2.fffe.12e379-1
        		portState               UNCALIBRATED
        		logMinDelayReqInterval  0
        		peerMeanPathDelay       0
        		logAnnounceInterval     -2
        		announceReceiptTimeout  3
        		logSyncInterval         -3
        		delayMechanism          1
        		logMinPdelayReqInterval 0
        		versionNumber           2
        	6232f2.fffe.12e379-0 seq 2 RESPONSE MANAGEMENT TIME_STATUS_NP 
        		master_offset              -169
        		ingress_time               1795758225602979081
        		cumulativeScaledRateOffset +0.000000000
        		scaledLastGmPhaseChange    0
        		gmTimeBaseIndicator        0
        		lastGmPhaseChange          0x0000'0000000000000000.0000
        		gmPresent                  true
        		gmIdentity                 9e218c.fffe.e9392c
        """

    static let ingress: Int64 = 1_795_758_225_602_979_081

    func testParse_readsTheFiguresTheBoundRestsOn() {
        let state = LinuxPTPState.parse(pmcOutput: Self.answer)
        XCTAssertEqual(state.portStates, ["UNCALIBRATED"])
        XCTAssertEqual(state.offsetFromMaster, -169)
        XCTAssertEqual(state.meanPathDelay, 2393)
        XCTAssertEqual(state.stepsRemoved, 1)
        XCTAssertEqual(state.gmPresent, true)
        XCTAssertEqual(state.gmIdentity, "9e218c.fffe.e9392c")
        XCTAssertEqual(state.ingressTime, Self.ingress)
        // Garbage, a NaN, a negative delay: nothing is taken from them.
        let bad = LinuxPTPState.parse(pmcOutput: "offsetFromMaster nan\nmeanPathDelay -5\ngmPresent maybe\n\u{0}\n")
        XCTAssertNil(bad.offsetFromMaster)
        XCTAssertNil(bad.meanPathDelay)
        XCTAssertNil(bad.gmPresent)
    }

    func testTracker_locksAfterFourReadings_withTheLargestOffsetAndThePathDelayInItsBounds() {
        var tracker = LinuxPTPTracker()
        var state = LinuxPTPState.parse(pmcOutput: Self.answer)
        let difference = Self.ingress - 10_000_000_000
        var status = tracker.status
        for (index, offset) in [-169.0, 420, -80, 35].enumerated() {
            state.offsetFromMaster = offset
            // Read 100 ms after the sync arrived.
            let local: Int64 = 10_000_000_000 + 100_000_000 + Int64(index) * 500_000_000
            state.ingressTime = local + difference - 100_000_000
            status = tracker.take(state, realtimeLessLocal: difference, readError: 1_000, local: local)
            XCTAssertEqual(status.state, index < 3 ? .locking : .locked, "reading \(index)")
        }
        // 420 ns, 100 ms at 100 ppm (UNCALIBRATED: a servo may be steering), 1 µs reading the clocks.
        XCTAssertEqual(status.errorBound, MediaTime(nanoseconds: 420 + 10_000 + 1_000))
        XCTAssertEqual(status.guaranteedErrorBound, MediaTime(nanoseconds: 420 + 10_000 + 1_000 + 2_393))
        XCTAssertEqual(status.master?.epoch, MasterIdentity.realtimeEpoch, "the epoch of a --realtime master")
        XCTAssertEqual(MasterClock(timescale: .realtime, local: .process).epoch, MasterIdentity.realtimeEpoch)
        XCTAssertEqual(
            status.mapping.masterNanoseconds(atLocalNanoseconds: 12_000_000_000), 12_000_000_000 + difference)
        XCTAssertNil(tracker.problem)

        // SLAVE: the servo holds the clock, 10 ppm.
        state.portStates = ["SLAVE"]
        state.ingressTime = 12_000_000_000 + difference
        status = tracker.take(state, realtimeLessLocal: difference, readError: 1_000, local: 12_100_000_000)
        XCTAssertEqual(status.errorBound, MediaTime(nanoseconds: 420 + 1_000 + 1_000))
    }

    func testTracker_whenPTPIsLost_holdsOver_andWhenTheClockSteps_startsAnew() {
        var tracker = LinuxPTPTracker()
        var state = LinuxPTPState.parse(pmcOutput: Self.answer)
        state.portStates = ["SLAVE"]
        let difference = Self.ingress - 10_000_000_000
        for index in 0..<4 {
            let local: Int64 = 10_000_000_000 + Int64(index) * 500_000_000
            state.ingressTime = local + difference
            tracker.take(state, realtimeLessLocal: difference, readError: 0, local: local)
        }
        XCTAssertEqual(tracker.status.state, .locked)
        let bound = tracker.status.errorBound

        // The master falls silent: the last sync grows old.
        let stale = tracker.take(state, realtimeLessLocal: difference, readError: 0, local: 15_000_000_000)
        XCTAssertEqual(stale.state, .holdover)
        XCTAssertEqual(tracker.problem, "ptp4l's last sync is older than 3.0 s")
        XCTAssertEqual(stale.errorBound, bound + MediaTime(nanoseconds: 35_000), "3.5 s at 10 ppm more")
        // ptp4l stops answering; its port leaves SLAVE; the grandmaster goes.
        tracker.take(
            nil, failure: "pmc gave no answer", realtimeLessLocal: difference, readError: 0, local: 15_500_000_000)
        XCTAssertEqual(tracker.problem, "pmc gave no answer")
        var listening = state
        listening.portStates = ["LISTENING"]
        tracker.take(listening, realtimeLessLocal: difference, readError: 0, local: 16_000_000_000)
        XCTAssertEqual(tracker.problem, "no port follows a master (LISTENING)")
        var alone = state
        alone.gmPresent = false
        tracker.take(alone, realtimeLessLocal: difference, readError: 0, local: 16_500_000_000)
        XCTAssertEqual(tracker.problem, "ptp4l sees no grandmaster")
        XCTAssertEqual(tracker.status.state, .holdover)

        // ptp4l steps the clock by 2 ms: a new generation, counted afresh.
        let stepped = difference + 2_000_000
        state.ingressTime = 17_000_000_000 + stepped
        let after = tracker.take(state, realtimeLessLocal: stepped, readError: 0, local: 17_000_000_000)
        XCTAssertEqual(after.generation, 2)
        XCTAssertEqual(after.state, .locking)
    }
}
