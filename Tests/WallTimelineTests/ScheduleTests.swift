import Foundation
import LockstepFuzzing
import LockstepTime
import XCTest

@testable import WallTimeline

final class ScheduleTests: XCTestCase {
    private let paris = CivilClock(identifier: "Europe/Paris")!

    private func date(_ text: String) -> CivilDate { CivilDate(text)! }
    private func time(_ text: String) -> CivilTime { CivilTime(text)! }

    /// UTC nanoseconds of an ISO 8601 instant such as 2026-11-30T08:00:00Z.
    private func utc(_ text: String) -> MediaTime {
        let formatter = ISO8601DateFormatter()
        let seconds = Int64(formatter.date(from: text)!.timeIntervalSince1970)
        return MediaTime(nanoseconds: seconds * 1_000_000_000)
    }

    private func seconds(_ value: Double) -> MediaTime { MediaTime(nanoseconds: Int64(value * 1e9)) }

    private func playlist(_ media: String, seconds length: Int, loops: Bool = true) -> Playlist {
        Playlist(
            entries: [TimelineEntry(media: media, outPoint: MediaTime(value: Int64(length), timescale: 1))],
            loops: loops)
    }

    /// A museum: the loop (10 s) 09:00-17:00 on weekdays, the event reel (7 s) on Saturdays 10:00-18:00,
    /// black otherwise, closed on Christmas Day, a late opening on 2026-12-31 until 00:30.
    private var museum: Schedule {
        Schedule(
            timeZone: "Europe/Paris",
            playlists: ["loop": playlist("loop.mp4", seconds: 10), "reel": playlist("reel.mp4", seconds: 7)],
            dayParts: [
                DayPart(
                    playlist: "loop", days: [.monday, .tuesday, .wednesday, .thursday, .friday], from: time("09:00"),
                    to: time("17:00")),
                DayPart(playlist: "reel", days: [.saturday], from: time("10:00"), to: time("18:00")),
            ],
            exceptions: [
                ScheduleException(
                    name: "Christmas", dates: DateRange(first: date("2026-12-25"), last: date("2026-12-25"))),
                ScheduleException(
                    name: "New Year's Eve", dates: DateRange(first: date("2026-12-31"), last: date("2026-12-31")),
                    dayParts: [.init(playlist: "reel", from: time("20:00"), to: time("00:30"))]),
            ])
    }

    // MARK: Calendar

    func testCivilDates_roundTripAndKnowTheirWeekdays() {
        XCTAssertEqual(CivilDate(day: 0).description, "1970-01-01")
        XCTAssertEqual(CivilDate(day: 0).weekday, .thursday)
        XCTAssertEqual(date("2026-11-26").weekday, .thursday)
        XCTAssertEqual(date("2024-02-29").adding(days: 1).description, "2024-03-01")
        XCTAssertEqual(date("1969-12-31").day, -1)
        XCTAssertEqual(date("1969-12-31").weekday, .wednesday)
        for day in stride(from: Int64(-719_162), through: 2_932_896, by: 997) {
            let civil = CivilDate(day: day)
            XCTAssertEqual(CivilDate(civil.description)?.day, day, "\(civil)")
        }
        XCTAssertNil(CivilDate("2026-02-29"), "not a leap year")
        XCTAssertNil(CivilDate("2026-13-01"))
        XCTAssertNil(CivilDate("26-1-1"))
        XCTAssertNil(CivilTime("24:01"))
        XCTAssertNil(CivilTime("9:00"))
        XCTAssertEqual(CivilTime("24:00")?.seconds, 86_400)
        XCTAssertEqual(CivilTime("17:30:05")?.description, "17:30:05")
    }

