internal import CGStreamer
internal import CLockstepShims
import Dispatch
import LockstepTime

extension Player {
    /// Calls `block` with the current time every `interval` of item time while playing, at each
    /// multiple of the interval, and also when playback starts or stops and when the time jumps.
    public func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue?, using block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        precondition(interval.isNumeric && interval > .zero, "the interval of a time observer must be positive")
        return addObserver(.periodic(interval: interval, block: block), queue: queue)
    }

    /// Calls `block` when playback crosses any of `times` during normal playback (not by seeking).
    public func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue?, using block: @escaping @Sendable () -> Void
    ) -> TimeObserverToken {
        addObserver(.boundary(times: times.filter(\.isNumeric).sorted(), block: block), queue: queue)
    }

    /// Stops an observer's callbacks: once this returns, its block is not called again.
    public func removeTimeObserver(_ token: TimeObserverToken) {
        token.removed.withLock { $0 = true }
        queue.async {
            self.engine.observers.removeValue(forKey: ObjectIdentifier(token))?.cancelAlarm()
        }
    }

    private func addObserver(_ kind: TimeObserver.Kind, queue callbackQueue: DispatchQueue?) -> TimeObserverToken {
        let token = TimeObserverToken()
        let observer = TimeObserver(token: token, kind: kind, queue: callbackQueue)
        queue.async {
            self.engine.observers[ObjectIdentifier(token)] = observer
            self.schedule(observer, fireNow: self.engine.timebase.rate != 0)
        }
        return token
    }

    /// The timebase changed (start, stop, jump, rate): periodic observers fire now, and every
    /// observer is scheduled afresh.
    func timebaseChanged() {
        publishedTimebase.withLock { $0 = engine.timebase }
        for observer in engine.observers.values { schedule(observer, fireNow: true) }
    }

    private func schedule(_ observer: TimeObserver, fireNow: Bool) {
        observer.cancelAlarm()
        let timebase = engine.timebase
        let clock = effectiveClock
        switch observer.kind {
        case .periodic(let interval, let block):
            if fireNow { fire(observer) { block(self.currentTime()) } }
            guard timebase.rate != 0, let step = interval.nanoseconds, step > 0 else { return }
            let now = timebase.itemTime(atHost: clock.now())
            guard let nowNs = now.nanoseconds else { return }
            let index = timebase.rate > 0 ? floorDivide(nowNs, step) + 1 : ceilDivide(nowNs, step) - 1
            let next = MediaTime(nanoseconds: index * step)
            arm(observer, at: timebase.hostTime(forItemTime: next), clock: clock)
        case .boundary(let times, _):
            guard timebase.rate != 0 else { return }
            let now = timebase.itemTime(atHost: clock.now())
            let next = timebase.rate > 0 ? times.first { $0 > now } : times.last { $0 < now }
            guard let next else { return }
            arm(observer, at: timebase.hostTime(forItemTime: next), clock: clock)
        }
    }

    private func arm(_ observer: TimeObserver, at hostTime: MediaTime?, clock: MasterClock) {
        guard let hostTime else { return }
        observer.alarm = ClockAlarm(clock: clock, at: hostTime) { [weak self, weak observer] in
            guard let self, let observer else { return }
            self.queue.async {
                guard self.engine.observers[ObjectIdentifier(observer.token)] === observer else { return }
                switch observer.kind {
                case .periodic(_, let block):
                    self.fire(observer) { block(self.currentTime()) }
                case .boundary(_, let block):
                    self.fire(observer, block)
                }
                self.schedule(observer, fireNow: false)
            }
        }
    }

    private func fire(_ observer: TimeObserver, _ work: @escaping @Sendable () -> Void) {
        let token = observer.token
        deliver(on: observer.queue) {
            guard !token.isRemoved else { return }
            work()
        }
    }
}

private func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let (q, r) = a.quotientAndRemainder(dividingBy: b)
    return r < 0 ? q - 1 : q
}

private func ceilDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let (q, r) = a.quotientAndRemainder(dividingBy: b)
    return r > 0 ? q + 1 : q
}
