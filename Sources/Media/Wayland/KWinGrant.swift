/// KDE Plasma's KWin serves its screenshots (org.kde.KWin.ScreenShot2) and fake input only to a
/// program a desktop entry grants them: it reads the caller's /proc/PID/exe and takes the first
/// entry whose Exec= names that file. The package's entry names the full program (not the
/// /usr/bin launcher in front of it, which hands the daemon over to it by execv).
public enum KWinGrant {
    public static let file = "/usr/share/applications/ai.openclaw.node.desktop"
    public static let program = "/usr/lib/openclaw-node/openclaw-node"
    /// What to do once the entry is there.
    public static let refresh = "run kbuildsycoca5 as the desktop's user, or log in again"
}
