/// When each screen's light changes, from the clean band reads of one or more camera videos of the
/// wall showing the calibration pattern.
///
/// Every screen shows frame n from n·T + L_i on (T the pattern's frame period as the camera's clock
/// counts it, L_i the screen's offset on the glass). A camera picture taken at time t in which a
/// band reads frame n says n·T + L_i ≤ t < (n + 1)·T + L_i: an interval one frame long for L_i. The
/// camera's rate is not a multiple of the screens', so the pictures fall at every phase of the
/// screens' frames, and the intersection of those intervals narrows to about the spacing of the
/// phases the video covered: well under a millisecond in ten seconds at 240 fps. Each band gives
/// its own intersection; the bands' times differ by the screens' offsets and by when the camera
/// read each band's row (a rolling shutter reads the picture top to bottom over `readout`):
///
///     start(band) = L_i + o_video + s·lower(band) − readout·row(band)
///
/// where s is how much later a screen shows its lower band than its upper (a screen that scans out
/// top to bottom) and o_video each video's own time origin. A least-squares fit weighted by each
/// band's interval gives the L_i, the readout and, from two videos filmed with the camera the other
/// way up, s. One video alone cannot tell a screen's scan-out from the camera's readout: the fit
/// then assumes the screens show every row at once, and says so (and widens its uncertainty when the
/// data contradict it).
public enum GlassTiming {
    /// The clean reads of one video.
    public struct Video: Sendable {
        public var name: String
        /// Each read and the camera's time of its picture, in seconds.
        public var reads: [(time: Double, read: PatternReader.Read)]
        /// The camera's frames per second (pictures in the video over its duration).
        public var frameRate: Double

        public init(name: String, reads: [(time: Double, read: PatternReader.Read)], frameRate: Double) {
            (self.name, self.reads, self.frameRate) = (name, reads, frameRate)
        }
    }

    /// One band's intersection: when it started showing frame 0, in its video's time.
    public struct Band: Sendable {
        public var video: Int
        public var screen: Int
        public var band: Int
        public var row: Double
        public var start: Double
        /// Half the intersection's width: start is within this of when the band changed, given
        /// when the camera read its row. The camera's exposure widens every band's interval alike,
        /// so this bounds the start but overstates its error.
        public var halfWidth: Double
        /// How closely the reads' bounds crowd at the intersection's ends: the gap in camera phase
        /// the video left there, and so how far from the band's change the start can be.
        public var spacing: Double
        /// The standard deviation of `start`: the larger of the spacing's, and of how far the
        /// starts found from two halves of the reads differ in this video.
        public var deviation: Double
        public var reads: Int
    }

    public struct ScreenOffset: Sendable, Equatable {
        public var screen: Int
        /// When this screen's light changes less the mean of all screens', in seconds.
        public var offset: Double
        /// Two standard deviations of `offset`, in seconds, plus what the fit's assumption leaves open.
        public var uncertainty: Double
        public var reads: Int
        /// The part of `uncertainty` the assumption leaves open (an unknown readout).
        public var assumed = 0.0
    }

    /// What the fit rests on.
    public enum Assumption: Sendable, Equatable {
        /// Two videos filmed different ways up: nothing assumed of the screens' scan-out.
        case none
        /// One video: the screens show all their rows at once.
        case screensShowRowsAtOnce
        /// One video whose bands contradict that: the camera's readout is taken as half a frame,
        /// give or take half a frame, which the uncertainty includes.
        case readoutUnknown
    }

    public struct Result: Sendable {
        public var screens: [ScreenOffset]
        /// The camera's readout, top to bottom of its picture, in seconds.
        public var readout: Double
        /// How much later a screen shows its lower band than its upper, in seconds (nil: not
        /// measured: one video).
        public var scanOut: Double?
        /// The pattern's frame period as each video's clock counted it.
        public var framePeriods: [Double]
        public var bands: [Band]
        public var assumption: Assumption
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Bands with fewer clean reads than this are left out.
    static let fewestReads = 20

    /// The screens' offsets on the glass. `framePeriod` is the pattern's frame period in seconds.
    public static func solve(_ videos: [Video], framePeriod: Double) throws(Failure) -> Result {
        try estimate(videos, framePeriod: framePeriod, assumption: nil)
    }

