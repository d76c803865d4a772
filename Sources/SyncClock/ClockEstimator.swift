/// The master's offset and rate, as a line over local time, with the set of lines still possible.
struct ClockEstimate: Sendable {
    /// The local time the line is anchored at (the newest sample's midpoint), ns.
    var referenceLocal: Int64
    /// Offsets below are relative to this one, ns.
    var referenceOffset: Int64
    /// The estimated offset at `referenceLocal`, relative to `referenceOffset`, ns.
    var offset: Double
    /// The estimated rate difference, ns per second (ppb).
    var rate: Double
    /// The lines the samples still allow.
    var region: FeasibleRegion
    /// How far the true offset may stray from a line per second away from the reference, ns/s.
    var wander: Double
    /// Local times of the oldest and newest sample used.
    var span: ClosedRange<Int64>
    var sampleCount: Int

    func seconds(from local: Int64) -> Double { Double(local - referenceLocal) / 1e9 }

    /// The estimated master time at local time `local`.
    func masterNanoseconds(atLocal local: Int64) -> Int64 {
        let x = seconds(from: local)
        return local + referenceOffset + Int64((offset + rate * x).rounded())
    }

    /// The range of offsets (master − local) the samples allow at `local`, relative to
    /// `referenceOffset`, ns.
    func offsetRange(atLocal local: Int64) -> ClosedRange<Double> {
        let x = seconds(from: local)
        let range = region.range(at: x)
        let stray = wander * abs(x)
        return (range.lowerBound - stray)...(range.upperBound + stray)
    }

    var ratePPM: Double { rate / 1e3 }
}

/// Estimates the master's offset and rate from a window of samples, and notices when the master's
/// time jumped.
///
/// Every sample constrains the master's offset line (see `ClockSample` and `FeasibleRegion`). A new
/// sample that no line through the window can satisfy means one of three things, told apart as
/// follows:
/// - the rate changed (an oscillator warmed up, a master's NTP slewed): the sample fits the most
///   recent samples, so the older ones are dropped;
/// - the sample is wrong (it fits nothing): it is rejected;
/// - the master's time jumped (restart on another clock): several consecutive samples fit nothing
///   before them but fit one another; the window restarts from them. Once the client is locked
///   (`guarded`) that takes more samples over seconds, not milliseconds: a sample far outside the
///   current error bound is held back as suspect, so a few spoofed replies cannot move the estimate
///   or make the bound dishonest.
struct ClockEstimator: Sendable {
    struct Configuration: Sendable, Hashable {
        /// Samples kept. The estimate's error under jitter falls with the number of samples (the
        /// fastest exchanges set it), so the window is large; 256 samples cost well under a millisecond.
        var windowSize = 256
        /// Added to every constraint for clock reads and realtime-to-monotonic conversion, ns.
        var timestampUncertainty: Int64 = 1_000
        /// How far the clocks' relative rate may stray from a constant, ns/s (0.1 ppm): each sample's
        /// constraints widen by this times the sample's age.
        var rateWander: Double = 100
        /// The a-priori bound on the rate difference, ns/s: 2.5 %, two simulated clocks at their
        /// ±1 % limits.
        var maximumRate: Double = 25_000_000
        /// A sample that fits fewer recent samples than this is not taken as a rate change.
        var minimumRetained = 4
        /// Consecutive misfits that fit one another and confirm a jump of the master's time.
        var jumpConfirmations = 3
        /// Once locked, a jump needs this many consecutive misfits that fit one another...
        var guardedJumpConfirmations = 5
        /// ...spanning at least this long, ns: a master that restarted on another clock keeps
        /// answering from it, while a few forged or corrupted replies do not move a locked client.
        var guardedJumpSpan: Int64 = 2_000_000_000
        /// The point estimate is the centroid of the bands shrunk to this many ns short of the
        /// deepest common margin (see `estimationCenter`); nil keeps the plain centroid.
        var estimationSlack: Double? = 2_000
    }

    enum Outcome: Hashable, Sendable {
        /// Taken into the window; `dropped` old samples no longer fitted.
        case accepted(dropped: Int)
        /// Fits nothing in the window: rejected unless later samples confirm it.
        case rejected
        /// The master's time jumped: the window restarted from the confirming samples.
        case jumped
    }

    let configuration: Configuration
    private(set) var window: [ClockSample] = []
    private var misfits: [ClockSample] = []
    private(set) var estimate: ClockEstimate?

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets everything: the master's timeline changed.
    mutating func reset() {
        window.removeAll(keepingCapacity: true)
        misfits.removeAll()
        estimate = nil
    }

    /// - Parameter guarded: the client is locked; a jump then needs `guardedJumpConfirmations`
    ///   samples spanning `guardedJumpSpan`.
    mutating func add(_ sample: ClockSample, guarded: Bool = false) -> Outcome {
        // The oldest sample leaves when the window is full, consistent or not.
        let base = window.suffix(configuration.windowSize - 1)
        if let fitted = estimateIfConsistent(base, adding: sample) {
            commit(base + [sample], fitted)
            misfits.removeAll()
            return .accepted(dropped: 0)
        }
        if let (kept, fitted) = longestConsistentSuffix(of: base, adding: sample) {
            let dropped = base.count - kept
            commit(base.suffix(kept) + [sample], fitted)
            misfits.removeAll()
            return .accepted(dropped: dropped)
        }
        misfits.append(sample)
        while !misfits.isEmpty, estimateIfConsistent(misfits.dropLast(), adding: misfits.last!) == nil {
            misfits.removeFirst()
        }
        let confirmations = guarded ? configuration.guardedJumpConfirmations : configuration.jumpConfirmations
        let span = misfits.last.map { $0.clientReceive - misfits[0].clientSend } ?? 0
        if misfits.count >= confirmations, !guarded || span >= configuration.guardedJumpSpan,
            let fitted = estimateIfConsistent(misfits.dropLast(), adding: misfits.last!)
        {
            commit(misfits.suffix(configuration.windowSize), fitted)
            misfits.removeAll()
            return .jumped
        }
        return .rejected
    }

