import LockstepTime

/// Reads a camera video of the wall showing the calibration pattern: finds the screens in its
/// first second, then reads every picture's bands.
public enum CameraAnalysis {
    /// How long the screens are looked for: the rings are steady over it, the codes flicker.
    static let searchSeconds = 1.0

    /// The clean reads of `video`, for `GlassTiming`. Decodes the file twice: once to find the
    /// screens, once to read them.
    public static func reads(of video: CameraVideo) throws -> GlassTiming.Video {
        var sum: [Double] = []
        var size = (width: 0, height: 0)
        var first: MediaTime?
        var averaged = 0
        try video.forEachFrame { frame in
            if first == nil {
                first = frame.time
                size = (frame.width, frame.height)
                sum = [Double](repeating: 0, count: frame.width * frame.height)
            }
            guard frame.width == size.width, frame.height == size.height else { return false }
            guard (frame.time - first!).seconds < searchSeconds else { return false }
            for index in sum.indices { sum[index] += Double(frame.pixels[index]) }
            averaged += 1
            return true
        }
        guard averaged > 0, let first else { throw GlassTiming.Failure(description: "\(video.path): no pictures in it") }
        let quads = ScreenFinder.find(
            in: sum.map { $0 / Double(averaged) }, width: size.width, height: size.height)
        guard !quads.isEmpty else {
            throw GlassTiming.Failure(
                description: "\(video.path): no screen shows the calibration pattern in its first second "
                    + "(a white frame around each screen); start filming once `wallctl calibrate` shows it")
        }
        var reader = PatternReader(quads: quads)
        var reads: [(time: Double, read: PatternReader.Read)] = []
        var pictures = 0
        var last = first
        try video.forEachFrame { frame in
            guard frame.width == size.width, frame.height == size.height else {
                throw GlassTiming.Failure(description: "\(video.path): its picture size changes at \(frame.time.seconds) s")
            }
            let time = (frame.time - first).seconds
            reads += reader.read(frame).map { (time, $0) }
            pictures += 1
            last = frame.time
            return true
        }
        let span = (last - first).seconds
        let rate = pictures > 1 && span > 0 ? Double(pictures - 1) / span : 0
        return GlassTiming.Video(name: video.path, reads: reads, frameRate: rate)
    }
}
