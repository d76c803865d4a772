import ArgumentParser
import LockstepCLI
import LockstepTime
import XCTest

final class SimulatedClockOptionsTests: XCTestCase {
    func testParse_negativeValuesAndDefaults() throws {
        let options = try SimulatedClockOptions.parse([
            "--simulate-clock-offset", "-3600", "--simulate-clock-drift-ppm", "-100",
        ])
        XCTAssertEqual(options.offsetSeconds, -3600)
        XCTAssertEqual(options.driftPPM, -100)
        let clock = try options.makeClock()
        XCTAssertEqual(clock.offset, MediaTime(value: -3600, timescale: 1))
        XCTAssertEqual(clock.driftPPM, -100)
        XCTAssertFalse(try SimulatedClockOptions.parse([]).isSimulated)
        XCTAssertEqual(try SimulatedClockOptions.parse([]).makeClock(), .monotonic)
    }

    func testValidate_whenOutOfRange_explains() {
        XCTAssertThrowsError(try SimulatedClockOptions.parse(["--simulate-clock-drift-ppm", "20000"])) { error in
            XCTAssertTrue(
                SimulatedClockOptions.message(for: error).contains("20000"), SimulatedClockOptions.message(for: error))
        }
        XCTAssertThrowsError(try SimulatedClockOptions.parse(["--simulate-clock-offset", "nan"]))
        XCTAssertThrowsError(try SimulatedClockOptions.parse(["--simulate-clock-offset", "1e12"]))
    }

    func testApply_setsTheProcessClock() throws {
        defer { LocalClock.setProcessClock(.monotonic) }
        let clock = try SimulatedClockOptions.parse(["--simulate-clock-offset", "10"]).apply()
        XCTAssertEqual(LocalClock.process, clock)
        XCTAssertEqual(LocalClock.process.offset, MediaTime(value: 10, timescale: 1))
    }

    func testHelp_documentsBothAsTestOptions() {
        let help = SimulatedClockOptions.helpMessage()
        XCTAssertTrue(help.contains("--simulate-clock-offset <seconds>"), help)
        XCTAssertTrue(help.contains("--simulate-clock-drift-ppm <ppm>"), help)
        XCTAssertEqual(help.components(separatedBy: "Test option").count - 1, 2, help)
    }
}