    func testLocalTimes_inTheSkippedHour_areTheJump_andInTheRepeatedHour_theFirst() {
        // 2027-03-28: Paris goes from 02:00 CET to 03:00 CEST, at 01:00 UTC.
        let jump = utc("2027-03-28T01:00:00Z").nanoseconds! / 1_000_000_000
        XCTAssertEqual(paris.utc(date("2027-03-28"), time("02:30")), jump)
        XCTAssertEqual(paris.utc(date("2027-03-28"), time("02:00")), jump)
        XCTAssertEqual(paris.utc(date("2027-03-28"), time("03:00")), jump)
        XCTAssertEqual(paris.utc(date("2027-03-28"), time("01:59")), jump - 60)
        // 2026-10-25: from 03:00 CEST back to 02:00 CET, at 01:00 UTC; 02:30 comes twice.
        XCTAssertEqual(
            paris.utc(date("2026-10-25"), time("02:30")), utc("2026-10-25T00:30:00Z").nanoseconds! / 1_000_000_000)
        XCTAssertEqual(
            paris.utc(date("2026-10-25"), time("03:00")), utc("2026-10-25T02:00:00Z").nanoseconds! / 1_000_000_000)
        // And back: the local reading of an instant.
        let local = paris.local(utc("2026-11-30T08:00:00Z").nanoseconds! / 1_000_000_000)
        XCTAssertEqual("\(local.date) \(local.time)", "2026-11-30 09:00")
    }

    // MARK: Segments

    func testWeekdayLoop_beginsAt0900Local_andRunsOnByTheClock() throws {
        let schedule = museum
        try schedule.validate()
        // Monday 2026-11-30, 09:00 CET is 08:00 UTC.
        let opening = utc("2026-11-30T08:00:00Z")
        let at = try XCTUnwrap(schedule.segment(at: opening + seconds(1234.5)))
        XCTAssertEqual(at.from, opening)
        XCTAssertEqual(at.show, .playlist)
        XCTAssertEqual(at.playlist.entries[0].media, "loop.mp4")
        XCTAssertEqual(at.origin, PlaylistPoint(entry: 0), "the loop starts at the opening")
        XCTAssertTrue(at.isPlaying)
        // Before the opening: black since the Saturday reel ended at 18:00 (Sunday has no part).
        let before = try XCTUnwrap(schedule.segment(at: opening - seconds(1)))
        XCTAssertEqual(before.show, .black)
        XCTAssertEqual(before.from, utc("2026-11-28T17:00:00Z"))
        XCTAssertEqual(schedule.segment(after: opening - seconds(1))?.from, opening)
        XCTAssertEqual(schedule.segment(after: opening)?.from, utc("2026-11-30T16:00:00Z"))
        XCTAssertEqual(schedule.segment(after: opening)?.show, .black)
    }

    func testTimeline_ofASchedule_placesTheLoopWhereItsClockSays() throws {
        let opening = utc("2026-11-30T08:00:00Z")
        let timeline = try Timeline(wall: "w", epoch: 1, schedule: museum, now: opening + seconds(3600))
        let position = timeline.position(at: opening + seconds(3600 + 4.5))
        XCTAssertEqual(position.state, .playing)
        XCTAssertEqual(position.entry.media, "loop.mp4")
        XCTAssertEqual(position.itemTime, seconds(4.5), "360 whole loops of 10 s since 09:00, then 4.5 s")
        XCTAssertEqual(position.cycle, 360)
        // At 17:00 the screens go black, by the schedule alone.
        XCTAssertEqual(timeline.position(at: utc("2026-11-30T16:00:00Z")).state, .black)
        XCTAssertEqual(timeline.segment(after: opening + seconds(3600))?.from, utc("2026-11-30T16:00:00Z"))
    }

    func testSaturdayReel_christmasClosed_andTheLateOpening() throws {
        let changes = museum.changes(from: utc("2026-12-24T12:00:00Z"), days: 8)
        let lines = changes.map { "\($0.localDate) \($0.localTime) \($0.utcOffset) \($0.playlist ?? "\($0.show)")" }
        XCTAssertEqual(
            lines,
            [
                "2026-12-24 09:00 GMT+1 loop", "2026-12-24 17:00 GMT+1 black",
                // Friday 25th: Christmas, closed.
                "2026-12-26 10:00 GMT+1 reel", "2026-12-26 18:00 GMT+1 black",
                "2026-12-28 09:00 GMT+1 loop", "2026-12-28 17:00 GMT+1 black",
                "2026-12-29 09:00 GMT+1 loop", "2026-12-29 17:00 GMT+1 black",
                "2026-12-30 09:00 GMT+1 loop", "2026-12-30 17:00 GMT+1 black",
                // Thursday 31st: the exception's evening replaces the weekday loop, past midnight.
                "2026-12-31 20:00 GMT+1 reel", "2027-01-01 00:30 GMT+1 black",
                // New Year's Day is a Friday, and no exception says otherwise.
                "2027-01-01 09:00 GMT+1 loop",
            ].map { line in line.replacingOccurrences(of: "GMT+1", with: "UTC+01:00") })
    }

