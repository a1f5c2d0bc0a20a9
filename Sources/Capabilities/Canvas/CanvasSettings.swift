import Config
import Glibc
import Kit
import Support

/// `capabilities.canvas` and what it implies, read once at start-up.
struct CanvasSettings: Sendable {
    var browser: String?
    var window = false
    var display: String?
    var profileDir: String
    var width = 1280
    var height = 720
    /// Upper bounds for one page load and one script; an invoke deadline may shorten them.
    var navigationTimeout: Duration = .seconds(15)
    var evalTimeout: Duration = .seconds(10)
    /// How long an A2UI page may take to define `openclawA2UI` (the apps wait 5 s).
    var a2uiReadyTimeout: Duration = .seconds(5)

    init(_ section: BundleSection, stateDirectory: String, environment env: [String: String]) {
        browser = section.string("browser").flatMap { $0.isEmpty ? nil : $0 }
        window = section.bool("window") ?? false
        display = section.string("display").flatMap { $0.isEmpty ? nil : $0 } ?? env["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        profileDir = stateDirectory + "/browser"
    }

    var browserOptions: Result<BrowserProcess.Options, NodeError> {
        BrowserLocator.find(configured: browser, window: window).map {
            BrowserProcess.Options(executable: $0, profileDir: profileDir, window: window, display: display,
                                   width: width, height: height)
        }
    }
}
