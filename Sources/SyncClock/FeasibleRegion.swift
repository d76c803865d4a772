/// Every line `offset(x) = a + b·x` that satisfies a set of sample constraints: a convex polygon in
/// the (a, b) plane.
///
/// `x` is seconds from a reference local time, `a` the offset at the reference in nanoseconds, `b`
/// the rate difference in nanoseconds per second (ppb). Each sample contributes two half-planes (its
/// hard bounds, see `ClockSample`); the polygon is their intersection with an a-priori box on the
/// rate. The range of offsets it allows at any `x` is an honest error bound, and its centroid a
/// central estimate of offset and rate together: the set-membership ("convex hull") approach to
/// clock estimation. Its extremes are set by the fastest exchanges in each direction, which is why it
/// is not fooled by queueing delays that push averages off.
struct FeasibleRegion: Sendable {
    struct Vertex: Hashable, Sendable {
        var a: Double
        var b: Double
    }

    private(set) var vertices: [Vertex]
    /// The previous vertices' storage, reused by the next clip.
    private var spare: [Vertex] = []

    /// Clipping keeps points this close outside a constraint, so rounding cannot empty a region
    /// whose constraints just touch.
    private static let tolerance = 1e-6

    /// The box `a ∈ offsets`, `b ∈ ±maximumRate`.
    init(offsets: ClosedRange<Double>, maximumRate: Double) {
        vertices = [
            Vertex(a: offsets.lowerBound, b: -maximumRate), Vertex(a: offsets.upperBound, b: -maximumRate),
            Vertex(a: offsets.upperBound, b: maximumRate), Vertex(a: offsets.lowerBound, b: maximumRate),
        ]
    }

    var isEmpty: Bool { vertices.isEmpty }

    /// Keeps the lines with `a + b·x <= limit`.
    mutating func keepBelow(_ limit: Double, at x: Double) {
        clip(coefficientA: 1, coefficientB: x, limit: limit)
    }

    /// Keeps the lines with `a + b·x >= limit`.
    mutating func keepAbove(_ limit: Double, at x: Double) {
        clip(coefficientA: -1, coefficientB: -x, limit: -limit)
    }

    /// One Sutherland–Hodgman step: keeps the part with `ca·a + cb·b <= limit`.
    private mutating func clip(coefficientA ca: Double, coefficientB cb: Double, limit: Double) {
        guard !vertices.isEmpty else { return }
        var kept = spare
        kept.removeAll(keepingCapacity: true)
        for index in vertices.indices {
            let p = vertices[index]
            let q = vertices[(index + 1) % vertices.count]
            let fp = ca * p.a + cb * p.b - limit
            let fq = ca * q.a + cb * q.b - limit
            if fp <= Self.tolerance { kept.append(p) }
            if (fp < -Self.tolerance && fq > Self.tolerance) || (fp > Self.tolerance && fq < -Self.tolerance) {
                let t = fp / (fp - fq)
                kept.append(Vertex(a: p.a + t * (q.a - p.a), b: p.b + t * (q.b - p.b)))
            }
        }
        spare = vertices
        vertices = kept
    }

    /// The smallest and largest offset the region allows at `x`.
    func range(at x: Double) -> ClosedRange<Double> {
        var low = Double.infinity
        var high = -Double.infinity
        for vertex in vertices {
            let value = vertex.a + vertex.b * x
            low = min(low, value)
            high = max(high, value)
        }
        return low...high
    }

    /// The largest `|b - rate|` over the region: how fast the gap between a line of rate `rate` and
    /// the allowed lines can grow.
    func largestRateDifference(from rate: Double) -> Double {
        vertices.reduce(0) { max($0, abs($1.b - rate)) }
    }

    /// The centroid (the vertices' mean when the region has collapsed to a segment or a point).
    var centroid: Vertex {
        precondition(!vertices.isEmpty)
        // Relative to the first vertex, so the areas are not swamped by the coordinates' size.
        let origin = vertices[0]
        var area = 0.0
        var sumA = 0.0
        var sumB = 0.0
        for index in vertices.indices.dropFirst().dropLast() {
            let p = Vertex(a: vertices[index].a - origin.a, b: vertices[index].b - origin.b)
            let q = Vertex(a: vertices[index + 1].a - origin.a, b: vertices[index + 1].b - origin.b)
            let cross = p.a * q.b - q.a * p.b
            area += cross
            sumA += cross * (p.a + q.a)
            sumB += cross * (p.b + q.b)
        }
        let scale = vertices.reduce(0) { max($0, abs($1.a - origin.a) * abs($1.b - origin.b)) }
        guard abs(area) > scale * 1e-9, abs(area) > 0 else {
            let count = Double(vertices.count)
            return Vertex(
                a: vertices.reduce(0) { $0 + $1.a } / count, b: vertices.reduce(0) { $0 + $1.b } / count)
        }
        return Vertex(a: origin.a + sumA / (3 * area), b: origin.b + sumB / (3 * area))
    }
}
