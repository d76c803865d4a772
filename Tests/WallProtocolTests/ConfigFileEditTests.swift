import WallProtocol
import XCTest

final class ConfigFileEditTests: XCTestCase {
    let text = """
        # the lobby
        name: lobby
        nodes:
          - id: a   # left
            control: 10.0.0.1:7700
          - control: 10.0.0.2:7700
            display-latency: 33ms # by hand
            id: b
          - {id: c, control: 10.0.0.3:7700}
        """

    func testSetsAnExistingKey_andAddsAMissingOne_keepingComments() throws {
        let edited = try ConfigFileEdit.settingNodeKey(
            "display-latency", to: ["a": "1.500ms", "b": "40.250ms"], in: text, file: "wall.yaml")
        XCTAssertEqual(
            edited,
            """
            # the lobby
            name: lobby
            nodes:
              - id: a   # left
                display-latency: 1.500ms
                control: 10.0.0.1:7700
              - control: 10.0.0.2:7700
                display-latency: 40.250ms # by hand
                id: b
              - {id: c, control: 10.0.0.3:7700}
            """)
    }

    func testANodeOnOneLine_orAnUnknownNode_isAClearError() {
        XCTAssertThrowsError(try ConfigFileEdit.settingNodeKey("display-latency", to: ["c": "2ms"], in: text, file: "w.yaml")) {
            XCTAssertTrue("\($0)".contains("nodes[c]: is written on one line"), "\($0)")
            XCTAssertTrue("\($0)".contains("set display-latency: 2ms by hand"), "\($0)")
        }
        XCTAssertThrowsError(try ConfigFileEdit.settingNodeKey("display-latency", to: ["z": "2ms"], in: text, file: "w.yaml")) {
            XCTAssertTrue("\($0)".contains("has no node \"z\""), "\($0)")
        }
    }
}
