import WallPlayer
import XCTest

/// `sinkProblem` is what `wallctl check` reports per sink: "ok" must mean the sink can open its
/// output, not only that GStreamer can build it.
final class SinkCheckTests: XCTestCase {
    func testASinkThatOpens_isFine() {
        XCTAssertNil(sinkProblem("fakesink sync=true", role: "video"))
    }

    func testAnElementThatDoesNotExist_isNamed() throws {
        let problem = try XCTUnwrap(sinkProblem("nosuchsink", role: "video"))
        XCTAssertTrue(problem.contains("nosuchsink"), problem)
    }

    /// An X display nobody serves: the sink builds, and fails only when it opens the display.
    func testASinkWhoseDisplayCannotBeOpened_saysSo() throws {
        let problem = try XCTUnwrap(sinkProblem("ximagesink display=\":97\"", role: "video"))
        XCTAssertTrue(problem.hasPrefix("it cannot open its output: "), problem)
        XCTAssertTrue(problem.contains("X"), problem)
    }
}
