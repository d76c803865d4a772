/// The most recent values of a stream, at most `capacity` of them: each new value past the capacity
/// replaces the oldest.
///
/// For statistics over "the last N" (round trips, delays, departure lateness) without growing memory.
/// `values` is in no particular order once the capacity is reached.
public struct RecentValues<Element: Sendable>: Sendable {
    public let capacity: Int
    public private(set) var values: [Element] = []
    private var next = 0

    /// - Precondition: `capacity` is at least 1.
    public init(capacity: Int) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    public var isEmpty: Bool { values.isEmpty }
    public var count: Int { values.count }

    public mutating func append(_ value: Element) {
        if values.count < capacity {
            values.append(value)
        } else {
            values[next] = value
            next = (next + 1) % capacity
        }
    }

    public mutating func removeAll() {
        values.removeAll(keepingCapacity: true)
        next = 0
    }
}

extension RecentValues where Element: Comparable {
    /// The nearest-rank quantiles of the values held, one per fraction (0 the minimum, 0.5 the
    /// median, 0.99 the 99th percentile, 1 the maximum), from one sort; nil when empty.
    public func quantiles(_ fractions: Double...) -> [Element]? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return fractions.map { fraction in
            sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))]
        }
    }
}

extension RecentValues: Equatable where Element: Equatable {}
extension RecentValues: Hashable where Element: Hashable {}
