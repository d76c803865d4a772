import ArgumentParser
import Dispatch
import Foundation
import LockstepCLI
import LockstepTime
import WallPlayer

extension WallNode {
    /// `wallnode play FILE`: one player, like gst-play, on the WallPlayer API.
    struct Play: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Play a media file on this machine, printing status changes and the time each second.")

        @Argument(help: "The media file to play.")
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
            let url = URL(fileURLWithPath: file)
            let item = PlayerItem(url: url)
            let video = VideoOutputSettings(sinkDescription: videoSink)
            let player: Player
            var looper: PlayerLooper?
            if loop {
                let queuePlayer = QueuePlayer(items: [], video: video, audioSinkDescription: audioSink)
                looper = PlayerLooper(player: queuePlayer, templateItem: item)
                player = queuePlayer
            } else {
                player = Player(playerItem: item, video: video, audioSinkDescription: audioSink)
            }
            guard let current = player.currentItem else { throw CommandFailure("no item to play") }
            let ready = try await waitUntilReady(current, timeout: loadTimeout)
            print("ready: \(file), duration \(ready.duration)")
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
            player.rate = rate
            try await waitForEnd(of: player, looping: looper != nil)
            print("loops completed: \(looper?.loopCount ?? 0)")
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