    /// The fit of all `videos`' reads, under `assumption` (nil: the least one the videos allow).
    static func estimate(_ videos: [Video], framePeriod: Double, assumption given: Assumption?) throws(Failure)
        -> Result
    {
        var bands: [Band] = []
        var periods: [Double] = []
        for (index, video) in videos.enumerated() {
            let (found, period) = try intersect(video, index: index, framePeriod: framePeriod)
            bands += found
            periods.append(period)
        }
        let screens = Array(Set(bands.map(\.screen))).sorted()
        guard screens.count >= 2 else {
            throw Failure(
                description:
                    "the videos show \(screens.count) screen\(screens.count == 1 ? "" : "s") with the pattern read "
                    + "cleanly; calibrate needs at least two")
        }
        let frameRate = videos.map(\.frameRate).min() ?? 240
        var fit: Fit?
        var assumption = Assumption.none
        if given == .readoutUnknown {
            assumption = .readoutUnknown
            fit = Fit(bands, screens: screens, videos: videos.count, readout: 0.5 / frameRate, scanOut: true)
        } else if given == .screensShowRowsAtOnce {
            assumption = .screensShowRowsAtOnce
            fit = Fit(bands, screens: screens, videos: videos.count, readout: nil, scanOut: false)
        } else if videos.count > 1,
            let both = Fit(bands, screens: screens, videos: videos.count, readout: nil, scanOut: true),
            both.deviation(of: both.scanIndex!) < framePeriod
        {
            fit = both
        }
        if fit == nil, given == nil {
            assumption = .screensShowRowsAtOnce
            fit = Fit(bands, screens: screens, videos: videos.count, readout: nil, scanOut: false)
            let frame = 1 / frameRate
            if let readout = fit?.readout, readout < -0.25 * frame || readout > 1.25 * frame {
                assumption = .readoutUnknown
                fit = Fit(bands, screens: screens, videos: videos.count, readout: 0.5 * frame, scanOut: true)
            }
        }
        guard let fit else { throw Failure(description: "the bands' timings do not determine the screens' offsets") }
        var offsets = fit.offsets(screens: screens, bands: bands)
        if assumption == .readoutUnknown {
            // The readout is anywhere from 0 to a frame: a screen whose bands sit lower in the
            // picture than the wall's mean is uncertain by that much more.
            let rows = screens.map { screen in
                let own = bands.filter { $0.screen == screen }
                return own.map(\.row).reduce(0, +) / Double(max(1, own.count))
            }
            let mean = rows.reduce(0, +) / Double(rows.count)
            for index in offsets.indices {
                offsets[index].assumed = 0.5 / frameRate * abs(rows[index] - mean)
                offsets[index].uncertainty += offsets[index].assumed
            }
        }
        return Result(
            screens: offsets, readout: fit.readout, scanOut: fit.scanIndex.map { fit.solution[$0] },
            framePeriods: periods,
            bands: bands, assumption: assumption)
    }

    /// Each band's intersection in one video, and the frame period that makes them tightest.
    static func intersect(_ video: Video, index: Int, framePeriod: Double) throws(Failure) -> ([Band], Double) {
        // Each ring's screen number is what most of its reads say.
        var numbers: [Int: [Int: Int]] = [:]
        for (_, read) in video.reads { numbers[read.ring, default: [:]][read.screen, default: 0] += 1 }
        let screenOf = numbers.mapValues { counts in counts.max { $0.value < $1.value }!.key }
        var groups: [[Int]: [(time: Double, frame: Int, row: Double)]] = [:]
        for (time, read) in video.reads where screenOf[read.ring] == read.screen {
            groups[[read.ring, read.band], default: []].append((time, read.frame, read.row))
        }
        var series: [(key: [Int], reads: [(time: Double, frame: Double, row: Double)])] = []
        for (key, reads) in groups {
            let unwrapped = unwrap(reads.sorted { $0.time < $1.time }, framePeriod: framePeriod)
            if unwrapped.count >= fewestReads { series.append((key, unwrapped)) }
        }
        guard let reference = series.max(by: { $0.reads.count < $1.reads.count }) else {
            throw Failure(
                description: "\(video.name): no screen's pattern was read cleanly in \(fewestReads) pictures; "
                    + "film the whole wall, steady, in focus, with the screens filling the picture")
        }
        // Every band counts frames from the same origin: their numbers at one time differ by the
        // screens' offsets, well under half the pattern's period.
        let origin = { (reads: [(time: Double, frame: Double, row: Double)]) in
            reads.map { $0.time - $0.frame * framePeriod }.reduce(0, +) / Double(reads.count)
        }
        let referenceOrigin = origin(reference.reads)
        let span = Double(CalibrationPattern.period) * framePeriod
        for index in series.indices {
            let wraps = ((referenceOrigin - origin(series[index].reads)) / span).rounded()
            for read in series[index].reads.indices {
                series[index].reads[read].frame -= wraps * Double(CalibrationPattern.period)
            }
        }
        let period = bestPeriod(series.map(\.reads), around: leastSquaresPeriod(series.map(\.reads)) ?? framePeriod)
        var bands = series.map { key, reads in
            let (low, high) = interval(reads, period: period)
            return Band(
                video: index, screen: screenOf[key[0]]!, band: key[1],
                row: reads.map(\.row).reduce(0, +) / Double(reads.count),
                start: (low + high) / 2, halfWidth: abs(high - low) / 2, spacing: spacing(reads, period: period),
                deviation: 0, reads: reads.count)
        }.sorted { ($0.screen, $0.band) < ($1.screen, $1.band) }
        // How far apart the starts from two halves of each band's reads are, over all bands: the
        // error one half of the reads makes, which the whole's is no larger than. The halves are
        // drawn by a hash of the read's place, not by turns: a camera at 4 pictures a screen frame
        // gives its even and odd pictures different phases.
        let differences = series.map { _, reads in
            let halves = [0, 1].map { side in
                let half = reads.enumerated().filter {
                    (UInt32(truncatingIfNeeded: $0.offset) &* 0x9E37_79B1) >> 31 == side
                }
                .map(\.element)
                let (low, high) = interval(half, period: period)
                return (low + high) / 2
            }
            return halves[0] - halves[1]
        }
        let deviation = (differences.map { $0 * $0 }.reduce(0, +) / Double(2 * differences.count)).squareRoot()
        for band in bands.indices { bands[band].deviation = max(deviation, bands[band].spacing / 3.0.squareRoot()) }
        return (bands, period)
    }

