import Foundation
import LockstepFuzzing
import LockstepTime
import WallTimeline
import XCTest

/// Timelines generated with extreme and random values, decoded as a node decodes them and, when
/// accepted, run through the position and edit arithmetic at extreme host times: nothing may trap.
/// A trap ends the test process, so the test fails by crashing; the seed is printed first.
final class TimelinePropertyTests: XCTestCase {
    /// SplitMix64: small, seeded, the same sequence on every machine.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func pick<T>(_ values: [T]) -> T { values[Int(next() % UInt64(values.count))] }
        static let extremes: [Int64] = [
            0, 1, -1, .max, .min, .max - 1, 1 << 62, -(1 << 62), (1 << 62) + 1, 1 << 50, (1 << 50) + 1, 9_000_000_000,
        ]
        mutating func int64() -> Int64 {
            switch next() % 4 {
            case 0: return Int64(bitPattern: next())
            case 1: return Int64(bitPattern: next() % 100_000_000_000)
            default: return pick(Self.extremes)
            }
        }
        static let timescales: [Int32] = [1, 1000, 30_000, 90_000, 1_000_000_000, .max, 0, -1, 7]
        mutating func timescale() -> Int32 {
            next() % 5 == 0 ? Int32(truncatingIfNeeded: next() | 1) : pick(Self.timescales)
        }
        mutating func time() -> [String: Any] { ["value": int64(), "timescale": timescale()] }
        static let numerators: [Int32] = [1, -1, 2, 0, 16, 17, 256, 257, -256, .max, .min]
        static let denominators: [Int32] = [1, 2, 3, 16, 256, 257, 0, -1, .max]
        mutating func rate() -> [String: Any] {
            ["numerator": pick(Self.numerators), "denominator": pick(Self.denominators)]
        }
        mutating func repeats() -> Any {
            pick(
                [
                    ["forever": [String: Any]()], ["times": ["_0": 1]], ["times": ["_0": Int(int64() % 2_000_000)]],
                    ["times": ["_0": Int.max]], ["times": ["_0": 0]],
                ] as [Any])
        }
    }

    /// A timeline as JSON: sane values, with each one extreme or random one time in `wildness`.
    private func generatedTimeline(_ random: inout Generator) -> [String: Any] {
        let wildness = random.pick([2, 6, 30] as [UInt64])
        func wild() -> Bool { random.next() % wildness == 0 }
        func time(_ sane: Int64) -> [String: Any] {
            wild()
                ? random.time() : ["value": sane, "timescale": random.pick([1000, 1_000_000_000, 30_000] as [Int32])]
        }
        let entries = (0..<(1 + Int(random.next() % 3))).map { _ -> [String: Any] in
            let inPoint = Int64(random.next() % 5000)
            return [
                "media": wild() ? random.pick(["", "b-{id}.mp4"]) : "a.mp4", "inPoint": time(inPoint),
                "outPoint": time(inPoint + 1 + Int64(random.next() % 20_000)),
                "repeats": wild() ? random.repeats() : ["times": ["_0": 1 + Int(random.next() % 5)]],
            ]
        }
        var from = Int64(random.next() % 1_000_000_000)
        let segments = (0..<(1 + Int(random.next() % 3))).map { _ -> [String: Any] in
            from += 1 + Int64(random.next() % 100_000)
            return [
                "from": time(from), "playlist": ["entries": entries, "loops": random.next() % 2 == 0],
                "origin": [
                    "entry": wild() ? random.pick([1, -1, 5]) : 0, "pass": wild() ? random.pick([1, Int.max, -1]) : 0,
                    "offset": time(0),
                ],
                "rate": wild() ? random.rate() : ["numerator": random.pick([1, 2, -1] as [Int32]), "denominator": 1],
                "isPlaying": random.next() % 2 == 0,
                "show": random.pick([
                    ["kind": "playlist"], ["kind": "stopped"], ["kind": "testCard"],
                    ["kind": "still", "image": "x.png"],
                ]),
            ]
        }
        let version: UInt64 = wild() ? random.pick([UInt64.max, 1 << 53, (1 << 53) - 1, 0]) : 1 + random.next() % 1000
        return ["wall": "w", "version": version, "epoch": random.next(), "segments": segments]
    }

    func testGeneratedTimelines_areRefusedOrFollowedWithoutATrap() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["LOCKSTEP_PROPERTY_SEED"] ?? "") ?? 0x10C5_7E9
        let rounds = Int(ProcessInfo.processInfo.environment["LOCKSTEP_PROPERTY_ROUNDS"] ?? "") ?? 3000
        print("property test: seed \(seed), \(rounds) rounds (LOCKSTEP_PROPERTY_SEED, LOCKSTEP_PROPERTY_ROUNDS)")
        var random = Generator(state: seed)
        var accepted = 0
        for _ in 0..<rounds {
            let data = try JSONSerialization.data(withJSONObject: generatedTimeline(&random))
            guard let timeline = try? JSONDecoder().decode(Timeline.self, from: data), (try? timeline.validate()) != nil
            else { continue }
            accepted += 1
            exercise(timeline, &random)
        }
        print("property test: \(accepted) of \(rounds) generated timelines accepted and exercised")
        XCTAssertGreaterThan(accepted, rounds / 50, "the generator reaches valid timelines too")
    }

    /// Valid timelines at their limits: the extremes every bound allows.
    func testTimelinesAtEveryLimit_computeWithoutATrap() throws {
        let far = MediaTime(nanoseconds: TimelineLimits.largestHostTime)
        let longest = MediaTime(nanoseconds: TimelineLimits.longestMedia)
        var random = Generator(state: 42)
        for start in [far, -far, .zero, MediaTime(value: 1, timescale: 3)] {
            for rate in [PlaybackRate(16), PlaybackRate(1, 16), PlaybackRate(255, 256)] {
                for entry in [
                    TimelineEntry(media: "a", outPoint: longest, repeats: .forever),
                    TimelineEntry(
                        media: "a", inPoint: longest - MediaTime(nanoseconds: 1), outPoint: longest,
                        repeats: .times(TimelineLimits.mostRepeats)),
                    TimelineEntry(media: "a", outPoint: MediaTime(value: 1001, timescale: 30_000), repeats: .times(3)),
                ] {
                    let timeline = try Timeline(
                        wall: "w", version: TimelineLimits.largestVersion - 1, epoch: 1,
                        playlist: Playlist(entries: [entry, entry], loops: true), start: start, rate: rate)
                    exercise(timeline, &random)
                }
            }
        }
    }

    /// The findings of a hostile sweep, replayed: a segment at host time INT64_MAX, a version past
    /// the limit, a rate whose denominator is 0.
    func testHostileTimelines_areRefusedWithTheReason() throws {
        let base = try Timeline(
            wall: "w", epoch: 1,
            playlist: Playlist(entries: [TimelineEntry(media: "a.mp4", outPoint: MediaTime(value: 10, timescale: 1))]),
            start: MediaTime(value: 100, timescale: 1))
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(base)) as? [String: Any])
        var segments = try XCTUnwrap(object["segments"] as? [[String: Any]])
        for timescale in [1, 1_000_000_000] {
            segments[0]["from"] = ["value": Int64.max, "timescale": timescale]
            object["segments"] = segments
            let timeline = try JSONDecoder().decode(Timeline.self, from: JSONSerialization.data(withJSONObject: object))
            XCTAssertThrowsError(try timeline.validate()) { error in
                XCTAssertTrue("\(error)".contains("segments.from"), "\(error)")
            }
        }
        object = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(base)) as? [String: Any])
        object["version"] = UInt64.max
        let versioned = try JSONDecoder().decode(Timeline.self, from: JSONSerialization.data(withJSONObject: object))
        XCTAssertThrowsError(try versioned.validate()) { error in
            XCTAssertEqual("\(error)", "timeline version 18446744073709551615 is outside 1 to 9007199254740991")
        }
        var jump = base
        jump.version = 1 + (1 << 33)
        var admission = TimelineAdmission()
        XCTAssertThrowsError(
            try admission.admit(
                jump, current: base, wall: base.wall, epoch: .known(base.epoch), from: .controller, now: .zero)
        ) { error in XCTAssertTrue("\(error)".contains("jumps 8589934592 ahead"), "\(error)") }
        segments = try XCTUnwrap(object["segments"] as? [[String: Any]])
        segments[0]["rate"] = ["numerator": 1, "denominator": 0]
        object["segments"] = segments
        object["version"] = 1
        XCTAssertThrowsError(
            try JSONDecoder().decode(Timeline.self, from: JSONSerialization.data(withJSONObject: object)))
        var last = base
        last.version = TimelineLimits.largestVersion
        XCTAssertThrowsError(try last.applying(.pause, at: MediaTime(value: 200, timescale: 1))) { error in
            XCTAssertTrue("\(error)".contains("the last there is"), "\(error)")
        }
    }

    /// The node's own arithmetic on it (`TimelineExercise`, which the fuzzer runs too), at two host
    /// times of the generator's beside the extremes.
    private func exercise(_ timeline: Timeline, _ random: inout Generator) {
        TimelineExercise.exercise(
            timeline,
            at: [
                MediaTime(nanoseconds: random.int64()), MediaTime(value: random.int64(), timescale: random.timescale()),
            ])
    }
}
