/// Which Debian package has the GStreamer plugin a missing-plugin message asks for.
///
/// GStreamer describes what is missing in words ("AV1 decoder", "MPEG-2 Transport Stream
/// demuxer"); the codecs and formats a wall meets map to the package that provides them in Debian
/// 12, where one does.
enum MissingPlugins {
    /// (words in the description, package), first match wins.
    private static let packages: [([String], String)] = [
        (["AV1", "HEVC", "H.265", "MPEG-2 Transport", "HTTP Live", "HLS", "DASH", "VVC"], "gstreamer1.0-plugins-bad"),
        (["H.264", "MPEG-4", "MPEG-2 Video", "ProRes", "DNxHD", "HAP", "Hap", "CineForm", "AC-3", "E-AC-3", "DTS"],
         "gstreamer1.0-libav"),
        (["MPEG-1 Layer", "MP3"], "gstreamer1.0-plugins-good"),
    ]

    static func debianPackage(for description: String) -> String? {
        packages.first { words, _ in words.contains { description.contains($0) } }?.1
    }
}