    /// Frame numbers counted on past the pattern's period, from the reads' times; a read whose
    /// number is not within a frame and a half of where time says it should be is left out.
    static func unwrap(_ reads: [(time: Double, frame: Int, row: Double)], framePeriod: Double)
        -> [(time: Double, frame: Double, row: Double)]
    {
        var out: [(time: Double, frame: Double, row: Double)] = []
        let period = Double(CalibrationPattern.period)
        for read in reads {
            guard let last = out.last else {
                out.append((read.time, Double(read.frame), read.row))
                continue
            }
            let expected = last.frame + (read.time - last.time) / framePeriod
            let candidate = Double(read.frame) + period * ((expected - Double(read.frame)) / period).rounded()
            if abs(candidate - expected) <= 1.5 { out.append((read.time, candidate, read.row)) }
        }
        return out
    }

    /// The frame period that fits time against frame number best, every band with its own origin.
    static func leastSquaresPeriod(_ series: [[(time: Double, frame: Double, row: Double)]]) -> Double? {
        var numerator = 0.0
        var denominator = 0.0
        for reads in series {
            let meanFrame = reads.map(\.frame).reduce(0, +) / Double(reads.count)
            let meanTime = reads.map(\.time).reduce(0, +) / Double(reads.count)
            for read in reads {
                numerator += (read.frame - meanFrame) * (read.time - meanTime)
                denominator += (read.frame - meanFrame) * (read.frame - meanFrame)
            }
        }
        return denominator > 0 ? numerator / denominator : nil
    }

    /// The period near `estimate` (within 300 ppm) whose narrowest band intersection is widest:
    /// the camera's clock is not the wall's, and an error of 100 ppm is a millisecond in ten seconds.
    static func bestPeriod(_ series: [[(time: Double, frame: Double, row: Double)]], around estimate: Double) -> Double
    {
        func score(_ period: Double) -> Double {
            series.map { reads in
                let (low, high) = interval(reads, period: period)
                return high - low
            }.min() ?? 0
        }
        var best = (period: estimate, score: score(estimate))
        var step = estimate * 20e-6
        var range = estimate * 300e-6
        while step > estimate * 0.1e-6 {
            let centre = best.period
            var candidate = centre - range
            while candidate <= centre + range {
                let candidateScore = score(candidate)
                if candidateScore > best.score { best = (candidate, candidateScore) }
                candidate += step
            }
            range = step
            step /= 8
        }
        return best.period
    }

    /// What one read says of the band's start: a read at `time` of frame `frame` puts it at or
    /// after `time` less frame + 1 periods, and at or before `time` less frame periods.
    static func bounds(of read: (time: Double, frame: Double, row: Double), period: Double) -> (
        low: Double, high: Double
    ) {
        (read.time - (read.frame + 1) * period, read.time - read.frame * period)
    }

    /// The intersection of the reads' intervals for the band's start: a few of the most extreme
    /// bounds (one in 500) are left out, for a read a glare or a shake got wrong.
    static func interval(_ reads: [(time: Double, frame: Double, row: Double)], period: Double) -> (Double, Double) {
        let trim = reads.count / 500
        var lows = [Double](repeating: -.infinity, count: trim + 1)
        var highs = [Double](repeating: .infinity, count: trim + 1)
        for read in reads {
            let (low, high) = bounds(of: read, period: period)
            if low > lows[trim] {
                lows[trim] = low
                lows.sort(by: >)
            }
            if high < highs[trim] {
                highs[trim] = high
                highs.sort()
            }
        }
        return (lows[trim], highs[trim])
    }