    func testAnEventInsideTheLoop_endsBackInTheLoopWhereItsClockSays() throws {
        var schedule = museum
        schedule.exceptions = [
            ScheduleException(
                name: "talk", dates: DateRange(first: date("2026-11-30"), last: date("2026-11-30")),
                dayParts: [
                    .init(playlist: "loop", from: time("09:00"), to: time("17:00")),
                    .init(playlist: "reel", from: time("12:00"), to: time("12:00:05")),
                ])
        ]
        let talkEnds = utc("2026-11-30T11:00:05Z")
        let back = try XCTUnwrap(schedule.segment(at: talkEnds))
        XCTAssertEqual(back.from, talkEnds)
        XCTAssertEqual(back.playlist.entries[0].media, "loop.mp4")
        // 3 h 5 s after 09:00: 1080 loops and 5 s.
        XCTAssertEqual(back.origin, PlaylistPoint(entry: 0, pass: 0, offset: seconds(5)))
        XCTAssertEqual(schedule.segment(at: talkEnds - seconds(1))?.playlist.entries[0].media, "reel.mp4")
    }

    func testDaylightSavingDays_partsBeginAtTheJump_andAtTheFirstOfTwo() throws {
        let schedule = Schedule(
            timeZone: "Europe/Paris", playlists: ["night": playlist("n.mp4", seconds: 60)],
            dayParts: [DayPart(playlist: "night", days: Set(Weekday.allCases), from: time("02:30"), to: time("04:00"))])
        // Spring: 02:30 does not exist on 2027-03-28; the part begins when the clocks jump.
        let spring = schedule.changes(from: utc("2027-03-27T12:00:00Z"), days: 1)
        XCTAssertEqual(spring.map(\.instant).dropFirst().first, utc("2027-03-28T01:00:00Z").nanoseconds)
        XCTAssertEqual(spring.dropFirst().first.map { "\($0.localTime) \($0.utcOffset)" }, "03:00 UTC+02:00")
        // It ends at 04:00 CEST, 02:00 UTC: one hour long that day.
        XCTAssertEqual(spring.map(\.instant).dropFirst(2).first, utc("2027-03-28T02:00:00Z").nanoseconds)
        // Autumn: 02:30 comes twice on 2026-10-25; the part begins at the first (00:30 UTC) and ends
        // at 04:00 CET (03:00 UTC): two and a half hours that day.
        let autumn = schedule.changes(from: utc("2026-10-24T12:00:00Z"), days: 1)
        XCTAssertEqual(autumn.map(\.instant).dropFirst().first, utc("2026-10-25T00:30:00Z").nanoseconds)
        XCTAssertEqual(autumn.map(\.instant).dropFirst(2).first, utc("2026-10-25T03:00:00Z").nanoseconds)
    }

    // MARK: Warnings

    func testAWellWrittenSchedule_warnsOfNothing() {
        XCTAssertEqual(museum.warnings(from: utc("2026-11-29T00:00:00Z"), days: 366), [])
    }

    func testADayPartInTheSkippedHour_isNamedWithItsDate_andTheOffsets() {
        let schedule = Schedule(
            timeZone: "Europe/Paris", playlists: ["night": playlist("n.mp4", seconds: 60)],
            dayParts: [DayPart(playlist: "night", days: [.sunday], from: time("02:15"), to: time("02:45"))])
        let warnings = schedule.warnings(from: utc("2027-03-20T00:00:00Z"), days: 14)
        XCTAssertEqual(
            warnings.map(\.description),
            [
                "day part 1 (night, 02:15-02:45) lasts no time on 2027-03-28: it lies in the hour the clocks skip "
                    + "(from UTC+01:00 to UTC+02:00)"
            ])
        // The autumn's repeated hour plays it (its first 02:15): nothing to say.
        XCTAssertEqual(schedule.warnings(from: utc("2026-10-20T00:00:00Z"), days: 14), [])
    }

