import CGStreamer
import Foundation
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// playbin3 (GStreamer 1.22) guesses from each stream collection which kinds of stream play,
/// subtitles included, and only decodebin3's STREAMS_SELECTED corrects the guess. decodebin3 posts
/// the collection once for each stream as it appears; one handled after the selection (a subtitle
/// track's, on another thread) left playsink waiting for a text input nothing feeds, and the
/// preroll never came: 1 load in 8 of a Matroska file with subtitles, 4 in a row in CI.
///
/// The race is made certain here: the collection is posted again, as decodebin3 posts it, after
/// the selection, and the pipeline must still preroll after a seek.
final class LateCollectionTests: XCTestCase {
    func testACollectionAfterTheSelection_leavesNoSubtitleInputWaiting() throws {
        let collections = CollectionMessages()
        let pipeline = try PlaybackPipeline(
            video: VideoOutputSettings(sinkDescription: "fakesink sync=true"),
            audioSink: "fakesink sync=true", realtimePriority: nil,
            callbacks: .init(message: { collections.keep($0) }, presented: { _ in }, aboutToFinish: { nil }))
        defer { pipeline.shutdown() }
        pipeline.setURI(try TestMedia.languages().absoluteString)
        pipeline.playbin.setState(GST_STATE_PAUSED)
        XCTAssertEqual(prerolled(pipeline), GST_STATE_CHANGE_SUCCESS, "the first preroll")

        let decoder = try XCTUnwrap(GStreamer.descendant(of: pipeline.playbin, factory: "decodebin3"))
        let collection = try XCTUnwrap(collections.last, "decodebin3 posted its collection")
        XCTAssertGreaterThan(collection.texts, 0, "the file has subtitle streams for playbin3 to guess")
        let late = try XCTUnwrap(
            gst_message_new_stream_collection(
                UnsafeMutableRawPointer(decoder.pointer).assumingMemoryBound(to: GstObject.self),
                collection.collection.pointer))
        XCTAssertTrue(gst_element_post_message(decoder.pointer, late) != 0)

        let flags = GstSeekFlags(GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        XCTAssertTrue(pipeline.playbin.seek(to: MediaTime(value: 1, timescale: 1), rate: 1, flags: flags))
        XCTAssertEqual(prerolled(pipeline), GST_STATE_CHANGE_SUCCESS, "prerolled after the late collection")
    }

    private func prerolled(_ pipeline: PlaybackPipeline) -> GstStateChangeReturn {
        let limit = MediaTime(value: 3, timescale: 1).clockTime ?? 0
        return gst_element_get_state(pipeline.playbin.pointer, nil, nil, limit)
    }
}

/// The last stream collection the pipeline posted, and how many subtitle streams it has.
private final class CollectionMessages: @unchecked Sendable {
    struct Collection {
        let collection: GObjectRef<GstStreamCollection>
        let texts: Int
    }

    private let lock = NSLock()
    private var kept: Collection?

    var last: Collection? { lock.withLock { kept } }

    func keep(_ message: Message) {
        guard message.pointer.pointee.type == GST_MESSAGE_STREAM_COLLECTION else { return }
        var parsed: UnsafeMutablePointer<GstStreamCollection>?
        gst_message_parse_stream_collection(message.pointer, &parsed)
        guard let parsed else { return }
        var texts = 0
        for index in 0..<gst_stream_collection_get_size(parsed) {
            guard let stream = gst_stream_collection_get_stream(parsed, index) else { continue }
            if gst_stream_get_stream_type(stream).rawValue & GST_STREAM_TYPE_TEXT.rawValue != 0 { texts += 1 }
        }
        let collection = Collection(collection: GObjectRef(owning: parsed), texts: texts)
        lock.withLock { kept = collection }
    }
}
