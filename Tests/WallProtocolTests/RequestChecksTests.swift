import LockstepTime
import WallProtocol
import XCTest

final class RequestChecksTests: XCTestCase {
    private let second = MediaTime(value: 1, timescale: 1)

    func testRate_refusesNonsenseNamingTheField() {
        for rate: Float in [0, 1000, 3.4e38, -3.4e38, 1e-30, .nan, .infinity] {
            XCTAssertThrowsError(try RequestChecks.rate(rate, canPlay: { _ in true }), "rate \(rate)") { error in
                XCTAssertTrue("\(error)".hasPrefix("rate: "), "\(error)")
            }
        }
        XCTAssertNoThrow(try RequestChecks.rate(1, canPlay: { _ in true }))
        XCTAssertNoThrow(try RequestChecks.rate(-2, canPlay: { _ in true }))
    }

    func testRate_whenItemCannotPlayIt_saysSo() {
        XCTAssertThrowsError(try RequestChecks.rate(2, canPlay: { $0 == 1 })) { error in
            XCTAssertEqual("\(error)", "rate: the loaded item cannot play at rate 2.0")
        }
    }

    func testItemTime_mustLieWithinTheItem() {
        let duration = second * 10
        XCTAssertNoThrow(try RequestChecks.itemTime(second * 9, duration: duration))
        XCTAssertNoThrow(try RequestChecks.itemTime(second * 1000, duration: .indefinite))
        XCTAssertThrowsError(try RequestChecks.itemTime(second * 1000, duration: duration)) { error in
            XCTAssertEqual("\(error)", "itemTimeNs: 1000.0 s is not within the item, which lasts 10.0 s")
        }
        XCTAssertThrowsError(try RequestChecks.itemTime(-second, duration: duration))
        XCTAssertThrowsError(try RequestChecks.itemTime(.invalid, duration: duration)) { error in
            XCTAssertTrue("\(error)".hasPrefix("itemTimeNs: must be a whole number of nanoseconds"), "\(error)")
        }
        XCTAssertThrowsError(try RequestChecks.itemTime(.positiveInfinity, duration: nil))
    }

    func testHostTime_mustBeAheadAndWithinTheHorizon() {
        let now = second * 1000
        let lead = MediaTime(value: 20, timescale: 1000)
        let horizon = second * 300
        XCTAssertNoThrow(try RequestChecks.hostTime(now + second, now: now, minimumLead: lead, horizon: horizon))
        XCTAssertThrowsError(try RequestChecks.hostTime(now, now: now, minimumLead: lead, horizon: horizon)) { error in
            XCTAssertTrue("\(error)".contains("has passed"), "\(error)")
        }
        let tenYears = second * (10 * 365 * 86_400)
        for far in [now + tenYears, MediaTime(value: .max, timescale: 1), .positiveInfinity, .invalid, .indefinite] {
            XCTAssertThrowsError(
                try RequestChecks.hostTime(far, now: now, minimumLead: lead, horizon: horizon), "\(far)"
            ) { error in
                XCTAssertTrue("\(error)".hasPrefix("hostTimeNs: "), "\(error)")
            }
        }
    }

    func testIdentifyDuration_isOneSecondToTenMinutes() {
        XCTAssertNoThrow(try RequestChecks.identifyDuration(MediaTime(value: 1, timescale: 1)))
        XCTAssertNoThrow(try RequestChecks.identifyDuration(MediaTime(value: 600, timescale: 1)))
        XCTAssertThrowsError(try RequestChecks.identifyDuration(MediaTime(value: 601, timescale: 1))) { error in
            XCTAssertEqual("\(error)", "durationNs: must be 1 s to 600 s, got 601.0 s")
        }
        XCTAssertThrowsError(try RequestChecks.identifyDuration(MediaTime(value: 999, timescale: 1000)))
        XCTAssertThrowsError(try RequestChecks.identifyDuration(.invalid))
        XCTAssertThrowsError(try RequestChecks.identifyDuration(.indefinite))
    }

