import LockstepTime
import XCTest

@testable import WallPlayer

final class SubtitleCuesTests: XCTestCase {
    private func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }

    func testText_isTheCuesCoveringTheTime_andNilBetweenThem() {
        let cues = SubtitleCues([
            .init(start: seconds(5), end: seconds(7), text: "second"),
            .init(start: seconds(1), end: seconds(3), text: "first"),
            .init(start: seconds(6), end: seconds(8), text: "overlapping"),
        ])
        XCTAssertNil(cues.text(at: .zero))
        XCTAssertEqual(cues.text(at: seconds(1)), "first")
        XCTAssertNil(cues.text(at: seconds(3)), "a cue's end is not shown")
        XCTAssertEqual(cues.text(at: MediaTime(value: 65, timescale: 10)), "second\noverlapping")
        XCTAssertEqual(cues.text(at: MediaTime(value: 75, timescale: 10)), "overlapping")
        XCTAssertNil(cues.text(at: seconds(9)))
    }

    func testPlainText_fromAnASSDialogue_dropsFieldsAndOverrides() {
        XCTAssertEqual(
            SubtitleCues.plainText(fromASSDialogue: "0,0,Default,,0,0,0,,{\\i1}Hello{\\i0}, world\\Nsecond line"),
            "Hello, world\nsecond line")
    }

    func testPlainText_escapesMarkup() {
        XCTAssertEqual(
            SubtitleCues.plainText(fromASSDialogue: "3,0,Default,,0,0,0,,<b>Tom & Jerry</b>"),
            "&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;")
    }

    func testLanguageTags_readBibliographicAndTerminologyCodes() {
        let english = MediaSelectionOption(track: TestTracks.audio(language: "eng"))
        let french = MediaSelectionOption(track: TestTracks.audio(language: "fre"))
        XCTAssertEqual(english.extendedLanguageTag, "en")
        XCTAssertEqual(french.extendedLanguageTag, "fr")
        XCTAssertTrue(french.hasLanguage("fr-CA"))
        XCTAssertTrue(french.hasLanguage("fra"))
        XCTAssertFalse(french.hasLanguage("en"))
    }
}

enum TestTracks {
    static func audio(language: String) -> AssetTrack {
        AssetTrack(
            trackID: 1, mediaType: .audio, codec: "aac", naturalSize: nil, preferredRotation: 0, nominalFrameRate: 0,
            fieldOrder: .unknown, pixelFormat: nil, bitDepth: 0,
            timeRange: MediaTimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 1)), sampleRate: 48_000,
            channelCount: 2, languageCode: language, title: nil, isDefault: false)
    }

    func testHLSMaster_subtitleRenditions_areParsed_withQuotedCommas() {
        let master = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",URI="a/en.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English, SDH",DEFAULT=YES,LANGUAGE="en",URI="subs/en.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Français",LANGUAGE="fr",URI="https://cdn.example/fr.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1000,SUBTITLES="subs"
            v.m3u8
            """
        let renditions = HLSRenditions.subtitles(
            inMaster: master, at: URL(string: "http://host/show/master.m3u8")!)
        XCTAssertEqual(renditions.map(\.name), ["English, SDH", "Français"])
        XCTAssertEqual(renditions.map(\.language), ["en", "fr"])
        XCTAssertEqual(renditions.map(\.isDefault), [true, false])
        XCTAssertEqual(
            renditions.map(\.playlist.absoluteString),
            ["http://host/show/subs/en.m3u8", "https://cdn.example/fr.m3u8"])
    }

    func testWebVTTTimestampMap_givesTheOffsetToMPEGTSTime() {
        let segment = "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:900000\n\n00:00.500 --> 00:02.000\nHi\n"
        XCTAssertEqual(HLSRenditions.timestampOffset(ofSegment: segment), MediaTime(value: 10, timescale: 1))
        let swapped = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:181000,LOCAL:00:01.000\n"
        XCTAssertEqual(
            HLSRenditions.timestampOffset(ofSegment: swapped), MediaTime(value: 181_000, timescale: 90_000) - .init(value: 1, timescale: 1))
        XCTAssertNil(HLSRenditions.timestampOffset(ofSegment: "WEBVTT\n\n00:00.500 --> 00:02.000\nHi\n"))
        XCTAssertEqual(HLSRenditions.cueTime("01:02:03.5"), MediaTime(value: 3_723_500, timescale: 1000))
        XCTAssertNil(HLSRenditions.cueTime("soon"))
    }
}
