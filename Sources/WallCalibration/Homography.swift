/// A plane-to-plane projective map: how a flat screen, seen in perspective, lands on a camera's
/// picture. Maps (u, v) to (x, y) = ((a u + b v + c) / (g u + h v + 1), (d u + e v + f) / (g u + h v + 1)).
public struct Homography: Sendable, Equatable {
    /// a, b, c, d, e, f, g, h.
    public var coefficients: [Double]

    /// The map that takes the unit square's corners (0,0), (1,0), (1,1), (0,1) to `corners`, in
    /// that order; nil when three of the corners are in line.
    public init?(unitSquareTo corners: [(x: Double, y: Double)]) {
        self.init(from: [(0, 0), (1, 0), (1, 1), (0, 1)], to: corners)
    }

    /// The map that takes each of four points to its counterpart; nil when three are in line.
    public init?(from square: [(Double, Double)], to corners: [(x: Double, y: Double)]) {
        guard square.count == 4, corners.count == 4 else { return nil }
        var rows: [[Double]] = []
        for ((u, v), corner) in zip(square, corners) {
            rows.append([u, v, 1, 0, 0, 0, -u * corner.x, -v * corner.x, corner.x])
            rows.append([0, 0, 0, u, v, 1, -u * corner.y, -v * corner.y, corner.y])
        }
        guard let solution = LinearSystem.solve(rows) else { return nil }
        coefficients = solution
    }

    public init(coefficients: [Double]) { self.coefficients = coefficients }

    /// Where (u, v) lands.
    public func map(u: Double, v: Double) -> (x: Double, y: Double) {
        let c = coefficients
        let w = c[6] * u + c[7] * v + 1
        return ((c[0] * u + c[1] * v + c[2]) / w, (c[3] * u + c[4] * v + c[5]) / w)
    }

    /// The inverse map: from the picture back to the plane; nil when this one is degenerate.
    public func inverse() -> Homography? {
        let c = coefficients
        let m = [[c[0], c[1], c[2]], [c[3], c[4], c[5]], [c[6], c[7], 1]]
        let det =
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        guard abs(det) > 1e-12 else { return nil }
        let adjugate = [
            m[1][1] * m[2][2] - m[1][2] * m[2][1], m[0][2] * m[2][1] - m[0][1] * m[2][2],
            m[0][1] * m[1][2] - m[0][2] * m[1][1],
            m[1][2] * m[2][0] - m[1][0] * m[2][2], m[0][0] * m[2][2] - m[0][2] * m[2][0],
            m[0][2] * m[1][0] - m[0][0] * m[1][2],
            m[1][0] * m[2][1] - m[1][1] * m[2][0], m[0][1] * m[2][0] - m[0][0] * m[2][1],
            m[0][0] * m[1][1] - m[0][1] * m[1][0],
        ]
        let scale = adjugate[8]
        guard abs(scale) > 1e-15 else { return nil }
        return Homography(coefficients: (0..<8).map { adjugate[$0] / scale })
    }
}