    func testFramesLimit_andSnapshotSize_areBounded() {
        XCTAssertThrowsError(try RequestChecks.framesLimit(0))
        XCTAssertThrowsError(try RequestChecks.framesLimit(.max))
        XCTAssertNoThrow(try RequestChecks.framesLimit(4096))
        XCTAssertThrowsError(try RequestChecks.limit(10_001, atMost: 10_000))
        XCTAssertNoThrow(try RequestChecks.limit(10_000, atMost: 10_000))
        XCTAssertThrowsError(try RequestChecks.span(fromUnixMs: 5, toUnixMs: 5))
        XCTAssertNoThrow(try RequestChecks.span(fromUnixMs: .min, toUnixMs: .max))
        XCTAssertNil(try RequestChecks.snapshotSize(width: nil, height: nil, output: nil))
        XCTAssertThrowsError(try RequestChecks.snapshotSize(width: .max, height: 2, output: nil)) { error in
            XCTAssertEqual("\(error)", "width: must be 1 to 3840, got 18446744073709551615")
        }
        XCTAssertThrowsError(try RequestChecks.snapshotSize(width: 20000, height: 20000, output: nil))
        XCTAssertThrowsError(try RequestChecks.snapshotSize(width: 0, height: 2, output: nil))
        XCTAssertThrowsError(try RequestChecks.snapshotSize(width: 8, height: nil, output: nil))
        let eightK = try? RequestChecks.snapshotSize(
            width: 7680, height: 4320, output: CanvasSize(width: 7680, height: 4320))
        XCTAssertEqual(eightK?.width, 7680, "a screen larger than 4K may be snapshot at its size")
    }
}

final class MediaRootsTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-roots-\(getpid())")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("media"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: folder.appendingPathComponent("media/clip.mp4"))
        try Data("x".utf8).write(to: folder.appendingPathComponent("secret.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("media/escape.mp4").path,
            withDestinationPath: folder.appendingPathComponent("secret.txt").path)
        XCTAssertEqual(mkfifo(folder.appendingPathComponent("media/fifo.mp4").path, 0o600), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testResolve_acceptsRegularFilesInsideTheRoots() throws {
        let roots = MediaRoots([folder.appendingPathComponent("media").path])
        let resolved = try roots.resolve(folder.appendingPathComponent("media/clip.mp4").path)
        XCTAssertTrue(resolved.hasSuffix("/media/clip.mp4"), resolved)
    }

    func testResolve_refusesWhatLiesOutsideWithoutSayingWhetherItExists() {
        let roots = MediaRoots([folder.appendingPathComponent("media").path])
        let outside = [
            folder.appendingPathComponent("secret.txt").path, folder.appendingPathComponent("nothing.txt").path,
            folder.appendingPathComponent("media/../secret.txt").path,
            folder.appendingPathComponent("media/escape.mp4").path, "/dev/kmsg", "/etc/passwd",
        ]
        for path in outside {
            XCTAssertThrowsError(try roots.resolve(path), path) { error in
                XCTAssertTrue("\(error)".contains("is not inside the media roots"), "\(path): \(error)")
            }
        }
    }

    func testResolve_namesMissingFilesFifosAndRelativePaths() {
        let roots = MediaRoots([folder.appendingPathComponent("media").path])
        XCTAssertThrowsError(try roots.resolve(folder.appendingPathComponent("media/gone.mp4").path)) { error in
            XCTAssertTrue("\(error)".hasSuffix("no such file"), "\(error)")
        }
        XCTAssertThrowsError(try roots.resolve(folder.appendingPathComponent("media/fifo.mp4").path)) { error in
            XCTAssertTrue("\(error)".hasSuffix("is not a regular file"), "\(error)")
        }
        XCTAssertThrowsError(try roots.resolve("media/clip.mp4")) { error in
            XCTAssertTrue("\(error)".contains("must be an absolute path"), "\(error)")
        }
        XCTAssertThrowsError(try roots.resolve("")) { error in
            XCTAssertTrue("\(error)".hasPrefix("media: "), "\(error)")
        }
    }
}
