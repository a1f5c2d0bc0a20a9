/// Where the control socket of a daemon lives: in its stateDir, so two daemons with different
/// state never meet and `invoke`/`status` find the one that uses their config.
public enum ControlPaths {
    public static func socket(stateDir: String) -> String { stateDir + "/control.sock" }
}
