import Foundation
import GroundTruth
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// Headless outputs that keep real time, as a wall node runs them.
enum Headless {
    static let video = VideoOutputSettings(sinkDescription: "fakesink sync=true")
    static let audio = "fakesink sync=true"
}

func frames(_ count: Int64) -> MediaTime { MediaTime(value: count, timescale: 30) }

extension Player {
    /// A player on `url` with headless sinks, returned once its item is ready to play.
    static func ready(
        _ url: URL, video: VideoOutputSettings? = Headless.video, audio: String? = nil
    ) async throws -> Player {
        let player = Player(playerItem: PlayerItem(url: url), video: video, audioSinkDescription: audio)
        try await player.currentItem!.waitUntilReady()
        return player
    }

    /// Returns once playback has passed item time `time`, polling the position.
    func waitUntilTime(_ time: MediaTime, within seconds: Double = 10) async throws {
        try await withTimeout(seconds, "playback to reach \(time)") {
            while self.currentTime() < time { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    /// The frame number shown, read from the frame-code colour of the current frame.
    func shownFrame() throws -> Int? {
        guard let frame = try copyCurrentVideoFrame(format: .i420, size: PixelSize(width: 8, height: 8)) else {
            return nil
        }
        return FrameCode.decode(i420: frame.data, width: 8, height: 8)
    }
}

extension PlayerItem {
    func waitUntilReady(within seconds: Double = 30) async throws {
        let status = try await first(in: statusUpdates, within: seconds, "item ready") { $0 != .unknown }
        if status == .failed { throw TestSupportError("item failed: \(error.map { "\($0)" } ?? "no error")") }
    }

    /// The error the item fails with, within `seconds`.
    func waitForFailure(within seconds: Double = 5) async throws -> PlayerError? {
        let status = try await first(in: statusUpdates, within: seconds, "item failure") { $0 != .unknown }
        XCTAssertEqual(status, .failed)
        return error
    }
}
