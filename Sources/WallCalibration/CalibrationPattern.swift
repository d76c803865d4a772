/// The timing pattern `wallctl calibrate` shows on every screen, for a camera to film.
///
/// Each screen shows its own copy, drawn over its whole tile in tile coordinates (u, v in 0...1,
/// v down), in luma only, so that it survives any colour conversion and any phone's processing:
/// - a white ring just inside the tile's edge: the camera finds the screen by it and maps the tile
///   onto the picture from its corners (a homography, so perspective is no matter). A black margin
///   outside it keeps the rings of screens that touch apart;
/// - two code bands, one in the upper half and one in the lower half, each a grid of 2 rows of 8
///   cells: two black and two white reference cells, the screen's number in 6 bits, and the frame
///   number in 6 bits of Gray code (one cell changes from a frame to the next, so a camera frame
///   that catches a change shows one grey cell and is told from a clean one). Two bands at two
///   heights tell the camera's rolling shutter from the screens' timing;
/// - a mark that moves one slot to the right every frame between the bands: on the slow-motion
///   video an operator sees at a glance which screens move together.
///
/// The frame number repeats every `period` frames; the clip loops exactly that long.
public enum CalibrationPattern {
    /// The screen's number, 0..<`screenCount`.
    public static let screenCount = 64
    /// Frame numbers count modulo this: a little over a second at 60 fps, far longer than any
    /// skew calibrate measures or any gap between the clean reads of a band.
    public static let period = 64
    public static let black: UInt8 = 0
    public static let white: UInt8 = 255
    /// The black margin outside the ring, and the ring's inner edge, as fractions of the tile's
    /// width and height.
    public static let margin = 0.025
    static let ringInside = 0.065
    /// The two bands' top edges (v); each is `bandHeight` tall.
    static let bandTops = [0.15, 0.6]
    static let bandHeight = 0.25
    /// The bands' left edge and width (u).
    static let bandLeft = 0.11
    static let bandWidth = 0.78
    static let columns = 8
    static let rows = 2
    /// The moving mark's strip (v) and its slots across the band's width.
    static let markTop = 0.44
    static let markHeight = 0.12
    static let markSlots = 16

    /// What a point of a tile shows.
    public enum Element: Equatable, Sendable {
        case black
        case white
        /// Cell `index` (0..<16) of band `band` (0 upper, 1 lower).
        case cell(band: Int, index: Int)
        /// Slot `index` of the moving mark's strip.
        case mark(Int)
    }

    /// The reference cells: black at each row's start, white after it on the upper row and at the
    /// end of the lower, so that a band read the wrong way up (a camera turned over) never passes
    /// for one read the right way.
    static let blackCells = [0, 14]
    static let whiteCells = [1, 15]
    /// The cells of the screen's number (upper row) and of the frame number (lower row), low bit first.
    static let screenCells = [2, 3, 4, 5, 6, 7]
    static let counterCells = [8, 9, 10, 11, 12, 13]

    /// What the tile shows at (u, v).
    public static func element(u: Double, v: Double) -> Element {
        guard u >= margin, u < 1 - margin, v >= margin, v < 1 - margin else { return .black }
        guard u >= ringInside, u < 1 - ringInside, v >= ringInside, v < 1 - ringInside else { return .white }
        for (band, top) in bandTops.enumerated() where v >= top && v < top + bandHeight {
            guard u >= bandLeft, u < bandLeft + bandWidth else { return .black }
            let column = min(columns - 1, Int((u - bandLeft) / bandWidth * Double(columns)))
            let row = min(rows - 1, Int((v - top) / bandHeight * Double(rows)))
            return .cell(band: band, index: row * columns + column)
        }
        if v >= markTop, v < markTop + markHeight, u >= bandLeft, u < bandLeft + bandWidth {
            return .mark(min(markSlots - 1, Int((u - bandLeft) / bandWidth * Double(markSlots))))
        }
        return .black
    }

    /// The centre of a band's cell in tile coordinates, and the cell's size.
    public static func cellCentre(band: Int, index: Int) -> (u: Double, v: Double, width: Double, height: Double) {
        let width = bandWidth / Double(columns)
        let height = bandHeight / Double(rows)
        return (
            bandLeft + (Double(index % columns) + 0.5) * width, bandTops[band] + (Double(index / columns) + 0.5) * height,
            width, height
        )
    }

    /// The cells of a band, in order.
    public static let cellCount = columns * rows
    public static let bandCount = 2

    /// Whether cell `index` is white on screen `screen` in frame `frame`.
    public static func cellIsWhite(_ index: Int, screen: Int, frame: Int) -> Bool {
        if blackCells.contains(index) { return false }
        if whiteCells.contains(index) { return true }
        if let bit = screenCells.firstIndex(of: index) { return (screen >> bit) & 1 == 1 }
        let bit = counterCells.firstIndex(of: index)!
        return (grayCode(frame) >> bit) & 1 == 1
    }

    /// The luma of `element` on screen `screen` in frame `frame`.
    public static func level(of element: Element, screen: Int, frame: Int) -> UInt8 {
        switch element {
        case .black: return black
        case .white: return white
        case .cell(_, let index): return cellIsWhite(index, screen: screen, frame: frame) ? white : black
        case .mark(let slot): return slot == positive(frame, markSlots) ? white : black
        }
    }

    /// Frame `frame`'s number as the bands carry it: Gray code of the frame modulo `period`.
    static func grayCode(_ frame: Int) -> Int {
        let n = positive(frame, period)
        return n ^ (n >> 1)
    }

    /// The frame number (mod `period`) a Gray code stands for.
    static func frame(fromGray gray: Int) -> Int {
        var n = gray
        var shift = gray >> 1
        while shift != 0 {
            n ^= shift
            shift >>= 1
        }
        return n
    }

    /// What a band says once each cell is read white or black: the screen and the frame (mod
    /// `period`), or nil when the reference cells are not black and white.
    public static func decode(whiteCells cells: [Bool]) -> (screen: Int, frame: Int)? {
        guard cells.count == cellCount, blackCells.allSatisfy({ !cells[$0] }), whiteCells.allSatisfy({ cells[$0] })
        else { return nil }
        var screen = 0
        for (bit, cell) in screenCells.enumerated() where cells[cell] { screen |= 1 << bit }
        var gray = 0
        for (bit, cell) in counterCells.enumerated() where cells[cell] { gray |= 1 << bit }
        return (screen, frame(fromGray: gray))
    }

    static func positive(_ value: Int, _ modulus: Int) -> Int { ((value % modulus) + modulus) % modulus }
}
