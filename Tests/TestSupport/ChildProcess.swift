import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A program run by a test, its standard output read line by line and its standard error kept.
public final class ChildProcess {
    public let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let input = Pipe()
    private var buffered = Data()

    /// Starts `executable` with `arguments`; its standard input is a pipe that closes when this object
    /// goes, and the child is terminated then if it still runs, so it cannot outlive the test.
    /// `environment` is added to this process's environment.
    /// With `underJournald`, `JOURNAL_STREAM` names the standard-error pipe, as systemd names a
    /// unit's journal stream.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], underJournald: Bool = false
    ) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = environment
        if underJournald {
            var information = stat()
            fstat(errors.fileHandleForWriting.fileDescriptor, &information)
            environment["JOURNAL_STREAM"] = "\(information.st_dev):\(information.st_ino)"
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = output
        process.standardInput = input
        process.standardError = errors
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Writes `line` and a newline to the child's standard input: a test's side of a dialogue with
    /// a script that asks it to act (kill a node, say) and waits for the answer.
    public func write(line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The child's user and system CPU time so far, in clock ticks (1/100 s).
    public func cpuTicks() throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return Int(fields[11])! + Int(fields[12])!
    }

    /// Sends `signal` (SIGINT, say) to the child.
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the child to exit and returns its status, the rest of its output and its errors.
    public func finish() -> (status: Int32, output: String, errors: String) {
        var rest: [String] = []
        while let line = readLine() { rest.append(line) }
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, rest.joined(separator: "\n"), errorText)
    }

    /// nil while the child runs; once it has exited, its status, output and errors.
    public func finishIfExited() -> (status: Int32, output: String, errors: String)? {
        process.isRunning ? nil : finish()
    }

    /// Runs `executable` to completion.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, output: String, errors: String
    ) {
        try ChildProcess(executable, arguments, environment: environment).finish()
    }

    /// The next line of output, or nil at its end.
    public func readLine() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                guard !buffered.isEmpty else { return nil }
                defer { buffered.removeAll() }
                return String(decoding: buffered, as: UTF8.self)
            }
            buffered.append(chunk)
        }
    }

    /// The next line, parsed as a JSON object.
    public func readJSON() -> [String: Any]? {
        guard let line = readLine() else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// Whether `/usr/bin/python3` has GStreamer's introspection bindings with GstNet.
    public static var hasGStreamerPython: Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        probe.arguments = ["-c", "import gi; gi.require_version('GstNet', '1.0'); from gi.repository import GstNet"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    /// The checkout this test support was built from.
    public static var checkout: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// scripts/gst-netclock.py in this checkout.
    public static var gstNetClockScript: String {
        checkout.appendingPathComponent("scripts/gst-netclock.py").path
    }

    /// An executable product built alongside the tests (`wallctl`).
    public static func product(_ name: String) -> String {
        let tests = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = tests.deletingLastPathComponent()
        // On Linux the runner is .build/<triple>/<configuration>/<Package>.xctest; elsewhere a bundle.
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path),
            directory.pathComponents.count > 1
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name).path
    }
}

extension ChildProcess {
    /// Seconds until the child exits, polled, or nil if it still runs after `limit`.
    public func secondsUntilExit(limit: Double) async -> Double? {
        let started = Date()
        while process.isRunning {
            if Date().timeIntervalSince(started) > limit { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return Date().timeIntervalSince(started)
    }
}