    func testAnExceptionsPart_inTheSkippedHour_isNamedByItsException() {
        var schedule = museum
        schedule.exceptions.append(
            ScheduleException(
                name: "Night of museums", dates: DateRange(first: date("2027-03-28"), last: date("2027-03-28")),
                dayParts: [.init(playlist: "reel", from: time("02:00"), to: time("03:00"))]))
        XCTAssertEqual(
            schedule.warnings(from: utc("2027-03-01T00:00:00Z"), days: 60).map(\.part),
            ["exception 3 (Night of museums), its day part 1 (reel, 02:00-03:00)"])
    }

    func testADayPartCoveredThroughout_isNeverSeen_andTheOneOverItIsNamed() {
        let schedule = Schedule(
            timeZone: "Europe/Paris",
            playlists: ["news": playlist("news.mp4", seconds: 10), "ads": playlist("ads.mp4", seconds: 10)],
            dayParts: [
                DayPart(playlist: "news", days: [.monday], from: time("09:00"), to: time("12:00")),
                DayPart(playlist: "ads", days: [.monday], from: time("09:00"), to: time("17:00")),
                // Begins inside "ads" and ends after it: seen from 10:00.
                DayPart(playlist: "news", days: [.monday], from: time("10:00"), to: time("18:00")),
            ])
        let warnings = schedule.warnings(from: utc("2026-11-29T00:00:00Z"), days: 14)
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertEqual(warnings.first?.part, "day part 1 (news, 09:00-12:00)")
        XCTAssertTrue(
            warnings.first?.why.hasPrefix("is never seen on 2026-11-30 and 2026-12-07: the day part of \"ads\"")
                == true,
            "\(warnings)")
    }

    func testDatesOnNoneOfItsDays_neverPlay_andDatesOver_playNoMore() {
        var schedule = museum
        schedule.dayParts.append(
            DayPart(
                playlist: "reel", days: [.saturday], from: time("10:00"), to: time("11:00"),
                dates: DateRange(first: date("2026-12-01"), last: date("2026-12-04"))))
        schedule.dayParts.append(
            DayPart(
                playlist: "reel", days: [.sunday], from: time("10:00"), to: time("11:00"),
                dates: DateRange(first: date("2026-06-01"), last: date("2026-06-30"))))
        XCTAssertEqual(
            schedule.warnings(from: utc("2026-11-29T00:00:00Z"), days: 30).map(\.description),
            [
                "day part 3 (reel, 10:00-11:00) never plays: none of its dates (2026-12-01 to 2026-12-04) falls on its days (sat)",
                "day part 4 (reel, 10:00-11:00) plays no more: its dates ended on 2026-06-30",
            ])
    }

    func testAnOperatorsEdit_holdsUntilTheScheduleChangesNext() throws {
        let opening = utc("2026-11-30T08:00:00Z")
        var timeline = try Timeline(wall: "w", epoch: 1, schedule: museum, now: opening + seconds(60))
        timeline = try timeline.applying(.black, at: opening + seconds(120))
        XCTAssertEqual(timeline.position(at: opening + seconds(3600)).state, .black, "the operator's black holds")
        XCTAssertEqual(timeline.segment(after: opening + seconds(3600))?.from, utc("2026-11-30T16:00:00Z"))
        timeline = try timeline.applying(.resume, at: opening + seconds(7200))
        let resumed = timeline.position(at: opening + seconds(7200))
        XCTAssertEqual(resumed.state, .playing)
        // The next morning the schedule plays the loop from 09:00 again, whatever the operator did.
        let tuesday = timeline.position(at: utc("2026-12-01T08:00:03Z"))
        XCTAssertEqual(tuesday.state, .playing)
        XCTAssertEqual(tuesday.itemTime, seconds(3))
    }

    func testScheduledTimeline_survivesJSON_andRefusesToMoveOffRealTime() throws {
        let timeline = try Timeline(wall: "w", epoch: 1, schedule: museum, now: utc("2026-11-30T08:30:00Z"))
        let decoded = try JSONDecoder().decode(Timeline.self, from: JSONEncoder().encode(timeline))
        XCTAssertEqual(decoded, timeline)
        try decoded.validate()
        XCTAssertThrowsError(try timeline.reanchored(onto: 2)) { error in
            XCTAssertTrue("\(error)".contains("real time"), "\(error)")
        }
    }

