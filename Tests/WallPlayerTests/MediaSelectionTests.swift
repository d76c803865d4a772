import CGStreamer
import Foundation
import LockstepTime
import TestSupport
@testable import WallPlayer
import XCTest

/// Media selection on media with two audio languages (English 440 Hz, French 1000 Hz) and two
/// subtitle tracks, checked in what the pipeline decodes: the tone that reaches the audio sink and
/// the white subtitle pixels in the video frame.
final class MediaSelectionTests: XCTestCase {
    func testAsset_hasAudibleAndLegibleGroups_withNamesAndLanguages() async throws {
        let asset = URLAsset(url: try TestMedia.languages())
        let characteristics = try await asset.availableMediaCharacteristicsWithMediaSelectionOptions
        XCTAssertEqual(characteristics, [.audible, .legible])
        let audible = try await XCTUnwrapAsync(try await asset.mediaSelectionGroup(forMediaCharacteristic: .audible))
        XCTAssertEqual(audible.options.map(\.displayName), ["English", "Français"])
        XCTAssertEqual(audible.options.map(\.languageCode), ["eng", "fra"])
        XCTAssertEqual(audible.options.map(\.extendedLanguageTag), ["en", "fr"])
        XCTAssertFalse(audible.allowsEmptySelection)
        XCTAssertEqual(audible.defaultOption?.languageCode, "eng")
        let legible = try await XCTUnwrapAsync(try await asset.mediaSelectionGroup(forMediaCharacteristic: .legible))
        XCTAssertEqual(legible.options.map(\.extendedLanguageTag), ["en", "fr"])
        XCTAssertEqual(legible.options.map(\.displayName), ["English", "French"])
        XCTAssertTrue(legible.options.allSatisfy(\.isPlayable))
        XCTAssertTrue(legible.allowsEmptySelection)
        XCTAssertNil(legible.defaultOption, "subtitles are off unless chosen")
        XCTAssertEqual(
            MediaSelectionGroup.mediaSelectionOptions(
                from: legible.options, filteredAndSortedAccordingToPreferredLanguages: ["fr-CA", "en"]
            ).map(\.languageCode), ["fra", "eng"])
    }

    func testAsset_withoutSubtitles_hasOnlyAnAudibleGroup() async throws {
        let asset = URLAsset(url: try TestMedia.audioVideo(seconds: 1))
        let characteristics = try await asset.availableMediaCharacteristicsWithMediaSelectionOptions
        XCTAssertEqual(characteristics, [.audible])
        let legible = try await asset.mediaSelectionGroup(forMediaCharacteristic: .legible)
        XCTAssertNil(legible)
    }

    func testAlternatePictures_areAVisualGroup_andTheChosenOneIsShown() async throws {
        let asset = URLAsset(url: try TestMedia.twoAngles())
        let characteristics = try await asset.availableMediaCharacteristicsWithMediaSelectionOptions
        XCTAssertEqual(characteristics, [.visual])
        let visual = try await XCTUnwrapAsync(try await asset.mediaSelectionGroup(forMediaCharacteristic: .visual))
        // An MP4 keeps no title for a video track: each is named by its language.
        XCTAssertEqual(visual.options.map(\.displayName), ["English", "American Sign Language"])
        XCTAssertEqual(visual.options.map(\.languageCode), ["eng", "ase"])
        XCTAssertTrue(visual.options.allSatisfy(\.isPlayable))
        XCTAssertFalse(visual.allowsEmptySelection)
        XCTAssertEqual(visual.defaultOption?.displayName, "English")
        let single = URLAsset(url: try TestMedia.frameCode(seconds: 4))
        let none = try await single.mediaSelectionGroup(forMediaCharacteristic: .visual)
        XCTAssertNil(none, "one picture is no choice")

        // The default picture plays; choosing the other shows it, from where the item is.
        let player = try await Player.ready(try TestMedia.twoAngles())
        let item = try XCTUnwrap(player.currentItem)
        XCTAssertEqual(item.currentMediaSelection.selectedMediaOption(in: visual)?.displayName, "English")
        XCTAssertEqual(try player.shownFrame(), 0)
        item.select(visual.options[1], in: visual)
        XCTAssertEqual(item.currentMediaSelection.selectedMediaOption(in: visual)?.displayName, "American Sign Language")
        let sought = await player.seek(to: frames(45), toleranceBefore: .zero, toleranceAfter: .zero)
        XCTAssertTrue(sought)
        XCTAssertEqual(try player.shownFrame(), 345, "the signed picture's frame at 1.5 s")
        // Criteria choose a picture by language, as they choose a sound.
        let signed = Player(
            playerItem: nil, video: Headless.video, audioSinkDescription: nil)
        signed.setMediaSelectionCriteria(
            PlayerMediaSelectionCriteria(preferredLanguages: ["ase"]), forMediaCharacteristic: .visual)
        let chosen = PlayerItem(url: try TestMedia.twoAngles())
        signed.replaceCurrentItem(with: chosen)
        try await chosen.waitUntilReady()
        XCTAssertEqual(chosen.currentMediaSelection.selectedMediaOption(in: visual)?.displayName, "American Sign Language")
        XCTAssertEqual(try signed.shownFrame(), 300)
    }

