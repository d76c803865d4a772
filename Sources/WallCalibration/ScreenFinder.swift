/// Finds the screens showing the calibration pattern in a camera picture: each is a white ring
/// (`CalibrationPattern`) around a dark inside, whatever the perspective.
public enum ScreenFinder {
    /// A screen as the camera sees it: the ring's outer corners in picture pixels, clockwise from
    /// the one nearest the picture's top left. Which of them is the tile's top left is not known
    /// yet (the camera may be turned): `PatternReader` tries each.
    public struct Quad: Sendable, Equatable {
        public var corners: [Point]
        public var centre: Point {
            Point(x: corners.map(\.x).reduce(0, +) / 4, y: corners.map(\.y).reduce(0, +) / 4)
        }
    }

    public struct Point: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) { (self.x, self.y) = (x, y) }
    }

    /// The rings in a picture of luma values (say, the mean of the video's first second, where the
    /// rings are steady and the codes flicker), in reading order: top to bottom, then left to right.
    public static func find(in picture: [Double], width: Int, height: Int) -> [Quad] {
        precondition(picture.count == width * height)
        let threshold = otsu(picture)
        var labels = [Int32](repeating: 0, count: picture.count)
        var components: [Component] = []
        var stack: [Int] = []
        for start in 0..<picture.count where picture[start] > threshold && labels[start] == 0 {
            let label = Int32(components.count + 1)
            var component = Component()
            labels[start] = label
            stack.append(start)
            while let index = stack.popLast() {
                let x = index % width
                let y = index / width
                component.add(x: x, y: y)
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]
                where nx >= 0 && ny >= 0 && nx < width && ny < height {
                    let next = ny * width + nx
                    if labels[next] == 0 && picture[next] > threshold {
                        labels[next] = label
                        stack.append(next)
                    }
                }
            }
            components.append(component)
        }
        // A ring: big, mostly hollow, and its middle not its own.
        let rings = components.enumerated().filter { index, component in
            let box = component.boxArea
            guard box >= 400, Double(component.count) / Double(box) < 0.5 else { return false }
            let middle = ((component.minY + component.maxY) / 2) * width + (component.minX + component.maxX) / 2
            return labels[middle] != Int32(index + 1)
        }.map(\.element)
        guard let largest = rings.map(\.boxArea).max() else { return [] }
        let quads = rings.filter { Double($0.boxArea) >= 0.2 * Double(largest) }.map(\.quad)
        let rowHeight = quads.map { abs($0.corners[3].y - $0.corners[0].y) }.min() ?? 1
        return quads.sorted { a, b in
            abs(a.centre.y - b.centre.y) > rowHeight / 2 ? a.centre.y < b.centre.y : a.centre.x < b.centre.x
        }
    }

    /// Otsu's threshold: the level that best splits the picture into two classes.
    static func otsu(_ picture: [Double]) -> Double {
        var histogram = [Double](repeating: 0, count: 256)
        for value in picture { histogram[max(0, min(255, Int(value)))] += 1 }
        let total = Double(picture.count)
        let sum = histogram.enumerated().reduce(0) { $0 + Double($1.offset) * $1.element }
        var below = 0.0
        var belowSum = 0.0
        var best = (level: 128, score: -1.0)
        for level in 0..<256 {
            below += histogram[level]
            belowSum += Double(level) * histogram[level]
            let above = total - below
            guard below > 0, above > 0 else { continue }
            let difference = belowSum / below - (sum - belowSum) / above
            let score = below * above * difference * difference
            if score > best.score { best = (level, score) }
        }
        return Double(best.level) + 0.5
    }

    struct Component {
        var count = 0
        var minX = Int.max, maxX = Int.min, minY = Int.max, maxY = Int.min
        /// The extreme points along x + y and x - y: the outer corners of a quadrilateral.
        var topLeft = (x: 0, y: 0, key: Int.max)
        var bottomRight = (x: 0, y: 0, key: Int.min)
        var topRight = (x: 0, y: 0, key: Int.min)
        var bottomLeft = (x: 0, y: 0, key: Int.max)

        mutating func add(x: Int, y: Int) {
            count += 1
            minX = min(minX, x)
            maxX = max(maxX, x)
            minY = min(minY, y)
            maxY = max(maxY, y)
            if x + y < topLeft.key { topLeft = (x, y, x + y) }
            if x + y > bottomRight.key { bottomRight = (x, y, x + y) }
            if x - y > topRight.key { topRight = (x, y, x - y) }
            if x - y < bottomLeft.key { bottomLeft = (x, y, x - y) }
        }

        var boxArea: Int { (maxX - minX + 1) * (maxY - minY + 1) }

        var quad: Quad {
            Quad(corners: [topLeft, topRight, bottomRight, bottomLeft].map { Point(x: Double($0.x), y: Double($0.y)) })
        }
    }
}
