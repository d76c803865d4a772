/// The calibration pattern drawn over a wall's canvas: each screen's tile holds the pattern with
/// that screen's number. `wallctl calibrate` renders its clip from this, and the tests' simulated
/// wall uses it to know what each screen shows.
public struct PatternCanvas: Sendable {
    /// A screen's tile as fractions of the canvas (x, y, width, height), and its number.
    public struct Tile: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double
        public var screen: Int

        public init(x: Double, y: Double, width: Double, height: Double, screen: Int) {
            (self.x, self.y, self.width, self.height, self.screen) = (x, y, width, height, screen)
        }
    }

    public let width: Int
    public let height: Int
    public let tiles: [Tile]
    /// Per pixel: the tile's index times `codes` plus the element's code, or -1 outside every tile.
    private let codes: [Int32]
    /// How many elements a tile has: the codes of `code(_:x:y:)` run from 0 below this.
    public static let codeCount = 2 + CalibrationPattern.bandCount * CalibrationPattern.cellCount + CalibrationPattern.markSlots

    /// The canvas rendered at `width` × `height` pixels.
    public init(width: Int, height: Int, tiles: [Tile]) {
        precondition(width > 0 && height > 0)
        self.width = width
        self.height = height
        self.tiles = tiles
        var codes = [Int32](repeating: -1, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let cx = (Double(x) + 0.5) / Double(width)
                let cy = (Double(y) + 0.5) / Double(height)
                if let (tile, code) = PatternCanvas.code(tiles, x: cx, y: cy) {
                    codes[y * width + x] = Int32(tile * PatternCanvas.codeCount + code)
                }
            }
        }
        self.codes = codes
    }

    /// The tile at a point of the canvas (fractions) and the code of what it shows there.
    public static func code(_ tiles: [Tile], x: Double, y: Double) -> (tile: Int, code: Int)? {
        guard let index = tiles.firstIndex(where: { x >= $0.x && x < $0.x + $0.width && y >= $0.y && y < $0.y + $0.height })
        else { return nil }
        let tile = tiles[index]
        let element = CalibrationPattern.element(u: (x - tile.x) / tile.width, v: (y - tile.y) / tile.height)
        return (index, code(of: element))
    }

    static func code(of element: CalibrationPattern.Element) -> Int {
        switch element {
        case .black: return 0
        case .white: return 1
        case .cell(let band, let index): return 2 + band * CalibrationPattern.cellCount + index
        case .mark(let slot): return 2 + CalibrationPattern.bandCount * CalibrationPattern.cellCount + slot
        }
    }

    static func element(ofCode code: Int) -> CalibrationPattern.Element {
        switch code {
        case 0: return .black
        case 1: return .white
        case 2..<(2 + CalibrationPattern.bandCount * CalibrationPattern.cellCount):
            return .cell(band: (code - 2) / CalibrationPattern.cellCount, index: (code - 2) % CalibrationPattern.cellCount)
        default: return .mark(code - 2 - CalibrationPattern.bandCount * CalibrationPattern.cellCount)
        }
    }

    /// The luma of every code of every tile in frame `frame`: index tile × `codeCount` + code.
    public static func levels(_ tiles: [Tile], frame: Int) -> [UInt8] {
        var levels = [UInt8](repeating: 0, count: tiles.count * codeCount)
        for (index, tile) in tiles.enumerated() {
            for code in 0..<codeCount {
                levels[index * codeCount + code] = CalibrationPattern.level(
                    of: element(ofCode: code), screen: tile.screen, frame: frame)
            }
        }
        return levels
    }

    /// Frame `frame` of the canvas, row by row; black outside the tiles.
    public func render(frame: Int) -> [UInt8] {
        let levels = PatternCanvas.levels(tiles, frame: frame)
        return codes.map { $0 < 0 ? CalibrationPattern.black : levels[Int($0)] }
    }
}