    func testSelectingAnAudioOption_whilePlaying_switchesTheLanguageHeard() async throws {
        let capture = try AudioCapture()
        let item = PlayerItem(url: try TestMedia.languages())
        let player = Player(playerItem: item, video: Headless.video, audioSinkDescription: capture.sinkDescription)
        player.setMediaSelectionCriteria(
            PlayerMediaSelectionCriteria(preferredLanguages: ["en"]), forMediaCharacteristic: .audible)
        try await item.waitUntilReady()
        let audible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .audible))
        XCTAssertEqual(item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "eng")
        player.play()
        try await player.waitUntilTime(MediaTime(value: 3, timescale: 2))
        let switchedAt = capture.samples.count
        item.select(audible.options[1], in: audible)
        XCTAssertEqual(item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "fra")
        try await player.waitUntilTime(MediaTime(value: 4, timescale: 1))
        player.pause()
        let samples = capture.samples
        let before = AudioCapture.frequency(of: samples[max(0, switchedAt - 24_000)..<switchedAt])
        let after = AudioCapture.frequency(of: samples[(samples.count - 24_000)...])
        XCTAssertEqual(before, 440, accuracy: 30, "English before the switch")
        XCTAssertEqual(after, 1000, accuracy: 50, "French after it")
    }

    func testHLSAlternateAudio_isChosenAndSwitched_byLanguage() async throws {
        // Debian's GStreamer 1.22 hlsdemux2 races its stream selection against the player's first
        // seek: on 2026-11-28 this test hung at the seek (1 of 3 runs alone, 1 of 4 with a debug log:
        // the log ends at "Received seek event") or aborted the whole test process
        // (downloadrequest.c:245 download_request_set_uri: assertion failed: request->in_use == FALSE,
        // 2 fresh-clone CI runs of 3). A crash in the demuxer, not a wrong choice by the player: it is
        // issue 46's to cure; until then it runs only when asked for.
        try XCTSkipUnless(
            ProcessInfo.processInfo.environment["LOCKSTEP_HLSDEMUX2_RACE"] != nil,
            "hlsdemux2 (GStreamer 1.22) may abort the process here: set LOCKSTEP_HLSDEMUX2_RACE=1 to run it")
        let server = try HTTPFileServer(root: try TestMedia.servedOverHTTP())
        defer { server.stop() }
        let capture = try AudioCapture()
        let item = PlayerItem(url: server.url("renditions/master.m3u8"))
        let (player, audible) = try await loadPreferringFrench(item, audioSink: capture.sinkDescription)
        XCTAssertEqual(audible.options.map(\.languageCode), ["eng", "fra"])
        XCTAssertEqual(item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "fra")
        player.play()
        try await player.waitUntilTime(MediaTime(value: 3, timescale: 2))
        // The source downloads only the rendition it plays: French, not its default English.
        XCTAssertEqual(AudioCapture.frequency(of: capture.samples.suffix(24_000)[...]), 1000, accuracy: 50)
        item.select(audible.options[0], in: audible)
        try await player.waitUntilTime(MediaTime(value: 7, timescale: 2))
        player.pause()
        XCTAssertEqual(AudioCapture.frequency(of: capture.samples.suffix(12_000)[...]), 440, accuracy: 30)
    }

    func testCriteria_notAppliedAutomatically_leaveTheDefault_andAHandChoiceStays() async throws {
        let item = PlayerItem(url: try TestMedia.languages())
        let (player, audible) = try await loadPreferringFrench(item, automatically: false)
        XCTAssertEqual(
            item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "eng",
            "criteria not applied: the container's default")
        // Applied again, the criteria choose; a choice made on the item afterwards is kept even
        // when the criteria change.
        player.appliesMediaSelectionCriteriaAutomatically = true
        player.setMediaSelectionCriteria(
            PlayerMediaSelectionCriteria(preferredLanguages: ["fr"]), forMediaCharacteristic: .audible)
        try await waitFor("French chosen by the criteria") {
            item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode == "fra"
        }
        item.select(audible.options[0], in: audible)
        player.setMediaSelectionCriteria(
            PlayerMediaSelectionCriteria(preferredLanguages: ["fr", "de"]), forMediaCharacteristic: .audible)
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertEqual(item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "eng")
    }

    func testWithoutCriteria_audioFollowsTheEnvironmentsLanguage() async throws {
        let saved = getenv("LANGUAGE").map { String(cString: $0) }
        setenv("LANGUAGE", "fr_FR.UTF-8:en", 1)
        defer {
            if let saved { setenv("LANGUAGE", saved, 1) } else { unsetenv("LANGUAGE") }
        }
        let item = PlayerItem(url: try TestMedia.languages())
        let player = Player(playerItem: item, video: Headless.video, audioSinkDescription: nil)
        try await item.waitUntilReady()
        let audible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .audible))
        XCTAssertEqual(
            item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "fra",
            "LANGUAGE=fr_FR.UTF-8:en chooses French over the container's default English")
        XCTAssertNil(player.mediaSelectionCriteria(forMediaCharacteristic: .audible), "none set")
    }

    func testSubtitles_turnOnAndOff_inThePicture_matroskaASS() async throws {
        try await checkSubtitlesTurnOnAndOff(try TestMedia.languages(fileExtension: "ass.mkv"))
    }

    /// A player whose audio criteria prefer French (applied automatically or not), with `item`
    /// loaded and ready, and the item's audible group.
    private func loadPreferringFrench(
        _ item: PlayerItem, audioSink: String? = nil, automatically: Bool = true
    ) async throws -> (Player, MediaSelectionGroup) {
        let player = Player(playerItem: nil, video: Headless.video, audioSinkDescription: audioSink)
        player.appliesMediaSelectionCriteriaAutomatically = automatically
        player.setMediaSelectionCriteria(
            PlayerMediaSelectionCriteria(preferredLanguages: ["fr"]), forMediaCharacteristic: .audible)
        player.replaceCurrentItem(with: item)
        try await item.waitUntilReady()
        let audible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .audible))
        return (player, audible)
    }

    private func waitFor(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
        try await withTimeout(5, what) {
            while !condition() { try await Task.sleep(for: .milliseconds(20)) }
        }
    }

    func testCriteria_chooseTheLanguagesAnItemStartsWith() async throws {
        let capture = try AudioCapture()
        let item = PlayerItem(url: try TestMedia.languages())
        let player = Player(playerItem: nil, video: Headless.video, audioSinkDescription: capture.sinkDescription)
        player.setMediaSelectionCriteria(
            PlayerMediaSelectionCriteria(preferredLanguages: ["de", "fr"]), forMediaCharacteristic: .audible)
        player.setMediaSelectionCriteria(
            PlayerMediaSelectionCriteria(preferredLanguages: ["fra"]), forMediaCharacteristic: .legible)
        player.replaceCurrentItem(with: item)
        try await item.waitUntilReady()
        let selection = item.currentMediaSelection
        let audible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .audible))
        let legible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .legible))
        XCTAssertEqual(selection.selectedMediaOption(in: audible)?.languageCode, "fra")
        XCTAssertEqual(selection.selectedMediaOption(in: legible)?.languageCode, "fra")
        player.play()
        try await player.waitUntilTime(MediaTime(value: 2, timescale: 1))
        player.pause()
        XCTAssertEqual(AudioCapture.frequency(of: capture.samples.suffix(24_000)[...]), 1000, accuracy: 50)
        XCTAssertGreaterThan(try subtitlePixels(player), 50, "French subtitles shown")
    }

    func testSubtitles_turnOnAndOff_inThePicture_matroskaSubRip() async throws {
        try await checkSubtitlesTurnOnAndOff(try TestMedia.languages(fileExtension: "mkv"))
    }

    func testSubtitles_turnOnAndOff_inThePicture_mp4MovText() async throws {
        try await checkSubtitlesTurnOnAndOff(try TestMedia.languages(fileExtension: "mp4"))
    }

    func testSubtitles_turnOnAndOff_inThePicture_hlsWebVTTRendition() async throws {
        let server = try HTTPFileServer(root: try TestMedia.servedOverHTTP())
        defer { server.stop() }
        let url = server.url("renditions/master.m3u8")
        // libavformat's HLS demuxer does not read subtitle renditions: the master playlist's are.
        let legible = try await XCTUnwrapAsync(
            try await URLAsset(url: url).mediaSelectionGroup(forMediaCharacteristic: .legible))
        XCTAssertEqual(legible.options.map(\.displayName), ["English"])
        XCTAssertEqual(legible.options.map(\.extendedLanguageTag), ["en"])
        try await checkSubtitlesTurnOnAndOff(url)
        XCTAssertTrue(server.requests.contains("/renditions/stream_0_vtt.m3u8"), "the rendition's playlist was read")
    }

    func testSubtitles_chosenAgainWhileBeingRead_areReadOnce_andShown() async throws {
        let item = PlayerItem(url: try TestMedia.languages(fileExtension: "mkv"))
        let player = Player(playerItem: item, video: Headless.video, audioSinkDescription: nil)
        try await item.waitUntilReady()
        let legible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .legible))
        player.play()
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 2))
        // A read claimed and not yet done, as while a first choice's thread reads the file.
        XCTAssertTrue(item.asset.claimSubtitleRead(0))
        XCTAssertFalse(item.asset.claimSubtitleRead(0), "a second reader waits for the first")
        item.select(legible.options[0], in: legible)
        item.select(nil, in: legible)
        item.select(legible.options[0], in: legible)
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(try subtitlePixels(player), 0, "not shown before the claimed read ends")
        XCTAssertNil(item.asset.subtitleCues.withLock { $0[0] }, "no second read of the file")
        // The first read ends: its cues are shown, as they are still chosen.
        let cues = item.asset.cues(ofSubtitle: 0)
        XCTAssertNotNil(try? cues.get())
        XCTAssertTrue(item.asset.claimSubtitleRead(0), "the read is over")
        _ = item.asset.subtitleReads.withLock { $0.remove(0) }
        item.select(nil, in: legible)
        item.select(legible.options[0], in: legible)
        let shown = try await eventually("subtitles shown from the cues read once") { try subtitlePixels(player) > 50 }
        XCTAssertTrue(shown)
    }

    func testTrackIsEnabled_choosesThatTrack_notItsWholeKind() async throws {
        let item = PlayerItem(url: try TestMedia.languages())
        let audio = item.tracks.filter { $0.assetTrack.mediaType == .audio }
        XCTAssertEqual(audio.map(\.isEnabled), [true, false], "the default audio track plays, the other waits")
        XCTAssertEqual(
            item.tracks.filter { $0.assetTrack.mediaType == .subtitle }.map(\.isEnabled), [false, false],
            "subtitles are off")
        audio[0].isEnabled = false
        audio[1].isEnabled = true
        let audible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .audible))
        XCTAssertEqual(item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "fra")
        item.select(nil, in: audible)
        XCTAssertEqual(
            item.currentMediaSelection.selectedMediaOption(in: audible)?.languageCode, "fra",
            "audio cannot be turned off through its group")
    }

    func testCriteria_fromTheEnvironment_followPOSIXLocaleVariables() {
        XCTAssertEqual(
            PlayerMediaSelectionCriteria.fromEnvironment(["LANGUAGE": "fr_CA:en", "LANG": "de_DE.UTF-8"])?
                .preferredLanguages, ["fr-CA", "en"])
        XCTAssertEqual(
            PlayerMediaSelectionCriteria.fromEnvironment(["LANG": "de_DE.UTF-8@euro"])?.preferredLanguages, ["de-DE"])
        XCTAssertNil(PlayerMediaSelectionCriteria.fromEnvironment(["LANG": "C.UTF-8"]))
        XCTAssertNil(PlayerMediaSelectionCriteria.fromEnvironment([:]))
    }

    // MARK: Helpers

    private func checkSubtitlesTurnOnAndOff(_ url: URL) async throws {
        let item = PlayerItem(url: url)
        let player = Player(playerItem: item, video: Headless.video, audioSinkDescription: nil)
        try await item.waitUntilReady()
        let legible = try await XCTUnwrapAsync(
            try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .legible))
        XCTAssertNil(item.currentMediaSelection.selectedMediaOption(in: legible))
        player.play()
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 2))
        XCTAssertEqual(try subtitlePixels(player), 0, "no subtitles before any are chosen")
        item.select(legible.options[0], in: legible)
        let shown = try await eventually("subtitles shown") { try subtitlePixels(player) > 50 }
        XCTAssertTrue(shown)
        item.select(nil, in: legible)
        XCTAssertNil(item.currentMediaSelection.selectedMediaOption(in: legible))
        let hidden = try await eventually("subtitles hidden") { try subtitlePixels(player) == 0 }
        XCTAssertTrue(hidden)
        player.pause()
    }

    /// Polls `condition` for up to 2 s of playback; `what` names it in a failure.
    private func eventually(_ what: String, _ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<40 {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try condition()
    }
}

