/// Lockstep's release version: what `--version` prints and `lockstep_build_info` reports.
public enum LockstepVersion {
    public static let current = "0.1.0"
}
