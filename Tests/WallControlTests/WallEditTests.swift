import LockstepTime
import WallProtocol
import WallTimeline
import XCTest

@testable import WallControl

/// The controller's decisions about a wall, carried out in process against fake nodes on loopback
/// ports (`FakeNode`): what it sends, to whom, when, and what it says when nodes refuse, fall
/// silent or come back without their state. No process is started.
final class WallEditTests: FakeWallTestCase {
    /// Plays the config's playlist on `wall`, as `wallctl play` does.
    @discardableResult
    private func play(_ wall: Wall, lead: MediaTime = .zero) async throws -> Timeline {
        let control = TimelineControl(wall: wall)
        let entries = try await control.entries(wall.config.playlistItems)
        return try await control.play(
            "play", playlist: Playlist(entries: entries, loops: wall.config.loop), lead: lead)
    }

    func testPlay_sendsOneTimelineToEveryNode_onTheShortestLength_theEditLeadAhead() async throws {
        let nodes = try await startNodes(
            ["a", "b", "c"], lengths: ["/m/a.mp4": seconds(10), "/m/b.mp4": seconds(6)],
            own: ["b": ["/m/a.mp4": seconds(9.5)]])
        let wall = try self.wall()

        let before = FakeNode.master()
        let timeline = try await play(wall)

        for node in nodes { XCTAssertEqual(node.received, [timeline], "node \(node.id): the one timeline, once") }
        XCTAssertEqual(timeline.version, 1)
        XCTAssertEqual(timeline.epoch, 0x5eed, "anchored on the nodes' master epoch")
        XCTAssertEqual(timeline.configSHA256, wall.config.digest)
        let segment = try XCTUnwrap(timeline.segments.first)
        XCTAssertEqual(
            segment.playlist.entries.map(\.outPoint), [seconds(9.5), seconds(4)],
            "an entry with no out point ends where the shortest node's file does; a given one is kept")
        XCTAssertGreaterThanOrEqual(
            segment.from, before + TimelineControl.minimumEditLead, "no sooner than the nodes can prepare it")
        XCTAssertLessThan(segment.from, before + seconds(1.5))
    }

    func testTheConfigsShow_startsNoSoonerThanItsStartMargin_loopingAsAsked() async throws {
        try await startNodes(["a"], lengths: ["/m/a.mp4": seconds(10), "/m/b.mp4": seconds(6)])
        let wall = try self.wall(extra: "start-margin: 1.5s")

        let before = FakeNode.master()
        let timeline = try await TimelineControl(wall: wall).playShow(lead: .zero, loops: false)

        let segment = try XCTUnwrap(timeline.segments.first)
        XCTAssertGreaterThanOrEqual(
            segment.from, before + seconds(1.5), "a new timeline keeps the config's start margin")
        XCTAssertEqual(segment.playlist.entries.map(\.media), ["/m/a.mp4", "/m/b.mp4"], "the config's playlist")
        XCTAssertFalse(segment.playlist.loops)
    }

    func testAnEdit_aNodeRefuses_isAFailureNamingItAndTheSplit() async throws {
        let nodes = try await startNodes(["a", "b", "c"], lengths: ["/m/a.mp4": seconds(10), "/m/b.mp4": seconds(6)])
        let wall = try self.wall()
        let first = try await play(wall)

        nodes[2].behaviour = .refusing("the disk is full")
        do {
            try await WallVerb.pause.carryOut(on: TimelineControl(wall: wall), lead: .zero)
            XCTFail("a pause one node refused succeeded")
        } catch let failure as WallFailure {
            XCTAssertEqual(Set(failure.failures.keys), ["c"])
            XCTAssertEqual(failure.succeeded, ["a", "b"])
            XCTAssertEqual(
                failure.httpStatus, 502, "some nodes carried it out: the wall is split, not the request wrong")
            XCTAssertTrue("\(failure)".contains("the disk is full"), "\(failure)")
            XCTAssertTrue("\(failure)".contains("split"), "\(failure)")
        }
        XCTAssertEqual(nodes[0].timeline?.version, 2)
        XCTAssertEqual(nodes[1].timeline?.version, 2)
        XCTAssertEqual(nodes[2].timeline, first, "the refusing node keeps what it had")

        // Once it takes commands again, the next edit brings every node onto one version.
        nodes[2].behaviour = .answering
        let resumed = try await WallVerb.resume.carryOut(on: TimelineControl(wall: wall), lead: .zero)
        XCTAssertEqual(resumed.version, 3)
        for node in nodes { XCTAssertEqual(node.timeline, resumed, "node \(node.id)") }
    }

