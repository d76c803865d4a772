// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Lockstep",
    products: [
        .library(name: "LockstepTime", targets: ["LockstepTime"]),
        .library(name: "LockstepNet", targets: ["LockstepNet"]),
        .library(name: "SyncClock", targets: ["SyncClock"]),
        .library(name: "NetImpair", targets: ["NetImpair"]),
        .library(name: "LockstepCLI", targets: ["LockstepCLI"]),
        .library(name: "WallPlayer", targets: ["WallPlayer"]),
        .library(name: "WallTimeline", targets: ["WallTimeline"]),
        .executable(name: "wallnode", targets: ["WallNode"]),
        .executable(name: "wallctl", targets: ["wallctl"]),
        .executable(name: "lockstep-fuzz", targets: ["LockstepFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
    ],
    targets: [
        // MARK: System libraries

        .systemLibrary(
            name: "CGStreamer",
            pkgConfig:
                "gstreamer-1.0 gstreamer-base-1.0 gstreamer-app-1.0 gstreamer-video-1.0 gstreamer-net-1.0 gstreamer-pbutils-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]
        ),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // MARK: Shims

        .target(name: "CLockstepShims", dependencies: ["CGStreamer"]),
        .target(name: "CFFmpegShims", dependencies: ["CFFmpeg"]),
        .target(name: "CLockstepNetShims"),
        .target(
            name: "CLockstepX11",
            linkerSettings: [.linkedLibrary("X11"), .linkedLibrary("Xrandr")]
        ),

        // MARK: Libraries

        .target(name: "LockstepLocks"),
        .target(
            name: "LockstepTime", dependencies: ["LockstepLocks", .product(name: "Logging", package: "swift-log")]),
        .target(name: "LockstepNet", dependencies: ["LockstepLocks", "CLockstepNetShims", "LockstepTime"]),
        .target(
            name: "LockstepGuard",
            dependencies: [
                "LockstepLocks", "LockstepNet", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "SyncClock",
            dependencies: [
                "LockstepLocks", "CCrypto", "LockstepNet", "LockstepTime",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NetImpair",
            dependencies: [
                "LockstepLocks", "LockstepNet", "LockstepTime", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "LockstepCLI",
            dependencies: [
                "LockstepLocks",
                "LockstepTime", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "WallPlayer",
            dependencies: [
                "LockstepLocks",
                "CGStreamer", "CFFmpeg", "CFFmpegShims", "CLockstepShims", "LockstepTime",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "WallTimeline", dependencies: ["LockstepTime"]),
        .target(
            name: "WallContent",
            dependencies: [
                "LockstepLocks", "LockstepGuard", "LockstepNet", "LockstepTime", "WallTimeline", "CCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "ShowControl",
            dependencies: [
                "LockstepLocks", "LockstepGuard", "LockstepNet", "LockstepTime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "WallFollower",
            dependencies: ["LockstepTime", "WallTimeline", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "WallDisplay", dependencies: ["LockstepLocks", "CLockstepX11", "LockstepNet"]),
        .target(
            name: "WallControl",
            dependencies: [
                "GroundTruth", "LockstepGuard", "LockstepLocks", "LockstepNet", "LockstepTime", "WallAnalysis",
                "WallContent", "WallProtocol", "WallTimeline", "ShowControl", "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "NodeService",
            dependencies: [
                "LockstepLocks",
                "WallFollower", "WallPlayer", "WallProtocol", "WallTimeline", "WallControl", "WallDisplay", "SyncClock",
                "WallContent", "LockstepGuard",
                "LockstepNet", "LockstepCLI", "LockstepTime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(name: "GroundTruth", dependencies: ["LockstepLocks", "LockstepNet", "LockstepTime"]),
        .target(
            name: "WallProtocol",
            dependencies: [
                "CCrypto", "LockstepLocks", "LockstepNet", "LockstepTime", "SyncClock", "WallTimeline", "ShowControl",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "WallAnalysis",
            dependencies: [
                "GroundTruth", "LockstepTime", "WallProtocol",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),

        .target(
            name: "WallConsole",
            dependencies: [
                "LockstepGuard", "LockstepLocks", "LockstepTime", "ShowControl", "SyncClock", "WallAnalysis",
                "WallContent", "WallControl", "WallProtocol", "WallTimeline",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        .target(
            name: "WallDaemon",
            dependencies: [
                "LockstepCLI", "LockstepGuard", "LockstepNet", "LockstepTime", "ShowControl", "WallConsole",
                "WallContent", "WallControl", "WallProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        .target(name: "WallCalibration", dependencies: ["CFFmpeg", "CFFmpegShims", "LockstepTime"]),

        .target(
            name: "LockstepFuzzing",
            dependencies: [
                "LockstepGuard", "LockstepTime", "SyncClock", "WallFollower", "WallProtocol", "WallTimeline",
                "ShowControl",
            ]
        ),

        // MARK: Executables

        .executableTarget(
            name: "WallNode",
            dependencies: [
                "LockstepLocks",
                "NodeService", "WallPlayer", "WallProtocol", "WallControl", "WallDisplay", "LockstepCLI",
                "LockstepGuard",
                "LockstepTime", "CLockstepNetShims",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "wallctl",
            dependencies: [
                "LockstepCLI", "LockstepGuard", "LockstepNet", "LockstepTime", "NetImpair", "SyncClock", "WallProtocol",
                "WallTimeline", "WallControl", "WallAnalysis", "WallDaemon", "ShowControl", "WallCalibration",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        .executableTarget(name: "LockstepFuzz", dependencies: ["LockstepFuzzing"]),

        // MARK: Tests

        .target(
            name: "TestSupport", dependencies: ["LockstepLocks", "LockstepTime", "GroundTruth"],
            path: "Tests/TestSupport"),
        .testTarget(name: "LockstepTimeTests", dependencies: ["LockstepLocks", "LockstepTime"]),
        .testTarget(name: "LockstepNetTests", dependencies: ["LockstepNet"]),
        .testTarget(
            name: "LockstepGuardTests",
            dependencies: [
                "LockstepGuard", "LockstepNet", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "WallContentTests",
            dependencies: [
                "LockstepGuard", "LockstepNet", "WallContent", "WallControl", "WallTimeline", "LockstepTime",
                "TestSupport", "LockstepLocks", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "WallTimelineTests", dependencies: ["WallTimeline", "LockstepTime", "LockstepFuzzing"]),
        .testTarget(
            name: "WallFollowerTests",
            dependencies: [
                "LockstepLocks", "WallFollower", "WallTimeline", "LockstepTime",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NodeServiceTests",
            dependencies: [
                "NodeService", "WallPlayer", "WallProtocol", "WallTimeline", "LockstepTime", "TestSupport",
                "WallContent", "WallControl", "LockstepLocks",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ]
        ),
        .testTarget(name: "WallDisplayTests", dependencies: ["WallDisplay"]),
        .testTarget(
            name: "SyncClockTests",
            dependencies: ["LockstepLocks", "SyncClock", "LockstepNet", "NetImpair", "TestSupport", "LockstepTime"]
        ),
        .testTarget(
            name: "ShowControlTests",
            dependencies: [
                "ShowControl", "LockstepNet", "LockstepTime", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "NetImpairTests", dependencies: ["NetImpair", "LockstepNet", "LockstepTime"]),
        .testTarget(
            name: "LockstepCLITests",
            dependencies: ["LockstepCLI", "LockstepTime", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "WallCtlTests", dependencies: ["LockstepLocks", "wallctl", "TestSupport", "WallProtocol"]),
        .testTarget(
            name: "WallPlayerTests",
            dependencies: [
                "LockstepLocks", "WallPlayer", "CGStreamer", "CLockstepShims", "GroundTruth", "LockstepTime",
                "TestSupport", "LockstepNet",
            ]
        ),
        .testTarget(name: "LockstepFuzzingTests", dependencies: ["LockstepFuzzing", "LockstepNet", "TestSupport"]),
        .testTarget(name: "WallProtocolTests", dependencies: ["WallProtocol", "LockstepTime", "TestSupport"]),
        .testTarget(
            name: "WallIntegrationTests",
            dependencies: [
                "LockstepLocks",
                "WallAnalysis", "GroundTruth", "LockstepTime", "LockstepNet", "TestSupport", "wallctl", "WallNode",
                "WallDisplay", "WallTimeline",
            ]
        ),
        .testTarget(
            name: "WallConsoleTests",
            dependencies: [
                "LockstepGuard", "WallConsole", "WallProtocol", "WallControl", "LockstepLocks", "LockstepTime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "WallCalibrationTests",
            dependencies: ["WallCalibration", "WallProtocol", "LockstepTime", "TestSupport", "wallctl"],
            // The simulated camera renders thousands of pictures: optimized, it takes seconds, not a minute.
            swiftSettings: [.unsafeFlags(["-O"])]),
        .testTarget(
            name: "WallControlTests",
            dependencies: [
                "WallControl", "WallContent", "WallProtocol", "WallTimeline", "ShowControl", "LockstepTime",
                "LockstepLocks", "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "WallDaemonTests",
            dependencies: [
                "LockstepGuard", "LockstepNet", "LockstepTime", "ShowControl", "TestSupport", "WallContent",
                "WallDaemon",
                "WallProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "WallAnalysisTests", dependencies: ["WallAnalysis", "GroundTruth", "LockstepTime", "WallProtocol"]
        ),
    ]
)
