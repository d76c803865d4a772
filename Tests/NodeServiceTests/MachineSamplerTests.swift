import Foundation
import WallProtocol
import XCTest

@testable import NodeService

/// What a node reads of its machine, from the kernel's own texts, and the limits past which it
/// names a problem.
final class MachineSamplerTests: XCTestCase {
    func testCPUTimes_countIdleAndIOWaitAsNotBusy() throws {
        let stat = """
            cpu  100 20 30 800 50 5 5 0 40 0
            cpu0 50 10 15 400 25 2 3 0 20 0
            intr 12345
            """
        let times = try XCTUnwrap(MachineSampler.cpuTimes(stat))
        XCTAssertEqual(times.total, 1010, "user to steal; guests are inside user and nice")
        XCTAssertEqual(times.busy, 160)
        XCTAssertNil(MachineSampler.cpuTimes("intr 1\n"))
    }

    func testMemory_isMemTotalAndMemAvailable_inBytes() {
        let meminfo = "MemTotal:        8000000 kB\nMemFree:   100 kB\nMemAvailable:    2000000 kB\n"
        let memory = MachineSampler.memory(meminfo)
        XCTAssertEqual(memory.total, 8_192_000_000)
        XCTAssertEqual(memory.available, 2_048_000_000)
    }

    func testTheHottestThermalZone_withItsType_andNoneOnAMachineWithout() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-thermal-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (zone, milli, type) in [("thermal_zone0", "45000", "acpitz"), ("thermal_zone1", "91500", "x86_pkg_temp")] {
            let path = folder.appendingPathComponent(zone)
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
            try "\(milli)\n".write(to: path.appendingPathComponent("temp"), atomically: true, encoding: .utf8)
            try "\(type)\n".write(to: path.appendingPathComponent("type"), atomically: true, encoding: .utf8)
        }
        let hottest = try XCTUnwrap(MachineSampler.hottest(in: folder.path))
        XCTAssertEqual(hottest.celsius, 91.5)
        XCTAssertEqual(hottest.zone, "x86_pkg_temp")
        XCTAssertNil(MachineSampler.hottest(in: folder.appendingPathComponent("none").path))
    }

    func testTheLimits_eachNamedInASentence_andAHealthyMachineHasNone() {
        var health = MachineHealth(version: "1.0", configSHA256: nil, cores: 2)
        health.cpuBusy = 0.5
        health.memoryTotalBytes = 8_000_000_000
        health.memoryAvailableBytes = 4_000_000_000
        health.temperatureCelsius = 60
        health.storeFreeBytes = 50_000_000_000
        XCTAssertEqual(health.problems, [])
        health.cpuBusy = 1
        XCTAssertEqual(health.problems, [], "a second busy is no problem")
        health.cpuBusyMinute = 0.97
        health.memoryAvailableBytes = 200_000_000
        health.temperatureCelsius = 92
        health.temperatureZone = "x86_pkg_temp"
        health.storeFreeBytes = 300_000_000
        XCTAssertEqual(
            health.problems,
            [
                "the CPU has been 97 % busy over the last minute (limit 95 %): frames may be late",
                "memory is short: 0.2 GB of 8.0 GB available",
                "the machine is hot: 92 °C in x86_pkg_temp (limit 85 °C): it may slow down",
                "the content store has 0.3 GB free (under 1.0 GB): the next push may not fit",
            ])
    }
}
