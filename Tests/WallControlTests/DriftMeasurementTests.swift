import LockstepLocks
import LockstepTime
import WallAnalysis
import WallProtocol
import XCTest

@testable import WallControl

/// `wallctl drift`'s measurement in simulated time against fake nodes: the frames polled once each,
/// for the duration on its clock, and the verdict as the exit status.
final class DriftMeasurementTests: FakeWallTestCase {
    /// A clock that moves only when slept on.
    private final class SimulatedTime: Sendable {
        private let time = Mutex(MediaTime(value: 1_000, timescale: 1))
        func now() -> MediaTime { time.withLock { $0 } }
        func sleep(_ duration: Duration) async {
            let (seconds, attoseconds) = duration.components
            time.withLock { $0 = $0 + MediaTime(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000) }
            await Task.yield()
        }
    }

    private let period = MediaTime(value: 1, timescale: 30)
    private func milliseconds(_ value: Double) -> MediaTime {
        MediaTime(seconds: value / 1000, preferredTimescale: 1_000_000)
    }

    /// 10 s of frames on each of two nodes, node b presenting each `skew` after node a, both clocks
    /// within `guaranteed` whatever their paths (nil: they cannot say), 0.05 ms estimated; measured
    /// for 10 s against a 1 ms threshold.
    private func measure(skew: MediaTime, guaranteed: MediaTime?) async throws -> DriftMeasurement.Outcome {
        let start = MediaTime(value: 90_000, timescale: 1)
        for (index, node) in try await startNodes(["a", "b"]).enumerated() {
            let frames = (1...300).map { sequence in
                let itemTime = period * Int64(sequence - 1)
                return FrameRecord(
                    sequence: UInt64(sequence), presentationTimestamp: itemTime, runningTime: itemTime,
                    presentedAt: start + itemTime + (index == 0 ? .zero : skew), dueAt: start + itemTime)
            }
            node.present(frames, errorBound: milliseconds(0.05), guaranteed: guaranteed)
        }
        let wall = try self.wall()
        let time = SimulatedTime()
        let measurement = try DriftMeasurement(
            wall: wall, threshold: milliseconds(1), now: { time.now() }, sleep: { await time.sleep($0) })
        let began = LocalClock.monotonic.now()
        let outcome = try await measurement.run(for: MediaTime(value: 10, timescale: 1))
        XCTAssertLessThan((LocalClock.monotonic.now() - began).seconds, 5, "10 s measured in simulated time")
        for node in nodes { XCTAssertEqual(node.framesAsked, 40, "node \(node.id): a poll every 250 ms for 10 s") }
        return outcome
    }

    func testScreensWellWithinTheThreshold_pass() async throws {
        let outcome = try await measure(skew: milliseconds(0.2), guaranteed: milliseconds(0.1))
        XCTAssertEqual(outcome.report.verdict.outcome, .pass, outcome.report.table())
        XCTAssertEqual(outcome.exitStatus, 0)
        XCTAssertEqual(outcome.report.framesAligned, 300, "every frame once")
    }

    func testScreensApartEvenWithTheClocksErrorTakenAway_fail() async throws {
        let outcome = try await measure(skew: milliseconds(3), guaranteed: milliseconds(0.1))
        XCTAssertEqual(outcome.report.verdict.outcome, .fail, outcome.report.table())
        XCTAssertEqual(outcome.exitStatus, 1)
    }

    func testASkewTheClocksErrorCouldExplain_isUncertain() async throws {
        let outcome = try await measure(skew: milliseconds(0.8), guaranteed: milliseconds(0.2))
        XCTAssertEqual(outcome.report.verdict.outcome, .uncertain, outcome.report.table())
        XCTAssertEqual(outcome.exitStatus, 3)
    }

    func testClocksWithNoBoundThatHoldsWhateverTheirPath_cannotPass() async throws {
        let outcome = try await measure(skew: milliseconds(0.2), guaranteed: nil)
        XCTAssertEqual(outcome.report.verdict.outcome, .uncertain, outcome.report.table())
        XCTAssertTrue(outcome.report.verdict.sentence.contains("asymmetr"), outcome.report.verdict.sentence)
        XCTAssertEqual(outcome.exitStatus, 3)
    }

    func testGroundTruthForSomeNodesOnly_isRefusedNamingEveryNode() async throws {
        try await startNodes(["a", "b"])
        let wall = try self.wall()
        XCTAssertThrowsError(
            try DriftMeasurement(
                wall: wall, threshold: milliseconds(1), truthPorts: [.init(node: "a", port: 16_101)])
        ) { error in
            XCTAssertEqual("\(error)".contains("every node measured (a, b)"), true, "\(error)")
        }
        XCTAssertThrowsError(
            try DriftMeasurement(
                wall: wall, threshold: milliseconds(1), truthPorts: [.init(node: "z", port: 16_101)])
        ) { error in
            XCTAssertTrue("\(error)".contains("z"), "\(error)")
        }
    }
}