    func testANodeBackWithoutItsTimeline_isSentTheNewestWithTheNextEdit() async throws {
        let nodes = try await startNodes(["a", "b"], lengths: ["/m/a.mp4": seconds(10), "/m/b.mp4": seconds(6)])
        let wall = try self.wall()
        try await play(wall)

        nodes[0].forgetTimeline()
        let (newest, versions) = try await TimelineControl(wall: wall).current()
        XCTAssertEqual(newest?.version, 1, "the newest any node holds")
        XCTAssertEqual(versions["a"], .some(nil))
        XCTAssertEqual(versions["b"], 1)

        let next = try await WallVerb.next.carryOut(on: TimelineControl(wall: wall), lead: .zero)
        XCTAssertEqual(next.version, 2, "the next version of the newest, not a new wall")
        for node in nodes { XCTAssertEqual(node.timeline, next, "node \(node.id)") }
    }

    func testNodesOnDifferentMasters_areNamed_andNothingIsSent() async throws {
        let nodes = try await startNodes(
            ["a", "b"], lengths: ["/m/a.mp4": seconds(10), "/m/b.mp4": seconds(6)], epochs: ["b": 0xbeef])
        let wall = try self.wall()

        do {
            try await play(wall)
            XCTFail("a timeline for nodes on two masters")
        } catch let error as ControlError {
            XCTAssertEqual("\(error)".contains("the nodes follow different master clocks"), true, "\(error)")
            XCTAssertTrue("\(error)".contains("a: epoch 5eed, b: epoch beef"), "\(error)")
        }
        for node in nodes { XCTAssertEqual(node.received, [], "node \(node.id) was sent nothing") }
    }

    func testASilentNode_failsTheCommandWithinTheWaitLimit_namingIt() async throws {
        let nodes = try await startNodes(["a", "b"], lengths: ["/m/a.mp4": seconds(10), "/m/b.mp4": seconds(6)])
        let wall = try self.wall()
        nodes[1].behaviour = .silent

        let began = LocalClock.monotonic.now()
        do {
            try await play(wall)
            XCTFail("a wall with a node that never answers played")
        } catch let error as ControlError {
            guard case .notReady(let waiting) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(Array(waiting.keys), ["b"])
            XCTAssertTrue(waiting["b"]?.contains("no answer within 1 s") == true, "\(error)")
        }
        XCTAssertLessThan(LocalClock.monotonic.now() - began, seconds(3), "the wait limit (1 s) and one request")
        XCTAssertEqual(nodes[0].received, [], "nothing was sent while a node was waited for")
    }

    func testAFileMissingOnANode_isWaitedFor_thenNamed() async throws {
        let nodes = try await startNodes(
            ["a", "b"], lengths: ["/m/a.mp4": seconds(10)], own: ["a": ["/m/b.mp4": seconds(6)]]
        )
        let wall = try self.wall()

        do {
            _ = try await TimelineControl(wall: wall).entries(wall.config.playlistItems)
            XCTFail("entries for a file a node lacks")
        } catch let error as ControlError {
            guard case .notReady(let waiting) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(Array(waiting.keys), ["b"])
            XCTAssertTrue(waiting["b"]?.contains("/m/b.mp4: no such file, after waiting") == true, "\(error)")
        }
    }
}
