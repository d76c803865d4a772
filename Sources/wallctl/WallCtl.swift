import ArgumentParser
import LockstepCLI

/// The wall controller's command line.
@main
struct WallCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallctl",
        abstract: "Control a Lockstep video wall and its master clock.",
        version: LockstepVersion.current,
        subcommands: [
            PlayCommand.self, StartCommand.self, PauseCommand.self, ResumeCommand.self, SeekCommand.self,
            NextCommand.self, PreviousCommand.self, GoToCommand.self, RateCommand.self, LoadCommand.self,
            PushCommand.self,
            StopCommand.self, StillCommand.self, BlackCommand.self, IdentifyCommand.self, StatusCommand.self,
            CheckCommand.self, ScheduleCommand.self, DriftCommand.self, SnapshotCommand.self, ClockCommand.self,
            ImpairCommand.self, ServeCommand.self, CueCommand.self, CalibrateCommand.self, ReportCommand.self,
        ]
    )
}
