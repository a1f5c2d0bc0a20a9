@testable import FilesCapability
@testable import Kit
@testable import Support
import Testing

/// The pure rules of the files bundle: upstream's name sanitizing and base64 rules, the globs,
/// path normalization (the commands themselves run through the daemon: FilesCommandsTests).
@Suite struct FilesUnitTests {
    @Test func uploadNamesAreSanitizedAsUpstreamDoes() {
        #expect(TerminalUpload.sanitize("report.pdf") == "report.pdf")
        #expect(TerminalUpload.sanitize("../../etc/passwd") == "passwd")
        #expect(TerminalUpload.sanitize("C:\\Users\\me\\notes.txt") == "notes.txt")
        #expect(TerminalUpload.sanitize("a<b>c:d\"e|f?g*h%i!j") == "a_b_c_d_e_f_g_h_i_j")
        #expect(TerminalUpload.sanitize("tab\there\u{7f}") == "tab_here_")
        #expect(TerminalUpload.sanitize("  name. . ") == "name")
        #expect(TerminalUpload.sanitize("CON") == "_CON")
        #expect(TerminalUpload.sanitize("lpt1.txt") == "_lpt1.txt")
        #expect(TerminalUpload.sanitize("console.txt") == "console.txt")
        #expect(TerminalUpload.sanitize("") == "upload")
        #expect(TerminalUpload.sanitize("..") == "upload")
        #expect(TerminalUpload.sanitize("dir/") == "dir")
        #expect(TerminalUpload.sanitize("/") == "upload")
        let long = String(repeating: "é", count: 200)  // 2 bytes each
        #expect(TerminalUpload.sanitize(long).utf8.count == 180)
        #expect(TerminalUpload.sanitize(String(repeating: "a", count: 179) + "é").utf8.count == 179)
    }

    @Test func terminalUploadTakesCanonicalPaddedBase64Only() throws {
        #expect(try TerminalUpload.decode("aGVsbG8=") == Array("hello".utf8))
        #expect(try TerminalUpload.decode("") == [])
        for bad in ["aGVsbG8", "aGVsbG9=", "aGVs bG8=", "aGV-bG8=", "a===", "aGVsbG8=\n"] {
            #expect(throws: NodeError.invalidRequest("invalid terminal upload encoding")) { try TerminalUpload.decode(bad) }
        }
        #expect(TerminalUpload.maxBase64Length == 22_369_624)
        let tooLong = String(repeating: "A", count: TerminalUpload.maxBase64Length + 4)
        #expect(throws: NodeError.invalidRequest("terminal upload exceeds 16777216 bytes")) { try TerminalUpload.decode(tooLong) }
    }

    @Test func fileWriteBase64ToleratesPaddingAndTheURLAlphabetOnly() {
        #expect(FileWrite.decodeTolerant("aGVsbG8=") == Array("hello".utf8))
        #expect(FileWrite.decodeTolerant("aGVsbG8") == Array("hello".utf8))
        #expect(FileWrite.decodeTolerant("-_8=") == [0xfb, 0xff])
        #expect(FileWrite.decodeTolerant("") == [])
        #expect(FileWrite.decodeTolerant("QR==") == nil)  // bits that name no byte
        #expect(FileWrite.decodeTolerant("aGV sbG8=") == nil)
        #expect(FileWrite.decodeTolerant("aG=VsbG8") == nil)
    }

    @Test func globsMatchCanonicalPaths() {
        let g = { (p: String) in PathGlob(p, home: "/nonexistent-home") }
        #expect(g("~/Documents/**").matches("/nonexistent-home/Documents/a/b.txt"))
        #expect(g("~/Documents/**").matches("/nonexistent-home/Documents"))
        #expect(!g("~/Documents/**").matches("/nonexistent-home/Documents2"))
        #expect(g("/srv/*.pdf").matches("/srv/a.pdf") && !g("/srv/*.pdf").matches("/srv/x/a.pdf"))
        #expect(g("/srv/**/*.pdf").matches("/srv/a.pdf") && g("/srv/**/*.pdf").matches("/srv/x/y/a.pdf"))
        #expect(g("/srv/**").matches("/srv/.hidden/x"))
        #expect(g("/a/?.txt").matches("/a/b.txt") && !g("/a/?.txt").matches("/a/bc.txt"))
    }

    @Test func pathsAreNormalizedAndParentSegmentsSpotted() {
        #expect(CanonicalPath.normalize("//a/./b/") == "/a/b")
        #expect(CanonicalPath.normalize("/") == "/")
        #expect(CanonicalPath.hasParentSegment("/a/../etc/passwd"))
        #expect(CanonicalPath.hasParentSegment("/a\\..\\b"))
        #expect(!CanonicalPath.hasParentSegment("/a/..b/c.."))
        #expect(DirList.parseInt("12") == 12 && DirList.parseInt(" 7x") == 7 && DirList.parseInt("abc") == 0 && DirList.parseInt("-3") == 0)
    }
}