/// CEA-608 closed captions carried in the video's SEI, drawn when `closedCaptionDisplayEnabled`.
final class ClosedCaptionTests: XCTestCase {
    func testCaptions_areDrawnWhileShown_whenEnabled() async throws {
        let player = try await Player.ready(try TestMedia.captions(seconds: 4))
        player.closedCaptionDisplayEnabled = true
        player.play()
        try await player.waitUntilTime(MediaTime(value: 2, timescale: 1))
        player.pause()
        XCTAssertGreaterThan(try subtitlePixels(player), 100, "\"CAPTION ON\" drawn at 2 s (shown from 1 s to 3 s)")
        player.play()
        try await player.waitUntilTime(MediaTime(value: 7, timescale: 2))
        player.pause()
        XCTAssertEqual(try subtitlePixels(player), 0, "erased at 3 s")
    }

    func testCaptions_areNotDrawn_byDefault_orWhenTurnedOff() async throws {
        let player = try await Player.ready(try TestMedia.captions(seconds: 4))
        XCTAssertFalse(player.closedCaptionDisplayEnabled)
        player.play()
        try await player.waitUntilTime(MediaTime(value: 2, timescale: 1))
        XCTAssertEqual(try subtitlePixels(player), 0, "off by default")
        player.closedCaptionDisplayEnabled = true
        player.closedCaptionDisplayEnabled = false
        try await player.waitUntilTime(MediaTime(value: 5, timescale: 2))
        player.pause()
        XCTAssertEqual(try subtitlePixels(player), 0, "turned off again")
    }

