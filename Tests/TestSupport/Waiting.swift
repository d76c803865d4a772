import Foundation

/// Runs `operation`, failing with a message naming `what` if it takes longer than `seconds`.
/// The way to wait in a test: for an event, with a bound, not a fixed sleep before an assertion.
public func withTimeout<T: Sendable>(
    _ seconds: Double, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TestSupportError("timed out after \(seconds) s waiting for \(what)")
        }
        guard let result = try await group.next() else { throw TestSupportError("no result for \(what)") }
        group.cancelAll()
        return result
    }
}

/// The first element of `sequence` that satisfies `predicate`, within `seconds`.
public func first<S: AsyncSequence & Sendable>(
    in sequence: S, within seconds: Double = 10, _ what: String,
    where predicate: @escaping @Sendable (S.Element) -> Bool
) async throws -> S.Element where S.Element: Sendable {
    try await withTimeout(seconds, what) {
        for try await element in sequence where predicate(element) { return element }
        throw TestSupportError("\(what): the sequence ended first")
    }
}

/// The first `count` elements of `sequence`, within `seconds`.
public func collect<S: AsyncSequence & Sendable>(
    _ count: Int, from sequence: S, within seconds: Double = 10, _ what: String
) async throws -> [S.Element] where S.Element: Sendable {
    try await withTimeout(seconds, what) {
        var elements: [S.Element] = []
        for try await element in sequence {
            elements.append(element)
            if elements.count == count { return elements }
        }
        throw TestSupportError("\(what): the sequence ended after \(elements.count) of \(count)")
    }
}