    private mutating func commit(_ samples: some Sequence<ClockSample>, _ fitted: ClockEstimate) {
        window = Array(samples)
        estimate = fitted
    }

    /// The longest run of most recent samples of `base` (at least `minimumRetained`) that `sample`
    /// fits. Fewer samples constrain less, so fitting is monotone in the run's length: binary search.
    private func longestConsistentSuffix(of base: ArraySlice<ClockSample>, adding sample: ClockSample)
        -> (Int, ClockEstimate)?
    {
        guard base.count >= configuration.minimumRetained,
            var best = estimateIfConsistent(base.suffix(configuration.minimumRetained), adding: sample)
                .map({ (configuration.minimumRetained, $0) })
        else { return nil }
        var low = configuration.minimumRetained + 1
        var high = base.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if let fitted = estimateIfConsistent(base.suffix(middle), adding: sample) {
                best = (middle, fitted)
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return best
    }

    /// The point estimate within the honest region.
    ///
    /// Every constraint band is as wide as its round trip, because nothing rules out an asymmetric
    /// path. But a delay common to every exchange is almost always symmetric (cables, switches, the
    /// two kernels' stacks); it widens all bands alike and, with a tilt, makes the region long in the
    /// rate direction, so its plain centroid wanders. Shrinking every band by the same margin removes
    /// that common delay: the deepest line still inside all shrunk bands (an L∞ fit of the bands) is
    /// found by bisection on the margin, and the estimate is the centroid of the region shrunk by
    /// `estimationSlack` less than that margin, so it rests on a few constraints rather than one vertex.
    private func estimationCenter(
        region: FeasibleRegion, shrunk: (Double) -> FeasibleRegion?, newest: ClockSample,
        samples: some Collection<ClockSample>
    ) -> FeasibleRegion.Vertex {
        guard let slack = configuration.estimationSlack else { return region.centroid }
        // No band can shrink by more than half its sample's round trip (plus the widening), so the
        // fastest sample brackets the margin; 100 ns resolution is plenty for a margin approached
        // within `estimationSlack`.
        let fastest = samples.reduce(newest.delay) { min($0, $1.delay) }
        var feasible = 0.0
        var infeasible =
            Double(fastest) / 2 + Double(configuration.timestampUncertainty)
            + configuration.rateWander * Double(newest.clientReceive - (samples.first ?? newest).clientSend) / 1e9 + 1
        while infeasible - feasible > 100 {
            let middle = (feasible + infeasible) / 2
            if shrunk(middle) != nil { feasible = middle } else { infeasible = middle }
        }
        return shrunk(max(0, feasible - slack))?.centroid ?? region.centroid
    }

    /// The estimate from `samples` and `newest`, or nil if no line satisfies them all.
    func estimateIfConsistent(_ samples: some Collection<ClockSample>, adding newest: ClockSample) -> ClockEstimate? {
        let referenceLocal = newest.localMidpoint
        let referenceOffset = newest.midpointOffset
        let epsilon = Double(configuration.timestampUncertainty)
        let wander = configuration.rateWander
        let maximumRate = configuration.maximumRate
        func x(_ local: Int64) -> Double { Double(local - referenceLocal) / 1e9 }

        // Start from the box the newest sample allows for any rate in bounds, then cut it by every
        // sample's two constraints, each widened by the timestamp uncertainty and the rate wander
        // over its age.
        // Every sample's two constraints, relative to the reference, widened by the timestamp
        // uncertainty and by the rate wander over the sample's age; newest first.
        var constraints: [(x: Double, limit: Double, isUpper: Bool)] = []
        constraints.reserveCapacity(2 * samples.count + 2)
        for sample in CollectionOfOne(newest) + samples.reversed() {
            let sendX = x(sample.clientSend)
            let receiveX = x(sample.clientReceive)
            constraints.append(
                (sendX, Double(sample.upperOffset - referenceOffset) + epsilon + wander * abs(sendX), true))
            constraints.append(
                (receiveX, Double(sample.lowerOffset - referenceOffset) - epsilon - wander * abs(receiveX), false))
        }
        func region(shrunkBy shrink: Double) -> FeasibleRegion? {
            let upper = constraints[0].limit - shrink
            let lower = constraints[1].limit + shrink
            guard upper >= lower else { return nil }
            var region = FeasibleRegion(
                offsets: (lower - maximumRate * abs(constraints[1].x))...(upper + maximumRate * abs(constraints[0].x)),
                maximumRate: maximumRate)
            for constraint in constraints {
                if constraint.isUpper {
                    region.keepBelow(constraint.limit - shrink, at: constraint.x)
                } else {
                    region.keepAbove(constraint.limit + shrink, at: constraint.x)
                }
                if region.isEmpty { return nil }
            }
            return region
        }
        guard let region = region(shrunkBy: 0) else { return nil }
        let center = estimationCenter(region: region, shrunk: region(shrunkBy:), newest: newest, samples: samples)
        let oldest = samples.first ?? newest
        return ClockEstimate(
            referenceLocal: referenceLocal, referenceOffset: referenceOffset, offset: center.a, rate: center.b,
            region: region, wander: wander, span: oldest.clientSend...newest.clientReceive,
            sampleCount: samples.count + 1)
    }
}
