import LockstepNet
import LockstepTime

@testable import NetImpair
@testable import SyncClock

/// A clock as a function of true time: `offset + t·(1 + drift)`, in nanoseconds.
struct SimulatedClock {
    var offset: Int64
    var driftPPM: Double

    func reading(at trueTime: Int64) -> Int64 {
        offset + trueTime + Int64((Double(trueTime) * driftPPM / 1e6).rounded())
    }

    /// The true time at which this clock reads `reading` (to within a nanosecond).
    func trueTime(atReading reading: Int64) -> Int64 {
        var estimate = Int64((Double(reading - offset) / (1 + driftPPM / 1e6)).rounded())
        estimate += reading - self.reading(at: estimate)
        return estimate
    }
}

/// How one direction of the simulated network delays packets, in nanoseconds.
struct SimulatedPath {
    var baseDelay: Int64 = 40_000
    /// Uniform extra delay in `0..<jitter`.
    var jitter: Int64 = 10_000
    /// Probability of a spike, and its size range.
    var spikeProbability = 0.0
    var spikeDelay: ClosedRange<Int64> = 1_000_000...20_000_000
    var lossProbability = 0.0

    func delay(using random: inout SplitMix64) -> Int64? {
        if lossProbability > 0, Double.random(in: 0..<1, using: &random) < lossProbability { return nil }
        var delay = baseDelay + (jitter > 0 ? Int64.random(in: 0..<jitter, using: &random) : 0)
        if spikeProbability > 0, Double.random(in: 0..<1, using: &random) < spikeProbability {
            delay += Int64.random(in: spikeDelay, using: &random)
        }
        return delay
    }
}

/// A client engine, a server responder and a network between them, all on simulated time; and the
/// clock a node follows from that one source: the engine's estimate through the selector and its
/// one servo, whose mapping and bounds are what the records and errors measure.
///
/// True time starts at 1 s. Events are processed in true-time order; the client's engine only ever
/// sees its own clock's readings, the server only the master clock's.
struct ClockSimulation {
    struct Record {
        var trueTime: Int64
        var status: ClockStatus
        /// Mapping's master time at the status's local time minus the true master time, ns.
        var error: Int64
    }

    var client: SimulatedClock
    var master: SimulatedClock
    var toServer = SimulatedPath()
    var toClient = SimulatedPath()
    /// When set, the network is `wallctl impair`'s model instead of `toServer` and `toClient`.
    var impairment: ImpairmentModel?
    /// Server time between the kernel receive stamp and the send stamp.
    var turnaround: ClosedRange<Int64> = 5_000...80_000
    var serverIdentity: UInt64 = 0xA
    var serverEpoch: UInt64 = 0xE
    /// Whether the server answers at all.
    var serverAnswers = true
    /// An on-path attacker: rewrites each reply's master times this much later, keeping everything
    /// else (it saw the request, so sequence, nonce and send time match). It cannot re-sign.
    var forgedShift: Int64 = 0
    /// The key both ends share, if any.
    let authenticator: PacketAuthenticator?
    /// Probability that the network delivers a reply twice (each copy with its own delay).
    var duplicateProbability = 0.0
    var engine: ClockClientEngine
    /// The clock the source's estimates feed: its one servo publishes the mapping.
    var selector = ClockSourceSelector(sources: 1)
    var random: SplitMix64
    private(set) var now: Int64 = 1_000_000_000
    private(set) var records: [Record] = []
    /// Datagrams in flight to the client: arrival true time and bytes.
    private var inFlight: [(arrival: Int64, bytes: [UInt8])] = []
    /// Extra datagrams to deliver to the client: (true time, bytes).
    var injected: [(time: Int64, bytes: [UInt8])] = []

    init(
        client: SimulatedClock, master: SimulatedClock, format: WireFormat = .lockstep, seed: UInt64 = 1,
        authenticator: PacketAuthenticator? = nil, configure: (inout ClockClientEngine.Configuration) -> Void = { _ in }
    ) {
        self.client = client
        self.master = master
        var configuration = ClockClientEngine.Configuration()
        configuration.format = format
        configure(&configuration)
        engine = ClockClientEngine(
            configuration: configuration, firstSequence: 0x1234_0000, authenticator: authenticator)
        self.authenticator = authenticator
        random = SplitMix64(seed: seed)
    }

    var latest: Record? { records.last }

    /// The clock's published status at local time `local`: the selector's, or the source's own
    /// before it was ever followed.
    func published(at local: Int64) -> ClockStatus {
        selector.status(at: local) ?? engine.status(at: local)
    }

    /// The true master error of the current published mapping at true time `trueTime`.
    func error(atTrueTime trueTime: Int64) -> Int64 {
        let local = client.reading(at: trueTime)
        return published(at: local).mapping.masterNanoseconds(atLocalNanoseconds: local) - master.reading(at: trueTime)
    }

