// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Lockstep",
    products: [
        .library(name: "LockstepTime", targets: ["LockstepTime"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // MARK: System libraries

        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-1.0 gstreamer-base-1.0 gstreamer-app-1.0 gstreamer-video-1.0 gstreamer-net-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]
        ),

        // MARK: Shims

        .target(name: "CLockstepShims", dependencies: ["CGStreamer"]),

        // MARK: Libraries

        .target(name: "LockstepTime"),
        // MARK: Tests

        .testTarget(name: "LockstepTimeTests", dependencies: ["LockstepTime"]),
    ]
)