    /// The mean gap between the six distinct bounds nearest each end of the intersection, averaged
    /// over both ends. A camera whose rate is a simple ratio of the screens' (50 and 60) samples the
    /// same few phases over and over: their bounds repeat, and the gap is the phases' spacing.
    static func spacing(_ reads: [(time: Double, frame: Double, row: Double)], period: Double) -> Double {
        func distinct(_ values: [Double]) -> [Double] {
            var kept: [Double] = []
            for value in values where kept.last.map({ abs($0 - value) > 1e-6 }) ?? true { kept.append(value) }
            return kept
        }
        let trim = reads.count / 500
        let all = reads.map { bounds(of: $0, period: period) }
        let top = Array(distinct(all.map(\.low).sorted(by: >)).dropFirst(trim).prefix(6))
        let bottom = Array(distinct(all.map(\.high).sorted()).dropFirst(trim).prefix(6))
        guard top.count > 1, bottom.count > 1 else { return period }
        return
            ((top.first! - top.last!) / Double(top.count - 1) + (bottom.last! - bottom.first!)
                / Double(bottom.count - 1))
            / 2
    }

    /// The weighted least-squares fit of the bands' starts.
    struct Fit {
        /// L per screen, an origin per video after the first, then the readout (unless given),
        /// then the scan-out (if fitted).
        var solution: [Double]
        var covariance: [[Double]]
        var readoutIndex: Int?
        var scanIndex: Int?
        var fixedReadout: Double?

        var readout: Double { readoutIndex.map { solution[$0] } ?? fixedReadout ?? 0 }

        func deviation(of index: Int) -> Double { covariance[index][index].squareRoot() }

        init?(_ bands: [Band], screens: [Int], videos: Int, readout: Double?, scanOut: Bool) {
            var unknowns = screens.count + videos - 1
            if readout == nil {
                readoutIndex = unknowns
                unknowns += 1
            }
            if scanOut {
                scanIndex = unknowns
                unknowns += 1
            }
            fixedReadout = readout
            var normal = [[Double]](repeating: [Double](repeating: 0, count: unknowns + 1), count: unknowns)
            var rows: [([Double], Double, Double)] = []
            for band in bands {
                var row = [Double](repeating: 0, count: unknowns)
                row[screens.firstIndex(of: band.screen)!] = 1
                if band.video > 0 { row[screens.count + band.video - 1] = 1 }
                if let readoutIndex { row[readoutIndex] = -band.row }
                if let scanIndex { row[scanIndex] = Double(band.band) }
                let target = band.start + (readout ?? 0) * band.row
                // The residuals widen this when the bands disagree by more.
                let sigma = max(band.deviation, 5e-6)
                let weight = 1 / (sigma * sigma)
                rows.append((row, target, weight))
                for i in 0..<unknowns {
                    for j in 0..<unknowns { normal[i][j] += weight * row[i] * row[j] }
                    normal[i][unknowns] += weight * row[i] * target
                }
            }
            guard bands.count >= unknowns, let solution = LinearSystem.solve(normal) else { return nil }
            self.solution = solution
            var covariance: [[Double]] = []
            for column in 0..<unknowns {
                var system = normal
                for i in 0..<unknowns { system[i][unknowns] = i == column ? 1 : 0 }
                guard let inverse = LinearSystem.solve(system) else { return nil }
                covariance.append(inverse)
            }
            // Residuals larger than the intervals say widen the uncertainty in proportion.
            let chiSquare = rows.reduce(0.0) { sum, row in
                let predicted = zip(row.0, solution).reduce(0) { $0 + $1.0 * $1.1 }
                return sum + row.2 * (predicted - row.1) * (predicted - row.1)
            }
            let freedom = bands.count - unknowns
            let scale = freedom > 0 ? max(1, chiSquare / Double(freedom)) : 1
            self.covariance = covariance.map { $0.map { $0 * scale } }
        }

        /// Each screen's L less the mean of all, with two standard deviations.
        func offsets(screens: [Int], bands: [Band]) -> [ScreenOffset] {
            let count = Double(screens.count)
            let mean = solution[0..<screens.count].reduce(0, +) / count
            return screens.enumerated().map { index, screen in
                var variance = 0.0
                for i in 0..<screens.count {
                    for j in 0..<screens.count {
                        let a = (i == index ? 1 : 0) - 1 / count
                        let b = (j == index ? 1 : 0) - 1 / count
                        variance += a * b * covariance[i][j]
                    }
                }
                return ScreenOffset(
                    screen: screen, offset: solution[index] - mean, uncertainty: 2 * max(0, variance).squareRoot(),
                    reads: bands.filter { $0.screen == screen }.map(\.reads).reduce(0, +))
            }
        }
    }
}
