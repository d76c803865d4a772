import LockstepTime
import WallProtocol
import WallTimeline
import XCTest

final class ScheduleConfigTests: XCTestCase {
    private func config(_ schedule: String, autoplay: Bool = false) -> String {
        """
        name: museum
        clock: 127.0.0.1:5637
        media: media/loop.mp4
        canvas: {width: 1920, height: 1080}
        \(autoplay ? "autoplay: true" : "")
        schedule:
        \(schedule.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        nodes:
          - id: left
            control: 127.0.0.1:7701
            tile: {x: 0, y: 0, width: 1920, height: 1080}
        """
    }

    private let museum = """
        time-zone: Europe/Paris
        outside: {still: closed.png}
        playlists:
          museum: [{media: media/loop.mp4, out: 10s}]
          event: {loop: false, entries: [{media: media/reel.mp4, out: 7s, repeat: 2}]}
        day-parts:
          - {playlist: museum, days: weekdays, from: "09:00", to: "17:00"}
          - {playlist: event, days: [sat, Sunday], from: "10:00", to: "18:00", dates: {from: 2026-12-01, to: 2026-12-31}}
        exceptions:
          - {name: Christmas, dates: 2026-12-25}
          - {name: New Year's Eve, dates: 2026-12-31, day-parts: [{playlist: event, from: "20:00", to: "00:30"}]}
        """

    func testParse_readsTheSchedule() throws {
        let wall = try WallConfig.parse(config(museum), file: "wall.yaml", baseDirectory: "/srv/wall")
        let schedule = try XCTUnwrap(wall.schedule)
        XCTAssertEqual(schedule.timeZone, "Europe/Paris")
        XCTAssertEqual(schedule.outside, .still(image: "/srv/wall/closed.png"))
        XCTAssertEqual(schedule.media, ["/srv/wall/media/loop.mp4", "/srv/wall/media/reel.mp4"])
        XCTAssertEqual(schedule.dayParts.count, 2)
        XCTAssertEqual(schedule.dayParts[0].days, [.monday, .tuesday, .wednesday, .thursday, .friday])
        XCTAssertEqual(schedule.dayParts[1].days, [.saturday, .sunday])
        XCTAssertEqual(
            schedule.dayParts[1].dates, DateRange(first: CivilDate("2026-12-01")!, last: CivilDate("2026-12-31")!))
        XCTAssertEqual(schedule.exceptions.map(\.name), ["Christmas", "New Year's Eve"])
        XCTAssertEqual(schedule.exceptions[0].dayParts, [])
        XCTAssertEqual(schedule.exceptions[1].dayParts.first?.to, CivilTime("00:30"))
        let resolved = try XCTUnwrap(schedule.schedule())
        XCTAssertEqual(resolved.playlists["event"]?.loops, false)
        XCTAssertEqual(resolved.playlists["event"]?.entries.first?.repeats, .times(2))
        try resolved.validate()
        // Files the wall distributes are named by content: one ID for all, or each node's own.
        let shared = try XCTUnwrap(ContentID(sha256: String(repeating: "a", count: 64), size: 1))
        let other = try XCTUnwrap(ContentID(sha256: String(repeating: "b", count: 64), size: 2))
        let named = try XCTUnwrap(
            schedule.schedule(distributed: [
                "/srv/wall/media/loop.mp4": ["left": shared, "right": shared],
                "/srv/wall/media/reel.mp4": ["left": shared, "right": other],
            ]))
        XCTAssertEqual(named.playlists["museum"]?.entries.first?.content, shared)
        XCTAssertEqual(named.playlists["event"]?.entries.first?.tileContent, ["left": shared, "right": other])
        XCTAssertEqual(named.playlists["event"]?.entries.first?.content(forNode: "right"), other)
    }

    func testAutoplay_needsAnOutPointOnEveryScheduledEntry() throws {
        XCTAssertNoThrow(try WallConfig.parse(config(museum, autoplay: true), file: "wall.yaml"))
        let open = museum.replacingOccurrences(of: "media/loop.mp4, out: 10s", with: "media/loop.mp4")
        XCTAssertThrowsError(try WallConfig.parse(config(open, autoplay: true), file: "wall.yaml")) { error in
            XCTAssertTrue("\(error)".contains("schedule's playlists"), "\(error)")
        }
    }

    func testTimeZones_areTzNames_includingTheEtcOffsets() throws {
        for zone in [
            "Europe/Berlin", "America/New_York", "UTC", "Etc/UTC", "Etc/GMT-2", "Etc/GMT+5", "CET", "US/Eastern",
        ] {
            let wall = try WallConfig.parse(
                config(museum.replacingOccurrences(of: "Europe/Paris", with: zone)), file: "wall.yaml")
            XCTAssertEqual(wall.schedule?.timeZone, zone)
        }
    }

    func testMistakes_areNamedWithTheirKeyAndLine() {
        let cases: [(String, String, String)] = [
            ("Europe/Paris", "Mars/Olympus", "schedule.time-zone"),
            ("playlist: museum, days: weekdays", "playlist: musuem, days: weekdays", "schedule.day-parts[0].playlist"),
            ("days: weekdays", "days: [mon, funday]", "schedule.day-parts[0].days[1]"),
            ("from: \"09:00\"", "from: \"9am\"", "schedule.day-parts[0].from"),
            ("from: \"09:00\", to: \"17:00\"", "from: \"09:00\", to: \"09:00\"", "begins and ends at 09:00"),
            ("dates: 2026-12-25", "dates: 2026-02-30", "schedule.exceptions[0].dates"),
            ("to: 2026-12-31}", "to: 2026-11-30}", "ends (2026-11-30) before it begins"),
            ("outside: {still: closed.png}", "outside: grey", "schedule.outside"),
            ("time-zone: Europe/Paris", "time-zone: Europe/Paris\nholidays: []", "schedule.holidays"),
            // Fixed offsets Foundation takes: a place's winter offset so written loses its summer.
            ("Europe/Paris", "GMT+1", "\"GMT+1\" is a fixed offset, not a place"),
            ("Europe/Paris", "UTC+2", "a fixed offset of UTC+02:00 is Etc/GMT-2"),
            ("Europe/Paris", "UTC-5", "a fixed offset of UTC-05:00 is Etc/GMT+5"),
        ]
        for (from, to, expected) in cases {
            let text = config(museum.replacingOccurrences(of: from, with: to))
            XCTAssertThrowsError(try WallConfig.parse(text, file: "wall.yaml"), "\(to)") { error in
                XCTAssertTrue("\(error)".contains(expected), "\(to): \(error)")
                XCTAssertTrue("\(error)".contains("wall.yaml"), "\(to): \(error)")
            }
        }
    }
}
