/// Reads the calibration pattern's bands from one camera picture, through each screen's
/// homography.
public struct PatternReader: Sendable {
    /// What one band of one screen said in one picture.
    public struct Read: Sendable, Equatable {
        /// The screen, as `ScreenFinder` listed it.
        public var ring: Int
        /// 0: upper band, 1: lower band.
        public var band: Int
        /// The screen number the band carries.
        public var screen: Int
        /// The frame number, modulo `CalibrationPattern.period`.
        public var frame: Int
        /// The band's row in the picture, 0 at the top and 1 at the bottom: when a rolling shutter
        /// read it, as a fraction of the picture's readout.
        public var row: Double
    }

    /// The rings, and for each the turn (0...3 quarter turns) that maps the tile onto it once known.
    public let quads: [ScreenFinder.Quad]
    private var turns: [Int?]
    private var votes: [[Int]]
    private var homographies: [[Homography?]]
    /// A cell is read only when it is this far (as a fraction of the white cell above the black
    /// one) from the middle: a camera frame that caught a change in a cell is left out.
    static let cleanMargin = 0.25
    /// The picture's contrast between the reference cells must be at least this many levels.
    static let leastContrast = 30.0
    /// Reads that fix a ring's turn.
    static let votesToTurn = 8

    public init(quads: [ScreenFinder.Quad]) {
        self.quads = quads
        turns = Array(repeating: nil, count: quads.count)
        votes = Array(repeating: Array(repeating: 0, count: 4), count: quads.count)
        // The rings' outer corners, in tile coordinates.
        let m = CalibrationPattern.margin
        let ring = [(m, m), (1 - m, m), (1 - m, 1 - m), (m, 1 - m)]
        homographies = quads.map { quad in
            (0..<4).map { turn in
                Homography(from: ring, to: (0..<4).map { quad.corners[($0 + turn) % 4] }.map { ($0.x, $0.y) })
            }
        }
    }

    /// The clean bands of one picture. Until a ring's turn is known, every turn is tried, and the
    /// one that reads cleanly most often is kept.
    public mutating func read(_ frame: GrayFrame) -> [Read] {
        var reads: [Read] = []
        for ring in quads.indices {
            if let turn = turns[ring] {
                reads += bands(frame, ring: ring, turn: turn)
                continue
            }
            for turn in 0..<4 {
                let found = bands(frame, ring: ring, turn: turn)
                guard !found.isEmpty else { continue }
                votes[ring][turn] += found.count
                let others = votes[ring].enumerated().filter { $0.offset != turn }.map(\.element).max() ?? 0
                if votes[ring][turn] >= Self.votesToTurn, votes[ring][turn] >= 4 * others { turns[ring] = turn }
                // Reads of a turn that has not yet won are kept only once it does.
                if turns[ring] == turn { reads += found }
            }
        }
        return reads
    }

    func bands(_ frame: GrayFrame, ring: Int, turn: Int) -> [Read] {
        guard let homography = homographies[ring][turn] else { return [] }
        var reads: [Read] = []
        for band in 0..<CalibrationPattern.bandCount {
            var values: [Double] = []
            var rows = 0.0
            for index in 0..<CalibrationPattern.cellCount {
                let cell = CalibrationPattern.cellCentre(band: band, index: index)
                var sum = 0.0
                var count = 0.0
                for du in [-0.2, -0.067, 0.067, 0.2] {
                    for dv in [-0.2, -0.067, 0.067, 0.2] {
                        let point = homography.map(u: cell.u + du * cell.width, v: cell.v + dv * cell.height)
                        guard let value = frame.sample(x: point.x, y: point.y) else { continue }
                        sum += value
                        count += 1
                    }
                }
                guard count == 16 else { break }
                values.append(sum / count)
                // The frame number's cells are the ones that change: their row is when the camera
                // saw the change.
                if CalibrationPattern.counterCells.contains(index) { rows += homography.map(u: cell.u, v: cell.v).y }
            }
            guard values.count == CalibrationPattern.cellCount else { continue }
            let black = CalibrationPattern.blackCells.map { values[$0] }.reduce(0, +) / 2
            let white = CalibrationPattern.whiteCells.map { values[$0] }.reduce(0, +) / 2
            guard white - black >= Self.leastContrast else { continue }
            let levels = values.map { ($0 - black) / (white - black) }
            guard levels.allSatisfy({ abs($0 - 0.5) >= 0.5 - Self.cleanMargin }),
                let (screen, number) = CalibrationPattern.decode(whiteCells: levels.map { $0 > 0.5 })
            else { continue }
            let row = rows / Double(CalibrationPattern.counterCells.count) / Double(frame.height - 1)
            reads.append(Read(ring: ring, band: band, screen: screen, frame: number, row: row))
        }
        return reads
    }
}
