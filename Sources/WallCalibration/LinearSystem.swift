/// Small dense linear systems, as homographies and the timing fit need them.
enum LinearSystem {
    /// The solution of an n × (n + 1) augmented matrix, by Gaussian elimination with partial
    /// pivoting; nil when the system is singular.
    static func solve(_ matrix: [[Double]]) -> [Double]? {
        var a = matrix
        let n = a.count
        for column in 0..<n {
            let pivot = (column..<n).max { abs(a[$0][column]) < abs(a[$1][column]) }!
            guard abs(a[pivot][column]) > 1e-300, a[pivot][column].isFinite else { return nil }
            a.swapAt(column, pivot)
            for row in 0..<n where row != column {
                let factor = a[row][column] / a[column][column]
                guard factor != 0 else { continue }
                for k in column...n { a[row][k] -= factor * a[column][k] }
            }
        }
        let solution = (0..<n).map { a[$0][n] / a[$0][$0] }
        return solution.allSatisfy(\.isFinite) ? solution : nil
    }
}
