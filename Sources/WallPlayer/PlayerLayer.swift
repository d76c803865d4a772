/// Shows a player's video (`AVPlayerLayer`): the sink, how the picture fills it, and which part
/// of the picture this screen shows.
public final class PlayerLayer: Sendable {
    public let player: Player

    /// Attaches to `player`, giving it a video output if it had none.
    public init(player: Player) {
        self.player = player
        if player.videoOutput == nil { player.videoOutput = VideoOutputSettings() }
    }

    private var output: VideoOutputSettings { player.videoOutput ?? VideoOutputSettings() }

    private func update(_ change: (inout VideoOutputSettings) -> Void) {
        var settings = output
        change(&settings)
        player.videoOutput = settings
    }

    /// How the picture fills the output.
    public var videoGravity: VideoGravity {
        get { output.videoGravity }
        set { update { $0.videoGravity = newValue } }
    }

    /// The part of the picture shown: the wall tile.
    public var sourceCrop: NormalizedRect {
        get { output.sourceCrop }
        set { update { $0.sourceCrop = newValue } }
    }

    /// The output's size in pixels; nil keeps the cropped picture's size.
    public var outputSize: PixelSize? {
        get { output.outputSize }
        set { update { $0.outputSize = newValue } }
    }

    /// The GStreamer bin description of the video sink.
    public var sinkDescription: String {
        get { output.sinkDescription }
        set { update { $0.sinkDescription = newValue } }
    }

    /// Whether the sink holds a frame of the current item.
    public var isReadyForDisplay: Bool { player.isReadyForDisplay }

    /// `isReadyForDisplay` now and every change after.
    public var isReadyForDisplayUpdates: AsyncStream<Bool> { player.isReadyForDisplayUpdates }
}
