// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Lockstep",
    products: [
        .library(name: "LockstepTime", targets: ["LockstepTime"]),
        .library(name: "WallPlayer", targets: ["WallPlayer"]),
        .executable(name: "wallnode", targets: ["WallNode"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
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

        .target(name: "CLockstepShims", dependencies: ["CGStreamer", "CFFmpeg"]),

        // MARK: Libraries

        .target(name: "LockstepTime"),
        .target(name: "GroundTruth", dependencies: ["LockstepTime"]),
        .target(name: "WallProtocol", dependencies: ["LockstepTime", .product(name: "Yams", package: "Yams")]),
        .target(
            name: "WallPlayer",
            dependencies: [
                "CGStreamer", "CFFmpeg", "CLockstepShims", "LockstepTime",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Executables

        .executableTarget(
            name: "WallNode",
            dependencies: [
                "WallPlayer", "LockstepTime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Tests

        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "LockstepTimeTests", dependencies: ["LockstepTime"]),
        .testTarget(name: "WallProtocolTests", dependencies: ["WallProtocol", "LockstepTime", "TestSupport"]),
        .testTarget(
            name: "WallPlayerTests", dependencies: ["WallPlayer", "GroundTruth", "LockstepTime", "TestSupport"]),
    ]
)
