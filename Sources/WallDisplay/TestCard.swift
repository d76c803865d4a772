/// The picture a screen shows when the wall is identified (`wallctl identify`): which screen it is
/// and whether it sits where the config says.
///
/// Two layers, as projection and LED-wall alignment cards have them:
/// - drawn in **wall** coordinates, so that they run on from one screen into the next when the
///   screens are placed as configured: a grid of squares, the two diagonals of the whole canvas and
///   a circle around its centre. A screen in the wrong place, turned or scaled shows broken lines.
/// - drawn in **screen** coordinates, this screen's own: its outline in a colour of its own (the
///   first node red, the second green, ...) and a band of colour bars across its middle.
///
/// The node's name and tile go on top as text (by the sink that shows the card), above the bars.
/// The pixels are RGB, 3 bytes each, rows top to bottom with no padding.
public struct TestCard: Sendable {
    /// The wall canvas, in canvas pixels.
    public var canvas: (width: Int, height: Int)
    /// This screen's part of the canvas, in canvas pixels.
    public var tile: DisplayRect
    /// This screen's size, in its own pixels.
    public var output: (width: Int, height: Int)
    /// The node's place in the config: it picks the outline's colour.
    public var index: Int

    public init(canvas: (width: Int, height: Int), tile: DisplayRect, output: (width: Int, height: Int), index: Int) {
        self.canvas = canvas
        self.tile = tile
        self.output = output
        self.index = index
    }

    public typealias Color = (red: UInt8, green: UInt8, blue: UInt8)

    public static let background: Color = (24, 24, 24)
    public static let gridColor: Color = (110, 110, 110)
    public static let diagonalColor: Color = (255, 255, 255)
    public static let circleColor: Color = (200, 200, 200)
    /// Outline colours, one per node in config order (repeating after eight): far apart in hue, so
    /// neighbours never look alike.
    public static let outlineColors: [Color] = [
        (230, 40, 40), (40, 200, 60), (50, 110, 255), (250, 210, 30), (220, 60, 220), (40, 220, 230),
        (255, 140, 20), (150, 90, 255),
    ]
    /// The bars, left to right: white, yellow, cyan, green, magenta, red, blue at 75 %, then black.
    public static let barColors: [Color] = [
        (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0),
    ]

    /// The outline's colour on this screen.
    public var outlineColor: Color { Self.outlineColors[((index % 8) + 8) % 8] }

    /// The outline's width in screen pixels: visible at a distance, never more than a 60th of the
    /// screen's shorter side (and at least 2).
    public var outlineWidth: Int { max(2, min(output.width, output.height) / 60) }

    /// The grid's spacing in canvas pixels: ten squares down the canvas.
    public var gridStep: Double { Double(max(1, canvas.height)) / 10 }

    /// The band of bars, in screen rows: from 60 % to 75 % of the height, inside the outline.
    public var barRows: Range<Int> { (output.height * 60 / 100)..<(output.height * 75 / 100) }

    /// Whether the card can be drawn: a screen and a tile with area, the tile inside the canvas.
    public var isDrawable: Bool {
        output.width > 0 && output.height > 0 && tile.width > 0 && tile.height > 0 && canvas.width > 0
            && canvas.height > 0
    }

    /// The card's pixels (RGB, `output.width * output.height * 3` bytes); empty when not drawable.
    public func render() -> [UInt8] {
        guard isDrawable else { return [] }
        var pixels = [UInt8](repeating: 0, count: output.width * output.height * 3)
        for y in 0..<output.height {
            for x in 0..<output.width {
                let color = self.color(x: x, y: y)
                let offset = (y * output.width + x) * 3
                pixels[offset] = color.red
                pixels[offset + 1] = color.green
                pixels[offset + 2] = color.blue
            }
        }
        return pixels
    }

    /// The colour of screen pixel (`x`, `y`), before the text.
    public func color(x: Int, y: Int) -> Color {
        let border = outlineWidth
        if x < border || y < border || x >= output.width - border || y >= output.height - border {
            return outlineColor
        }
        if barRows.contains(y) {
            let inner = output.width - 2 * border
            let bar = min(Self.barColors.count - 1, (x - border) * Self.barColors.count / max(1, inner))
            return Self.barColors[bar]
        }
        return wallColor(x: x, y: y)
    }

    /// The wall layer at screen pixel (`x`, `y`): the pixel covers a rectangle of the canvas, and a
    /// line is drawn on it when it crosses that rectangle, so lines are unbroken at any scale and
    /// meet at the joins between screens.
    private func wallColor(x: Int, y: Int) -> Color {
        let scaleX = Double(tile.width) / Double(output.width)
        let scaleY = Double(tile.height) / Double(output.height)
        let left = Double(tile.x) + Double(x) * scaleX
        let right = left + scaleX
        let top = Double(tile.y) + Double(y) * scaleY
        let bottom = top + scaleY
        let width = Double(canvas.width)
        let height = Double(canvas.height)
        // The diagonals: y = x·H/W and y = H − x·H/W, over the pixel's span of x.
        let slope = height / width
        for (start, step) in [(0.0, slope), (height, -slope)] {
            let atLeft = start + step * left
            let atRight = start + step * right
            if max(atLeft, atRight) >= top, min(atLeft, atRight) < bottom { return Self.diagonalColor }
        }
        // The circle: radius 45 % of the canvas height around its centre, crossing the pixel when
        // the nearest and farthest corners lie on either side of it.
        let radius = height * 0.45
        let (cx, cy) = (width / 2, height / 2)
        let nearX = max(left, min(cx, right)) - cx
        let nearY = max(top, min(cy, bottom)) - cy
        let farX = max(abs(left - cx), abs(right - cx))
        let farY = max(abs(top - cy), abs(bottom - cy))
        if (nearX * nearX + nearY * nearY) <= radius * radius, (farX * farX + farY * farY) > radius * radius {
            return Self.circleColor
        }
        // The grid: a multiple of the step inside the pixel's span, on either axis.
        let step = gridStep
        if (left / step).rounded(.up) * step < right || (top / step).rounded(.up) * step < bottom {
            return Self.gridColor
        }
        return Self.background
    }
}
