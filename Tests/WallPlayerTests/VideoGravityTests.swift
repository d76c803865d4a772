import CGStreamer
import LockstepTime
import XCTest

@testable import WallPlayer

/// `videoGravity` where no output size is set: the sink scales the picture to its surface, keeping
/// its shape unless the gravity is resize; aspect fill crops to the surface's shape when it is
/// known (the caller's window, or a kmssink's display).
final class VideoGravityTests: XCTestCase {
    private let source = PixelSize(width: 1600, height: 900)

    func testAspectFill_cropsToTheSurfacesShape_whenOnlyTheSurfaceIsKnown() {
        var settings = VideoOutputSettings(videoGravity: .resizeAspectFill)
        XCTAssertEqual(settings.cropInsets(source: source).left, 0, "no size known: nothing to crop to")
        // A 4:3 window: the 16:9 picture loses its sides, 1200 of its 1600 columns kept.
        settings.displaySize = PixelSize(width: 800, height: 600)
        let window = settings.cropInsets(source: source)
        XCTAssertEqual([window.left, window.right, window.top, window.bottom], [200, 200, 0, 0])
        // The sink's own display (kmssink), when the caller gives none: a 16:10 panel.
        settings.displaySize = nil
        let panel = settings.cropInsets(source: source, sinkDisplay: PixelSize(width: 1920, height: 1200))
        XCTAssertEqual([panel.left, panel.right, panel.top, panel.bottom], [80, 80, 0, 0])
        // An output size, when set, is what the picture is scaled to: it wins.
        settings.outputSize = PixelSize(width: 1600, height: 400)
        let output = settings.cropInsets(source: source, sinkDisplay: PixelSize(width: 1920, height: 1200))
        XCTAssertEqual([output.left, output.right, output.top, output.bottom], [0, 0, 250, 250])
        settings.videoGravity = .resizeAspect
        XCTAssertEqual(settings.cropInsets(source: source).top, 0, "aspect shows the whole picture")
    }

    func testSinksThatScale_keepThePicturesShape_unlessTheGravityIsResize() throws {
        for (gravity, expected) in [(VideoGravity.resize, false), (.resizeAspect, true), (.resizeAspectFill, true)] {
            let pipeline = try PlaybackPipeline(
                video: VideoOutputSettings(sinkDescription: "xvimagesink", videoGravity: gravity), audioSink: nil,
                realtimePriority: nil,
                callbacks: .init(message: { _ in }, presented: { _ in }, aboutToFinish: { nil }))
            XCTAssertEqual(pipeline.videoSinkSetting("force-aspect-ratio"), [expected], "\(gravity)")
            var changed = pipeline.videoSettings
            changed.videoGravity = gravity == .resize ? .resizeAspect : .resize
            pipeline.updateVideo(changed)
            XCTAssertEqual(pipeline.videoSinkSetting("force-aspect-ratio"), [!expected], "\(gravity), then changed")
            pipeline.playbin.setState(GST_STATE_NULL)
        }
    }
}
