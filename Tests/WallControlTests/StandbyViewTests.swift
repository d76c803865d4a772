import LockstepTime
import WallProtocol
import XCTest

@testable import WallControl

/// What a cue controller keeps of the nodes' standby between cues (`CueControl.StandbyView`).
final class StandbyViewTests: XCTestCase {
    func testNodesOnOneVersion_theViewFollowsEachCueSent() {
        var view = CueControl.StandbyView(samples: ["a": sample("a", version: 3), "b": sample("b", version: 3)])
        XCTAssertEqual(view.version, 3)
        view.sent("intro", at: seconds(10), version: 4, master: seconds(9))
        XCTAssertEqual(view.version, 4)
        XCTAssertEqual(view.taken, ["intro"])
    }

    func testNodesOnDifferentVersions_theViewServesNoCue_evenAfterOneIsSent() {
        var view = CueControl.StandbyView(samples: ["a": sample("a", version: 3), "b": sample("b", version: 4)])
        XCTAssertNil(view.version)
        view.sent("intro", at: seconds(10), version: 5, master: seconds(9))
        XCTAssertNil(view.version, "what the nodes said was about different timelines")
    }

    func testACueSentBeforeTheLastOnesCut_putsThatOneBackInStandby() {
        var view = CueControl.StandbyView(samples: ["a": sample("a", version: 3)])
        view.sent("intro", at: seconds(10), version: 4, master: seconds(9))
        view.sent("outro", at: seconds(11), version: 5, master: seconds(9))
        XCTAssertEqual(view.taken, ["outro"], "intro's cut was a second ahead: its players are held again")
        view.sent(
            "credits", at: seconds(12), version: 6,
            master: seconds(11) - CueControl.overtakingMargin.multiplied(byRatio: 1, 2))
        XCTAssertEqual(view.taken, ["outro", "credits"], "outro's cut too near to be overtaken")
    }

    private func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }

    private func sample(_ id: String, version: UInt64) -> StatusSample {
        let status = NodeStatus(
            id: id, masterTime: seconds(9),
            clock: ClockReport(state: .locked, usable: true, server: "m", errorBound: nil),
            player: PlayerReport(
                status: "readyToPlay", media: nil, itemStatus: nil, timeControlStatus: "paused", waitingReason: nil,
                rate: 0, position: .zero, prerolled: true, framesPresented: 0, framesLate: 0, framesDropped: 0,
                renderThread: "normal", error: nil),
            timeline: TimelineReport(
                version: version, state: "standby", entry: 0, pass: 0, itemTime: .zero, inStep: nil, offset: nil,
                rejoins: 0, problem: nil))
        return (status, MediaTime(value: 1, timescale: 1000), seconds(9))
    }
}