    /// Runs until true time advances by `duration` ns.
    mutating func run(for duration: Int64) {
        let end = now + duration
        // Latest first, so the next injection is popped from the end.
        injected.sort { $0.time > $1.time }
        while true {
            let reading = client.reading(at: now)
            let deadline = min(engine.nextDeadline(after: reading), selector.nextDeadline(after: reading) ?? .max)
            let clientDeadline = client.trueTime(atReading: deadline)
            let nextArrival = inFlight.map(\.arrival).min()
            let nextInjection = injected.last.map { max($0.time, now) }
            let next = [max(clientDeadline, now), nextArrival, nextInjection].compactMap { $0 }.min()!
            guard next <= end else { break }
            now = next
            if next == nextInjection {
                deliver(injected.removeLast().bytes)
                continue
            }
            if let index = inFlight.firstIndex(where: { $0.arrival == next }) {
                let datagram = inFlight.remove(at: index)
                deliver(datagram.bytes)
                continue
            }
            let local = client.reading(at: now)
            advance(to: local)
            if engine.isRequestDue(at: local) { sendRequest(at: local) }
        }
        now = end
        advance(to: client.reading(at: now))
    }

    /// Lets time pass for the source and the clock; records what changed.
    private mutating func advance(to local: Int64) {
        let sourceChanged = engine.advance(to: local)
        if sourceChanged { _ = selector.update(source: 0, status: engine.status(at: local), now: local) }
        if selector.advance(to: local) || sourceChanged { record() }
    }

    private mutating func deliver(_ bytes: [UInt8]) {
        let local = client.reading(at: now)
        let changed = bytes.withUnsafeBytes { engine.receive($0, length: bytes.count, at: local, now: local) }
        guard changed else { return }
        _ = selector.update(source: 0, status: engine.status(at: local), now: local)
        record()
    }

    private mutating func record() {
        let local = client.reading(at: now)
        let status = published(at: local)
        let truth = master.reading(at: now)
        let error = status.mapping.masterNanoseconds(atLocalNanoseconds: local) - truth
        records.append(Record(trueTime: now, status: status, error: error))
    }

    private mutating func sendRequest(at local: Int64) {
        var request = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        let nonce = UInt32.random(in: 0 ... .max, using: &random)
        let size = request.withUnsafeMutableBytes { buffer in
            let size = engine.prepareRequest(into: buffer, nonce: nonce)
            engine.stampRequest(buffer, sentAt: local)
            return size
        }
        engine.recordRequest(sentAt: local)
        guard serverAnswers, let up = delay(toServer: true, at: now) else { return }
        let arrival = now + up
        let departure = arrival + Int64.random(in: turnaround, using: &random)
        var responder = TimeResponder(
            identity: serverIdentity, epoch: serverEpoch, flags: [], serverPorts: [5637])
        responder.authenticator = authenticator
        var reply = [UInt8](repeating: 0, count: LockstepTimePacket.size)
        let receiveTime = master.reading(at: arrival)
        let outcome = request.withUnsafeBytes { requestBytes in
            reply.withUnsafeMutableBytes { replyBytes in
                let outcome = responder.respond(
                    to: UnsafeRawBufferPointer(rebasing: requestBytes[..<size]), length: size, sourcePort: 40000,
                    receiveTime: receiveTime, kernelStamped: true, into: replyBytes)
                guard case .reply(let format, _) = outcome,
                    responder.stamp(
                        replyBytes, format: format, receiveTime: receiveTime,
                        sendTime: master.reading(at: departure))
                else { return TimeResponder.Outcome.unrepresentableMasterTime }
                return outcome
            }
        }
        guard case .reply(let format, let count) = outcome, let down = delay(toServer: false, at: departure) else {
            return
        }
        if forgedShift != 0 { forge(&reply, format: format) }
        inFlight.append((departure + down, Array(reply[..<count])))
        if duplicateProbability > 0, Double.random(in: 0..<1, using: &random) < duplicateProbability,
            let again = toClient.delay(using: &random)
        {
            inFlight.append((departure + again, Array(reply[..<count])))
        }
    }

    /// One direction's delay for a datagram leaving at true time `time`; nil when it is lost.
    private mutating func delay(toServer: Bool, at time: Int64) -> Int64? {
        guard impairment != nil else {
            return toServer ? self.toServer.delay(using: &random) : toClient.delay(using: &random)
        }
        return impairment!.decide(toServer: toServer, at: time).departures.first
    }

    private func forge(_ reply: inout [UInt8], format: WireFormat) {
        func shift(at offset: Int) {
            reply.withUnsafeMutableBytes { bytes in
                let time = Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
                bytes.storeBytes(of: (time + forgedShift).bigEndian, toByteOffset: offset, as: Int64.self)
            }
        }
        switch format {
        case .lockstep:
            shift(at: 24)
            shift(at: LockstepTimePacket.serverSendTimeOffset)
        case .gstreamer:
            shift(at: 8)
        }
    }

    /// Records whose true error exceeds their reported error bound.
    var boundViolations: [Record] {
        records.filter { record in record.status.errorBound.nanoseconds.map { abs(record.error) > $0 } ?? false }
    }

    /// The 99th percentile of |error| over records after true time `start` (ns since the run began).
    func p99Error(after start: Int64) -> Int64 {
        let errors = records.filter { $0.trueTime - 1_000_000_000 >= start }.map { abs($0.error) }.sorted()
        guard !errors.isEmpty else { return .max }
        return errors[min(errors.count - 1, Int((Double(errors.count) * 0.99).rounded(.up)) - 1)]
    }

    /// The first true time after which every record is locked with |error| below `limit`, or nil.
    func settleTime(below limit: Int64) -> Int64? {
        guard let lastBad = records.lastIndex(where: { $0.status.state != .locked || abs($0.error) >= limit }) else {
            return records.first?.trueTime
        }
        return lastBad + 1 < records.count ? records[lastBad + 1].trueTime : nil
    }
}
