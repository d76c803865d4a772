import XCTest

@testable import SyncClock

final class ClockSampleTests: XCTestCase {
    func testChecked_refusesWhatNoExchangeCanGive() {
        XCTAssertNotNil(
            ClockSample.checked(clientSend: 100, serverReceive: 5_000, serverSend: 5_010, clientReceive: 200))
        XCTAssertNil(
            ClockSample.checked(clientSend: 200, serverReceive: 5_000, serverSend: 5_010, clientReceive: 100),
            "received before it was sent")
        XCTAssertNil(
            ClockSample.checked(clientSend: 100, serverReceive: 5_010, serverSend: 5_000, clientReceive: 200),
            "the server sent before it received")
        XCTAssertNil(
            ClockSample.checked(clientSend: 100, serverReceive: -(1 << 61), serverSend: 1 << 61, clientReceive: 200),
            "held by the server longer than the whole round trip: a negative delay")
        XCTAssertNil(
            ClockSample.checked(clientSend: 100, serverReceive: 1 << 62, serverSend: 1 << 62, clientReceive: 200),
            "beyond any real clock")
    }
}
