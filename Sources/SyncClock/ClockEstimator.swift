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
    /// The lines the samples allow whatever the path's asymmetry: the guaranteed region.
    var region: FeasibleRegion
    /// The lines the samples allow if the two directions' shortest delays are equal, as NTP and
    /// chrony assume (see `ClockEstimator.symmetricRegion`): the tight bound's region, inside
    /// `region`, and holding the point estimate.
    var symmetricRegion: FeasibleRegion
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

    /// The range of offsets (master − local) the lines of `region` (or `symmetricRegion`) allow at
    /// `local`, relative to `referenceOffset`, ns.
    func offsetRange(atLocal local: Int64, guaranteed: Bool) -> ClosedRange<Double> {
        let x = seconds(from: local)
        let range = (guaranteed ? region : symmetricRegion).range(at: x)
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
        /// The symmetric region (see `symmetricSlack`) keeps at least this slack below the deepest
        /// common margin, ns, so it never collapses onto the one deepest line.
        var minimumSymmetricSlack: Double = 2_000
        /// Samples needed before the symmetric region is used (twice the order below, so the spacing
        /// is measured among enough constraints); before, the estimate and bound are the guaranteed ones.
        var minimumSymmetricSamples = 16
        /// The tight bound's region is the bands shrunk to this many spacings short of the deepest
        /// margin (see `symmetricSlack`). Calibrated on issue 9's paths (`RealisticPathTests`, seeds
        /// 1-4, 60 s): at 6 the bound contained the true error for every sample; at 4.5 the
        /// congested path's seed 3 fell to 99.3 %, at 3 two paths to 87 %. The price is a bound
        /// 2-7× the true p99, where the fastest exchanges happened to straddle the true line closely.
        var symmetricSlackFactor = 6.0
        /// Which nearest constraint measures the spacing (see `symmetricSlack`).
        var spacingOrder = 8
        /// Samples that leave the window live on as anchors: of each `anchorInterval` of local time,
        /// ns, the one with the shortest delay, up to `anchorCount` of them (5 minutes). See `anchors`.
        var anchorInterval: Int64 = 4_000_000_000
        var anchorCount = 75
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
    /// The fastest exchange of each `anchorInterval` before the window, oldest first.
    ///
    /// The window spans 25 s at the usual poll. On a congested path its fastest exchanges come in
    /// clusters, so the lines it allows pivot about one cluster, and the rate they allow is uncertain
    /// by several ppm: at the newest sample, tens of µs. The master's rate changes slowly, so the best
    /// exchanges of the minutes before keep constraining it, widened like every constraint by the
    /// rate wander over their age. They take no part in the spacing that sets the tight bound's
    /// slack (they were picked for being fast), and they go when the window no longer fits them.
    private(set) var anchors: [ClockSample] = []
    private var misfits: [ClockSample] = []
    private(set) var estimate: ClockEstimate?

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Forgets everything: the master's timeline changed.
    mutating func reset() {
        window.removeAll(keepingCapacity: true)
        anchors.removeAll()
        misfits.removeAll()
        estimate = nil
    }

    /// - Parameter guarded: the client is locked; a jump then needs `guardedJumpConfirmations`
    ///   samples spanning `guardedJumpSpan`.
    mutating func add(_ sample: ClockSample, guarded: Bool = false) -> Outcome {
        // The oldest sample leaves when the window is full, consistent or not.
        let base = window.suffix(configuration.windowSize - 1)
        if !anchors.isEmpty, let fitted = estimateIfConsistent(base, adding: sample, anchors: anchors) {
            commit(base + [sample], fitted)
            misfits.removeAll()
            return .accepted(dropped: 0)
        }
        if let fitted = estimateIfConsistent(base, adding: sample) {
            // The anchors no longer fit (or there are none): the rate moved since.
            anchors.removeAll()
            commit(base + [sample], fitted)
            misfits.removeAll()
            return .accepted(dropped: 0)
        }
        if let (kept, fitted) = longestConsistentSuffix(of: base, adding: sample) {
            let dropped = base.count - kept
            anchors.removeAll()
            // The samples dropped no longer fit: they do not become anchors.
            commit(base.suffix(kept) + [sample], fitted, anchoringLeavers: false)
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
            anchors.removeAll()
            commit(misfits.suffix(configuration.windowSize), fitted, anchoringLeavers: false)
            misfits.removeAll()
            return .jumped
        }
        return .rejected
    }

    /// Makes `samples` the window. With `anchoringLeavers`, the samples of the old window older than
    /// all of them become anchor candidates; not when they left because they no longer fit.
    private mutating func commit(
        _ samples: some Sequence<ClockSample>, _ fitted: ClockEstimate, anchoringLeavers: Bool = true
    ) {
        let kept = Array(samples)
        if anchoringLeavers {
            let oldest = kept.first?.clientSend ?? .max
            for leaving in window where leaving.clientSend < oldest {
                keepAsAnchor(leaving)
            }
        }
        window = kept
        estimate = fitted
    }

    private mutating func keepAsAnchor(_ sample: ClockSample) {
        let interval = configuration.anchorInterval
        guard configuration.anchorCount > 0, interval > 0 else { return }
        func bucket(_ time: Int64) -> Int64 { time >= 0 ? time / interval : (time + 1) / interval - 1 }
        if let last = anchors.last, bucket(last.clientSend) == bucket(sample.clientSend) {
            if sample.delay < last.delay { anchors[anchors.count - 1] = sample }
        } else {
            anchors.append(sample)
            if anchors.count > configuration.anchorCount { anchors.removeFirst() }
        }
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

    /// The deepest common margin: how far every band can shrink with a line still inside them all
    /// (an L∞ fit of the bands), by bisection to 100 ns.
    ///
    /// No band can shrink by more than half its sample's round trip (plus the widening), so the
    /// fastest sample brackets the margin.
    private func deepestMargin(
        newest: ClockSample, samples: some Collection<ClockSample>, isFeasible: (Double) -> Bool
    ) -> Double {
        let fastest = samples.reduce(newest.delay) { min($0, $1.delay) }
        var feasible = 0.0
        var infeasible =
            Double(fastest) / 2 + Double(configuration.timestampUncertainty)
            + configuration.rateWander * Double(newest.clientReceive - (samples.first ?? newest).clientSend) / 1e9 + 1
        while infeasible - feasible > 100 {
            let middle = (feasible + infeasible) / 2
            // Past 2^53 ns two neighbouring doubles are more than 100 apart: the bisection has
            // nothing left to halve and would spin for good (found by the fuzzer, with replies whose
            // times span years).
            guard middle > feasible, middle < infeasible else { break }
            if isFeasible(middle) { feasible = middle } else { infeasible = middle }
        }
        return feasible
    }

    /// How far the deepest margin may exceed the shortest one-way delay, ns: the slack of
    /// `symmetricRegion`.
    ///
    /// Every band is as wide as its round trip, because nothing rules out an asymmetric path. But if
    /// both directions' shortest delays are the same `d` (the assumption NTP and chrony make: cables,
    /// switches and the two kernels' stacks delay both ways alike), the true line lies inside every
    /// band shrunk by `d`. `d` is unobservable; the deepest margin `m` exceeds it by about as much as
    /// the fastest exchanges in each direction stayed above `d`. With `N` samples whose excess delays
    /// have density `f` near zero that is of order `1/(N·f)`, and its chance to exceed `t/(N·f)` falls
    /// roughly like `exp(-t)`. The constraints nearest the deepest line measure `1/(N·f)` without
    /// knowing `f`: the `k`-th nearest in a direction lies about `k/(N·f)` from it (`spacingOrder`).
    /// The slack is `symmetricSlackFactor` such spacings of the sparser direction, and at least
    /// `minimumSymmetricSlack`.
    private func symmetricSlack(
        _ constraints: ArraySlice<(x: Double, limit: Double, isUpper: Bool)>, deepest: FeasibleRegion.Vertex,
        margin: Double
    ) -> Double {
        var upper: [Double] = []
        var lower: [Double] = []
        for constraint in constraints {
            let line = deepest.a + deepest.b * constraint.x
            if constraint.isUpper {
                upper.append(constraint.limit - margin - line)
            } else {
                lower.append(line - constraint.limit - margin)
            }
        }
        let order = configuration.spacingOrder
        func spacing(_ residuals: [Double]) -> Double {
            let sorted = residuals.sorted()
            return max(0, sorted[min(order, sorted.count - 1)]) / Double(order)
        }
        let slack = configuration.symmetricSlackFactor * max(spacing(upper), spacing(lower))
        return max(slack, configuration.minimumSymmetricSlack)
    }

    /// The estimate from `samples` and `newest`, or nil if no line satisfies them all.
    func estimateIfConsistent(
        _ samples: some Collection<ClockSample>, adding newest: ClockSample, anchors: [ClockSample] = []
    ) -> ClockEstimate? {
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
        constraints.reserveCapacity(2 * (samples.count + anchors.count) + 2)
        for sample in CollectionOfOne(newest) + samples.reversed() + anchors.reversed() {
            let sendX = x(sample.clientSend)
            let receiveX = x(sample.clientReceive)
            constraints.append(
                (sendX, Double(sample.upperOffset - referenceOffset) + epsilon + wander * abs(sendX), true))
            constraints.append(
                (receiveX, Double(sample.lowerOffset - referenceOffset) - epsilon - wander * abs(receiveX), false))
        }
        // The window's constraints, which alone measure the spacing (see `anchors`).
        let windowConstraints = 2 * (samples.count + 1)
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
        guard let honest = region(shrunkBy: 0) else { return nil }
        // The point estimate is the symmetric region's centroid: it removes the delay common to both
        // directions, and rests on every constraint near the deepest line rather than on the two or
        // three that bind it (which tilt the line's rate by ppm on the congested path). Too few
        // samples say nothing about how closely the fastest ones approach the shortest delay: until
        // then both the estimate and the bound use the region that holds whatever the asymmetry.
        var symmetric = honest
        if samples.count + 1 >= configuration.minimumSymmetricSamples {
            let margin = deepestMargin(newest: newest, samples: samples) { region(shrunkBy: $0) != nil }
            if let deepest = region(shrunkBy: margin)?.centroid,
                let shrunk = region(
                    shrunkBy: max(
                        0,
                        margin - symmetricSlack(constraints.prefix(windowConstraints), deepest: deepest, margin: margin)
                    ))
            {
                symmetric = shrunk
            }
        }
        let center = symmetric.centroid
        let oldest = samples.first ?? newest
        return ClockEstimate(
            referenceLocal: referenceLocal, referenceOffset: referenceOffset, offset: center.a, rate: center.b,
            region: honest, symmetricRegion: symmetric, wander: wander, span: oldest.clientSend...newest.clientReceive,
            sampleCount: samples.count + 1)
    }
}
