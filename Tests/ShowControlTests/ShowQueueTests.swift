import LockstepTime
import ShowControl
import XCTest

final class ShowQueueTests: XCTestCase {
    private func request(_ command: ShowCommand, tag: Int64? = nil) -> ShowRequest {
        ShowRequest(command: command, sender: "127.0.0.1:9000", via: "udp", arrival: .zero, timeTagUnixNanoseconds: tag)
    }

    private func drain(_ queue: inout ShowQueue) -> [(ShowCommand, [ShowCommand])] {
        var out: [(ShowCommand, [ShowCommand])] = []
        while let (request, overtaken) = queue.next() { out.append((request.command, overtaken.map(\.command))) }
        return out
    }

    func testCuesWaitingBehindACue_areOvertaken_theLastOneSent() {
        var queue = ShowQueue(depth: 16)
        for name in ["intro", "finale", "chapter"] { XCTAssertNil(queue.push(request(.cue(name)))) }
        let out = drain(&queue)
        XCTAssertEqual(out.map(\.0), [.cue("chapter")])
        XCTAssertEqual(out.first?.1, [.cue("intro"), .cue("finale")])
        XCTAssertNil(queue.next())
    }

    func testACommandBetweenCues_keepsBoth_andATimedCueKeepsItsTime() {
        var queue = ShowQueue(depth: 16)
        for command in [ShowCommand.cue("intro"), .pause, .cue("finale")] { _ = queue.push(request(command)) }
        XCTAssertEqual(drain(&queue).map(\.0), [.cue("intro"), .pause, .cue("finale")])
        _ = queue.push(request(.cue("intro"), tag: 1_000))
        _ = queue.push(request(.cue("finale")))
        _ = queue.push(request(.cue("chapter"), tag: 2_000))
        let out = drain(&queue)
        XCTAssertEqual(out.map(\.0), [.cue("intro"), .cue("finale"), .cue("chapter")])
        XCTAssertTrue(out.allSatisfy { $0.1.isEmpty })
    }

    func testPastItsDepth_theOldestIsDropped() {
        var queue = ShowQueue(depth: 2)
        XCTAssertNil(queue.push(request(.pause)))
        XCTAssertNil(queue.push(request(.resume)))
        XCTAssertEqual(queue.push(request(.next))?.command, .pause)
        XCTAssertEqual(queue.count, 2)
        XCTAssertEqual(drain(&queue).map(\.0), [.resume, .next])
    }
}
