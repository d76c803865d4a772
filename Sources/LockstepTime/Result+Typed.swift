extension Result {
    /// What `body` returns or throws, as a result.
    ///
    /// The value is assigned inside the `do` and returned after it: Swift 6.3 at -O miscompiles a
    /// generic result returned from inside `do throws(E)` in an async closure (a task group child's),
    /// leaving it uninitialised; release builds then crashed in `swift_retain` when the group copied
    /// it out. Every such closure goes through here, so the workaround is written once.
    public static func of(_ body: () async throws(Failure) -> Success) async -> Result {
        let outcome: Result
        do throws(Failure) {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        return outcome
    }
}
