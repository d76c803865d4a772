import Foundation

/// Which Debian package has the GStreamer plugin a missing-plugin message asks for.
///
/// GStreamer describes what is missing in words ("AV1 decoder", "MPEG-2 Transport Stream
/// demuxer"); the codecs and formats a wall meets map to the package that provides them in Debian
/// 12, where one does.
enum MissingPlugins {
    /// (words in the description, package), first match wins.
    private static let packages: [([String], String)] = [
        (["AV1", "HEVC", "H.265", "MPEG-2 Transport", "HTTP Live", "HLS", "DASH", "VVC"], "gstreamer1.0-plugins-bad"),
        (
            ["H.264", "MPEG-4", "MPEG-2 Video", "ProRes", "DNxHD", "CineForm", "AC-3", "E-AC-3", "DTS"],
            "gstreamer1.0-libav"
        ),
        (["MPEG-1 Layer", "MP3"], "gstreamer1.0-plugins-good"),
    ]

    static func debianPackage(for description: String) -> String? {
        if isHAP(description) { return nil }
        return packages.first { words, _ in words.contains { description.contains($0) } }?.1
    }

    /// What to do where no package helps. HAP video (QuickTime fourccs Hap1, Hap5, HapY, HapM,
    /// HapA, Hap7, HapH): gst-libav 1.22 registers `avdec_hap` with no caps a demuxer can link to,
    /// so no GStreamer plugin Debian 12 ships decodes it; ffmpeg's own HAP decoder can convert it.
    static func advice(for description: String) -> String? {
        guard isHAP(description) else { return nil }
        return "GStreamer 1.22 has no HAP decoder it can use (gst-libav's avdec_hap takes no input caps); "
            + "convert the file, e.g. ffmpeg -i IN.mov -c:v libx264 -crf 16 -pix_fmt yuv420p OUT.mp4"
    }

    private static func isHAP(_ description: String) -> Bool {
        description.range(of: #"fourcc-Hap[15YMAH7]\b"#, options: .regularExpression) != nil
    }
}