    func testCaptionBytes_becomeFieldOneTriplets() {
        let pairs: [UInt8] = [0x94, 0x2F, 0xC8, 0x45]
        let triplets = pairs.withUnsafeBytes {
            ClosedCaptionDecoder.triplets(type: Int32(GST_VIDEO_CAPTION_TYPE_CEA608_RAW.rawValue), $0)
        }
        XCTAssertEqual(triplets, [0xFC, 0x94, 0x2F, 0xFC, 0xC8, 0x45])
        let s334: [UInt8] = [0x80, 0x94, 0x2F, 0x00, 0x80, 0x80]
        let fields = s334.withUnsafeBytes {
            ClosedCaptionDecoder.triplets(type: Int32(GST_VIDEO_CAPTION_TYPE_CEA608_S334_1A.rawValue), $0)
        }
        XCTAssertEqual(fields, [0xFC, 0x94, 0x2F, 0xFD, 0x80, 0x80])
        XCTAssertNil([UInt8](repeating: 0, count: 9).withUnsafeBytes {
            ClosedCaptionDecoder.triplets(type: Int32(GST_VIDEO_CAPTION_TYPE_CEA708_CDP.rawValue), $0)
        })
    }
}

/// Near-white pixels in the current frame: on black video, only subtitles make them.
private func subtitlePixels(_ player: Player) throws -> Int {
    guard let frame = try player.copyCurrentVideoFrame(format: .rgb) else { return 0 }
    var bright = 0
    frame.data.withUnsafeBytes { bytes in
        for pixel in stride(from: 0, to: bytes.count - 2, by: 3)
        where bytes[pixel] > 200 && bytes[pixel + 1] > 200 && bytes[pixel + 2] > 200 {
            bright += 1
        }
    }
    return bright
}

/// The audio a player plays, written as 16-bit mono samples at 48 kHz to a file in real time.
private final class AudioCapture: Sendable {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-audio-\(UUID().uuidString).raw")
            .path
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw TestSupportError("cannot create \(path)")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var sinkDescription: String {
        "audioconvert ! audioresample ! audio/x-raw,format=S16LE,channels=1,rate=48000 ! filesink location=\(path) sync=true"
    }

    /// The samples written so far.
    var samples: [Int16] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// The tone's frequency, from the rate of upward zero crossings.
    static func frequency(of samples: ArraySlice<Int16>) -> Double {
        guard samples.count > 1 else { return 0 }
        var crossings = 0
        var previous = samples.first!
        for sample in samples.dropFirst() {
            if previous < 0, sample >= 0 { crossings += 1 }
            previous = sample
        }
        return Double(crossings) * 48_000 / Double(samples.count)
    }
}

private func XCTUnwrapAsync<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    try XCTUnwrap(value, file: file, line: line)
}
