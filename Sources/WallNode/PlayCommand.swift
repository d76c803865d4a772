import ArgumentParser
import Dispatch
import Foundation
import LockstepCLI
import LockstepLocks
import LockstepTime
import NodeService
import WallPlayer

extension WallNode {
    /// `wallnode play FILE`: one player, like gst-play, on the WallPlayer API.
    struct Play: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play a media file or stream on this machine, printing status changes and the time each second.")

        @Argument(help: "The media file to play, or an http(s) URL: a file or an HLS playlist.")
        var file: String

        @Option(name: .customLong("video-sink"), help: "GStreamer bin description of the video sink.")
        var videoSink = "autovideosink"

        @Option(name: .customLong("audio-sink"), help: "GStreamer bin description of the audio sink.")
        var audioSink = "autoaudiosink"

        @Option(help: "Start this many seconds into the file.")
        var start: Double?

        @Option(help: "Playback rate: 1 is normal, 0.5 half speed, -1 backwards.")
        var rate: Float = 1

        @Flag(help: "Loop the file gaplessly until interrupted.")
        var loop = false

        @Option(
            name: .customLong("audio-language"),
            help:
                "Of several audio tracks, play the one in this language (fr, en-GB, deu); default: the media's default."
        )
        var audioLanguage: String?

        @Option(help: "Show the subtitles in this language over the picture (fr, en-GB, deu); default: none.")
        var subtitles: String?

        @Flag(
            name: .customLong("closed-captions"),
            help: "Show the CEA-608 closed captions the video carries (CC1) while no subtitles are shown.")
        var closedCaptions = false

        @Option(help: ArgumentHelp("Seconds to wait for the file to load before giving up.", visibility: .hidden))
        var loadTimeout: Double = 30

        func validate() throws {
            guard rate.isFinite, rate != 0 else {
                throw ValidationError("--rate must be a non-zero number, got \(rate).")
            }
            if let start, !(start.isFinite && start >= 0) {
                throw ValidationError("--start must be zero or more seconds, got \(start).")
            }
        }

        func run() async throws {
            let url = URLAsset.url(forLocation: file)
            let item = PlayerItem(url: url)
            let video = VideoOutputSettings(sinkDescription: videoSink)
            let player: Player
            var looper: PlayerLooper?
            if loop {
                player = QueuePlayer(items: [], video: video, audioSinkDescription: audioSink)
            } else {
                player = Player(playerItem: nil, video: video, audioSinkDescription: audioSink)
            }
            player.closedCaptionDisplayEnabled = closedCaptions
            // Chosen before the item loads: it starts with them.
            for (language, characteristic) in [(audioLanguage, MediaCharacteristic.audible), (subtitles, .legible)] {
                guard let language else { continue }
                player.setMediaSelectionCriteria(
                    PlayerMediaSelectionCriteria(preferredLanguages: [language]), forMediaCharacteristic: characteristic
                )
            }
            if let queuePlayer = player as? QueuePlayer {
                looper = PlayerLooper(player: queuePlayer, templateItem: item)
            } else {
                player.replaceCurrentItem(with: item)
            }
            guard let current = player.currentItem else { throw CommandFailure("no item to play") }
            let ready = try await waitUntilReady(current, timeout: loadTimeout)
            print("ready: \(file), duration \(ready.duration)")
            for characteristic in MediaCharacteristic.allCases {
                guard let group = try? await current.asset.mediaSelectionGroup(forMediaCharacteristic: characteristic)
                else { continue }
                let chosen = current.currentMediaSelection.selectedMediaOption(in: group)
                print(
                    "\(characteristic == .audible ? "audio" : "subtitles"): "
                        + (chosen.map { "\($0.displayName) (\($0.languageCode ?? "no language"))" } ?? "off")
                        + " of \(group.options.count)")
            }
            if let start {
                let target = MediaTime(seconds: start, preferredTimescale: 1_000_000)
                guard await player.seek(to: target, toleranceBefore: .zero, toleranceAfter: .zero) else {
                    throw CommandFailure("seek to \(target) did not finish")
                }
            }
            let clock = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 1), queue: nil) {
                print("time \($0)")
            }
            defer { player.removeTimeObserver(clock) }
            let tally = FrameTally()
            let counting = Task { [frames = player.presentedFrames] in
                for await frame in frames { tally.count(frame) }
            }
            defer { counting.cancel() }
            player.rate = rate
            do {
                try await waitForEnd(of: player, looping: looper != nil)
            } catch {
                print(tally.summary(dropped: player.videoFrameCounts.dropped))
                throw error
            }
            print("loops completed: \(looper?.loopCount ?? 0)")
            print(tally.summary(dropped: player.videoFrameCounts.dropped))
        }

        private func waitUntilReady(_ item: PlayerItem, timeout: Double) async throws -> PlayerItem {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await status in item.statusUpdates {
                        print("item status: \(status)")
                        if status == .readyToPlay { return }
                        if status == .failed { throw CommandFailure(item.error?.description ?? "the item failed") }
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(timeout))
                    throw CommandFailure("\(file) did not load within \(timeout) s")
                }
                try await group.next()
                group.cancelAll()
                return item
            }
        }

        /// Returns at the end of the item (never while looping), throws if it fails, and ends on
        /// SIGINT or SIGTERM.
        private func waitForEnd(of player: Player, looping: Bool) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await status in player.timeControlStatusUpdates { print("player: \(status)") }
                }
                group.addTask {
                    for await item in player.currentItemUpdates {
                        guard let item else { continue }
                        for await event in item.events {
                            switch event {
                            case .didPlayToEndTime:
                                print("end of item")
                                if !looping { return }
                            case .failedToPlayToEndTime(let error):
                                throw CommandFailure(error.description)
                            case .playbackStalled:
                                print("stalled")
                            case .timeJumped:
                                break
                            }
                            if looping { break }
                        }
                        if !looping { return }
                    }
                }
                group.addTask {
                    let updates = player.currentItem?.statusUpdates ?? AsyncStream(unfolding: { nil })
                    for await status in updates where status == .failed {
                        throw CommandFailure(player.currentItem?.error?.description ?? "playback failed")
                    }
                }
                group.addTask {
                    let signal = await Termination.signal()
                    if !Task.isCancelled { print("interrupted by signal \(signal)") }
                }
                _ = try await group.next()
                group.cancelAll()
            }
            player.pause()
        }
    }
}

/// The frames `wallnode play` presented: how many, how many late, and the worst lateness.
private final class FrameTally: Sendable {
    private let state = Mutex((presented: 0, late: 0, worst: MediaTime.zero))

    func count(_ frame: PresentedFrame) {
        state.withLock {
            $0.presented += 1
            if frame.lateness > FrameLog.lateThreshold { $0.late += 1 }
            $0.worst = max($0.worst, frame.lateness)
        }
    }

    /// "frames: 180 presented, 0 late (more than 1.0 ms after due), 0 dropped by the sink; at worst
    /// 0.412 ms after due".
    func summary(dropped: UInt64) -> String {
        let counts = state.withLock { $0 }
        let threshold = FrameLog.lateThreshold.seconds * 1000
        let worst = String(format: "%.3f", counts.worst.seconds * 1000)
        return "frames: \(counts.presented) presented, \(counts.late) late (more than \(threshold) ms after due), "
            + "\(dropped) dropped by the sink; at worst \(worst) ms after due"
    }
}
