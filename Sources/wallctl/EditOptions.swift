import ArgumentParser
import LockstepTime

/// When a timeline edit takes effect.
struct EditOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Seconds ahead of the master's now the change takes effect on every screen (at least 1: each node "
                + "prepares what comes next before that time)."))
    var lead: Double = 2

    func validate() throws {
        guard lead.isFinite, lead >= 1, lead <= 300 else {
            throw ValidationError("--lead must be 1 to 300 seconds, got \(lead)")
        }
    }

    var leadTime: MediaTime { MediaTime(seconds: lead, preferredTimescale: 1000) }
}
