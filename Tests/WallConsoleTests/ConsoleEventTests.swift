import Foundation
import WallConsole
import WallProtocol
import XCTest

/// The event log is derived from two successive views of a node: each change an operator cares
/// about gives one line, and a poll that changes nothing gives none.
final class ConsoleEventTests: XCTestCase {
    private func playing(_ id: String = "a") -> NodeView {
        var view = NodeView(id: id)
        view.reachable = true
        view.version = 3
        view.state = "playing"
        view.show = "playlist"
        view.entry = 0
        view.inStep = true
        view.rejoins = 0
        view.clockSource = "127.0.0.1:7000"
        view.clockState = .locked
        view.contentHeld = 1
        view.polledAtUnixMs = 1
        return view
    }

    private func kinds(_ before: NodeView, _ after: NodeView) -> [ConsoleEvent.Kind] {
        ConsoleEvent.changes(from: before, to: after, at: 1000).map(\.kind)
    }

    func testNothingChanged_noEvent() {
        XCTAssertEqual(kinds(playing(), playing()), [])
    }

    func testUnreachable_thenBack_inStep() {
        let down = playing().unreachable("connection refused (is wallnode running there?)", at: 5000)
        let lost = ConsoleEvent.changes(from: playing(), to: down, at: 5000)
        XCTAssertEqual(lost.map(\.kind), [.unreachable])
        XCTAssertTrue(lost[0].text.contains("connection refused"), lost[0].text)
        XCTAssertEqual(down.unreachableSinceUnixMs, 5000)
        XCTAssertEqual(down.unreachable("still", at: 6000).unreachableSinceUnixMs, 5000, "since the first failure")
        var back = playing()
        back.rejoins = 1
        let events = ConsoleEvent.changes(from: down, to: back, at: 7000)
        XCTAssertEqual(events.map(\.kind), [.reachable, .rejoin, .inStep])
        XCTAssertTrue(events[0].text.hasSuffix("answers again"), events[0].text)
    }

    /// A node down when the console first looks at it (the console opened, or the daemon
    /// restarted, while it was down) is said not to answer, once: before, only a look that had
    /// found it answering could lead to the event.
    func testUnreachable_atTheFirstLook_isSaidOnce() {
        let unseen = NodeView(id: "n1")
        var down = unseen.unreachable("connection refused (is wallnode running there?)", at: 5000)
        let first = ConsoleEvent.changes(from: unseen, to: down, at: 5000)
        XCTAssertEqual(first.map(\.kind), [.unreachable])
        XCTAssertTrue(first[0].text.hasPrefix("n1 does not answer: connection refused"), first[0].text)
        down.polledAtUnixMs = 5000
        XCTAssertEqual(kinds(down, down.unreachable("connection refused", at: 6000)), [], "said once")
    }

    func testRejoin_clockFailover_contentArrival_transition_andStep() {
        var after = playing()
        after.rejoins = 1
        after.clockSource = "127.0.0.1:7001"
        after.clockState = .holdover
        after.contentHeld = 2
        after.version = 4
        after.inStep = false
        XCTAssertEqual(
            kinds(playing(), after), [.rejoin, .clockSource, .clockState, .contentArrived, .transition, .outOfStep])
        var next = playing()
        next.entry = 1
        XCTAssertEqual(kinds(playing(), next), [.transition])
    }

    func testInStepSince_isKeptWhileInStep_andResetWhenOut() {
        let first = NodeView(id: "a").updatedForTest(inStep: true, at: 100)
        XCTAssertEqual(first.inStepSinceUnixMs, 100)
        let still = first.updatedForTest(inStep: true, at: 200)
        XCTAssertEqual(still.inStepSinceUnixMs, 100)
        let out = still.updatedForTest(inStep: false, at: 300)
        XCTAssertNil(out.inStepSinceUnixMs)
        XCTAssertEqual(out.outOfStepSinceUnixMs, 300)
        XCTAssertEqual(out.updatedForTest(inStep: false, at: 400).outOfStepSinceUnixMs, 300)
    }

    func testProblems_areEveryOneTheNodeReports_servicesBesideTheTimelines() {
        XCTAssertNil(NodeView(id: "a").updatedForTest(inStep: true, at: 1).problem)
        let both = NodeView(id: "a").updatedForTest(
            inStep: false, at: 1, timelineProblem: "media missing: a.mp4",
            services: [("content", "the content store is unusable: File name too long")])
        XCTAssertEqual(
            both.problem, "media missing: a.mp4; content: the content store is unusable: File name too long")
        let service = NodeView(id: "a").updatedForTest(
            inStep: true, at: 1, services: [("show-control", "cannot listen on 127.0.0.1:7000")])
        XCTAssertEqual(service.problem, "show-control: cannot listen on 127.0.0.1:7000")
    }

    func testARestart_isCounted_andIsARejoin_thoughTheNodeCountsFromZeroAgain() {
        let before = NodeView(id: "a").updatedForTest(inStep: true, at: 1, framesPresented: 900, rejoins: 2)
        let down = before.unreachable("connection refused", at: 2)
        let back = down.updatedForTest(inStep: true, at: 3, framesPresented: 12, rejoins: 0)
        XCTAssertEqual(back.restarts, 1)
        XCTAssertEqual(back.rejoins, 3, "its two, and the restart")
        XCTAssertEqual(
            ConsoleEvent.changes(from: down, to: back, at: 3).map(\.kind), [.reachable, .restart, .rejoin, .inStep])
        // Its own count goes on from there; a status with more frames is no restart.
        let later = back.updatedForTest(inStep: true, at: 4, framesPresented: 40, rejoins: 1)
        XCTAssertEqual(later.restarts, 1)
        XCTAssertEqual(later.rejoins, 4)
    }

    func testDiffers_ignoresThePollsOwnTimes() {
        var a = playing()
        var b = playing()
        a.polledAtUnixMs = 1
        b.polledAtUnixMs = 2
        a.masterTimeNs = 10
        b.masterTimeNs = 20
        XCTAssertFalse(a.differs(from: b))
        b.itemTimeS = 1.5
        XCTAssertTrue(a.differs(from: b))
    }
}

extension NodeView {
    /// The view after a status saying `inStep`, playing, through the same path as a real status.
    fileprivate func updatedForTest(
        inStep: Bool, at now: Int64, timelineProblem: String? = nil, services: [(String, String)] = [],
        framesPresented: Int = 1, rejoins: Int = 0
    ) -> NodeView {
        func quoted(_ text: String) -> String {
            String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
        }
        let problem = timelineProblem.map { ",\"problem\":\(quoted($0))" } ?? ""
        let problems = services.map { "{\"service\":\(quoted($0.0)),\"problem\":\(quoted($0.1))}" }
        let json = """
            {"id":"a","clock":{"state":"locked","usable":true,"server":"m","serving":false},
             "player":{"status":"readyToPlay","timeControlStatus":"playing","rate":1,"positionNs":0,"prerolled":true,
                       "framesPresented":\(framesPresented),"framesLate":0,"framesDropped":0,"renderThread":"x"},
             "timeline":{"version":1,"state":"playing","entry":0,"pass":0,"itemTimeNs":0,"inStep":\(inStep),"rejoins":\(rejoins)\(problem)},
             "problems":[\(problems.joined(separator: ","))]}
            """
        let status = try! JSONDecoder().decode(NodeStatus.self, from: Data(json.utf8))
        return updated(with: status, at: now)
    }
}
