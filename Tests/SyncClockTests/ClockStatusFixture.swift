import LockstepTime

@testable import SyncClock

extension ClockStatus {
    /// A client's status at local time `local`: its master `offset` ns ahead with `ratePPM`, its
    /// bound `bound` ns (the guaranteed one `guaranteedBound`), both growing at `growthPPM`.
    static func fixture(
        _ state: ClockState = .locked, offset: Int64, ratePPM: Double = 0, at local: Int64, bound: Int64,
        guaranteedBound: Int64, growthPPM: Double, master: MasterIdentity, path: ClockPath?, generation: Int = 1,
        pollInterval: Int64
    ) -> ClockStatus {
        ClockStatus(
            state: state,
            mapping: ClockMapping(
                localTime: MediaTime(nanoseconds: local), masterTime: MediaTime(nanoseconds: local + offset),
                rate: 1 + ratePPM / 1e6),
            localTime: MediaTime(nanoseconds: local), errorBound: MediaTime(nanoseconds: bound),
            errorBoundGrowthPPM: growthPPM, guaranteedErrorBound: MediaTime(nanoseconds: guaranteedBound),
            guaranteedErrorBoundGrowthPPM: growthPPM, ratePPM: ratePPM, offset: MediaTime(nanoseconds: offset),
            roundTrip: RoundTripTracker().statistics, counters: ClockCounters(), master: master, path: path,
            generation: generation, format: .lockstep, pollInterval: MediaTime(nanoseconds: pollInterval))
    }
}