    func testSchedulesThatCannotBePlayed_areRefusedSayingWhy() {
        func refusal(_ change: (inout Schedule) -> Void) -> String {
            var schedule = museum
            change(&schedule)
            do {
                try schedule.validate()
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertTrue(refusal { $0.timeZone = "Mars/Olympus_Mons" }.contains("Mars/Olympus_Mons"))
        XCTAssertTrue(refusal { $0.dayParts[0].playlist = "missing" }.contains("\"missing\""))
        XCTAssertTrue(refusal { $0.dayParts[0].to = $0.dayParts[0].from }.contains("begins and ends at 09:00"))
        XCTAssertTrue(refusal { $0.dayParts[0].days = [] }.contains("names no days"))
        XCTAssertTrue(refusal { $0.outside = .testCard }.contains("black, stopped or a still"))
        XCTAssertTrue(refusal { $0.playlists["loop"]?.entries = [] }.contains("playlist \"loop\""))
        XCTAssertEqual(refusal { _ in }, "accepted")
    }

    /// The fuzzer's scheduled timeline is one a node accepts, and nothing a node computes from it
    /// traps, at extreme host times too (a schedule is worked out within the timeline's host times).
    func testTheFuzzCorpusSchedule_isValid_andSurvivesEveryHostTime() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzCorpus/timeline-schedule")
        let timeline = try JSONDecoder().decode(Timeline.self, from: try Data(contentsOf: file).dropFirst())
        try timeline.validate()
        XCTAssertNotNil(timeline.schedule)
        XCTAssertEqual(timeline.segments[0].playlist.entries[0].content?.size, 3)
        TimelineExercise.exercise(timeline, at: [utc("2262-04-11T23:47:16Z"), utc("1677-09-21T00:12:44Z")])
        let far = timeline.schedule?.changes(from: MediaTime(nanoseconds: .max), days: 3660) ?? []
        XCTAssertLessThanOrEqual(far.count, 1, "only the change in force there: nothing is scheduled beyond")
        XCTAssertTrue(far.allSatisfy { $0.instant <= TimelineLimits.largestHostTime })
    }

    func testAScheduleWithNoDayParts_showsItsOutsideShow() throws {
        var schedule = museum
        schedule.dayParts = []
        schedule.exceptions = []
        schedule.outside = .still(image: "closed.png")
        XCTAssertNil(schedule.segment(at: utc("2026-11-30T08:00:00Z")))
        let timeline = try Timeline(wall: "w", epoch: 1, schedule: schedule, now: utc("2026-11-30T08:00:00Z"))
        XCTAssertEqual(timeline.position(at: utc("2026-12-30T08:00:00Z")).state, .still)
    }

    /// Two nodes' copies of one scheduled timeline encode alike: a day part's days in the week's
    /// order, not in a set's hash order, which differs from one process to the next (every node
    /// found a peer's copy newer than its own, by the tie-break on the encoding, about every other
    /// time it asked, and took it again every 5 s for good).
    func testADayPartsDays_encodeInTheWeeksOrder_andDecodeAsASet() throws {
        let part = DayPart(
            playlist: "reel", days: Set(Weekday.allCases.reversed()), from: time("10:00"), to: time("18:00"))
        let data = try JSONEncoder().encode(part)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["days"] as? [String], ["mon", "tue", "wed", "thu", "fri", "sat", "sun"])
        XCTAssertEqual(try JSONDecoder().decode(DayPart.self, from: data), part)
        let weekend = DayPart(playlist: "reel", days: [.sunday, .saturday], from: time("10:00"), to: time("18:00"))
        let shuffled = Data(#"{"playlist":"reel","days":["sun","sat"],"from":"10:00","to":"18:00"}"#.utf8)
        XCTAssertEqual(try JSONDecoder().decode(DayPart.self, from: shuffled), weekend)
        let encoded = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(weekend)) as? [String: Any])
        XCTAssertEqual(encoded["days"] as? [String], ["sat", "sun"])
    }
}
