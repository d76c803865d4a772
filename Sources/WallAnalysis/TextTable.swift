/// A plain-text table for the terminal: the first column left-aligned (names), the others
/// right-aligned (numbers), columns two spaces apart.
struct TextTable {
    let header: [String]
    private(set) var rows: [[String]] = []

    init(_ header: String...) {
        self.header = header
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    var rendered: String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }
            .joined(separator: "  ")
        }
        .map { line in String(line.reversed().drop { $0 == " " }.reversed()) }
        .joined(separator: "\n")
    }
}

extension TimeStatistics {
    /// mean, p50, p95, p99 and max in milliseconds, or dashes when there are no values.
    var millisecondColumns: [String] {
        [mean, p50, p95, p99, maximum].map { isEmpty ? "-" : $0.millisecondsText }
    }
}
