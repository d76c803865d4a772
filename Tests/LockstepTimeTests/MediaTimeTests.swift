import Foundation
import XCTest

@testable import LockstepTime

final class MediaTimeTests: XCTestCase {
    func testInit_whenTimescaleNotPositive_isInvalid() {
        XCTAssertFalse(MediaTime(value: 1, timescale: 0).isValid)
        XCTAssertFalse(MediaTime(value: 1, timescale: -5).isValid)
    }

    func testSeconds_roundTripAtPreferredTimescale() {
        let time = MediaTime(seconds: 1.5, preferredTimescale: 600)
        XCTAssertEqual(time.value, 900)
        XCTAssertEqual(time.timescale, 600)
        XCTAssertEqual(time.seconds, 1.5)
        XCTAssertTrue(MediaTime(seconds: .nan, preferredTimescale: 600).seconds.isNaN)
        XCTAssertTrue(MediaTime(seconds: .infinity, preferredTimescale: 600).isPositiveInfinity)
    }

    func testEquality_acrossTimescales() {
        XCTAssertEqual(MediaTime(value: 1, timescale: 2), MediaTime(value: 500, timescale: 1000))
        XCTAssertEqual(Set([MediaTime(value: 1, timescale: 2), MediaTime(value: 3, timescale: 6)]).count, 1)
        XCTAssertNotEqual(MediaTime(value: 1, timescale: 3), MediaTime(value: 333, timescale: 1000))
    }

    func testOrdering_followsCMTimeCompare() {
        let ordered: [MediaTime] = [
            .negativeInfinity, MediaTime(value: -1, timescale: 1), .zero, MediaTime(value: 1, timescale: 30),
            .indefinite, .positiveInfinity, .invalid,
        ]
        XCTAssertEqual(ordered.shuffled().sorted(), ordered)
        XCTAssertEqual(MediaTime.invalid, MediaTime.invalid)
    }

    func testAdd_whenTimescalesDiffer_usesLeastCommonMultiple() {
        let sum = MediaTime(value: 1, timescale: 30) + MediaTime(value: 1, timescale: 25)
        XCTAssertEqual(sum.timescale, 150)
        XCTAssertEqual(sum.value, 11)
        XCTAssertFalse(sum.hasBeenRounded)
    }

    func testAdd_whenLCMOverflows_roundsAtMaxTimescale() {
        let a = MediaTime(value: 1, timescale: 1_000_000_007)
        let b = MediaTime(value: 1, timescale: 999_999_937)
        let sum = a + b
        XCTAssertEqual(sum.timescale, MediaTime.maxTimescale)
        XCTAssertTrue(sum.hasBeenRounded)
        XCTAssertEqual(sum.seconds, a.seconds + b.seconds, accuracy: 1e-9)
    }

    func testAdd_specialValues() {
        let one = MediaTime(value: 1, timescale: 1)
        XCTAssertFalse((one + .invalid).isValid)
        XCTAssertTrue((one + .positiveInfinity).isPositiveInfinity)
        XCTAssertTrue((MediaTime.negativeInfinity + one).isNegativeInfinity)
        XCTAssertFalse((MediaTime.positiveInfinity + .negativeInfinity).isValid)
        XCTAssertTrue((one + .indefinite).isIndefinite)
        XCTAssertTrue((one - .positiveInfinity).isNegativeInfinity)
    }

    func testAdd_whenValueOverflows_givesInfinity() {
        let big = MediaTime(value: .max - 1, timescale: 1)
        XCTAssertTrue((big + big).isPositiveInfinity)
        XCTAssertTrue((-big - big).isNegativeInfinity)
    }

    func testConvertScale_roundingMethods() {
        let time = MediaTime(value: 5, timescale: 10)  // 0.5 s
        XCTAssertEqual(time.convertScale(1).value, 1)
        XCTAssertEqual(time.convertScale(1, method: .towardZero).value, 0)
        XCTAssertEqual((-time).convertScale(1).value, -1)
        XCTAssertEqual((-time).convertScale(1, method: .towardPositiveInfinity).value, 0)
        XCTAssertEqual((-time).convertScale(1, method: .towardNegativeInfinity).value, -1)
        XCTAssertTrue(time.convertScale(1).hasBeenRounded)
        XCTAssertFalse(time.convertScale(1000).hasBeenRounded)
    }

    func testNanoseconds_fromFrameTimes() {
        XCTAssertEqual(MediaTime(value: 1001, timescale: 30000).nanoseconds, 33_366_667)
        XCTAssertEqual(MediaTime(nanoseconds: 42).nanoseconds, 42)
        XCTAssertNil(MediaTime.indefinite.nanoseconds)
    }

    func testMultiply_byRatioAndFloat() {
        let frame = MediaTime(value: 1, timescale: 30)
        XCTAssertEqual(frame * 30, MediaTime(value: 1, timescale: 1))
        XCTAssertEqual(frame.multiplied(byRatio: 3, 2), MediaTime(value: 1, timescale: 20))
        XCTAssertEqual(MediaTime(value: 10, timescale: 1).multiplied(by: 0.5), MediaTime(value: 5, timescale: 1))
        XCTAssertFalse(frame.multiplied(byRatio: 1, 0).isValid)
        XCTAssertTrue(MediaTime.positiveInfinity.multiplied(by: -2).isNegativeInfinity)
    }

    func testMagnitude() {
        XCTAssertEqual(MediaTime(value: -3, timescale: 2).magnitude, MediaTime(value: 3, timescale: 2))
        XCTAssertTrue(MediaTime.negativeInfinity.magnitude.isPositiveInfinity)
    }

    func testDescription() {
        XCTAssertEqual(MediaTime(value: 3, timescale: 2).description, "1.500000000s")
        XCTAssertEqual(MediaTime(value: -1, timescale: 1000).description, "-0.001000000s")
        XCTAssertEqual(MediaTime.indefinite.description, "indefinite")
    }

    func testCodable_roundTripsNumericAndSpecial() throws {
        for time in [MediaTime(value: 1001, timescale: 30000), .indefinite, .positiveInfinity, .invalid] {
            let data = try JSONEncoder().encode(time)
            let decoded = try JSONDecoder().decode(MediaTime.self, from: data)
            XCTAssertEqual(decoded, time)
            XCTAssertEqual(decoded.timescale, time.timescale)
        }
    }

    func testDecode_whenTimescaleNotPositive_throwsNamingIt() {
        let json = Data(#"{"value": 1, "timescale": 0}"#.utf8)
        XCTAssertThrowsError(try JSONDecoder().decode(MediaTime.self, from: json)) { error in
            XCTAssertTrue("\(error)".contains("timescale must be positive"))
        }
    }
}
