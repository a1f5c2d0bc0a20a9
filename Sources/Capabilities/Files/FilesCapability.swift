import Config
import Glibc
import Kit
import Support

/// `files`: fs.listDir and terminal.upload (the Control UI's directory picker and terminal
/// uploads) and upstream's file-transfer commands, all inside the node's own path policy
/// (`capabilities.files.read`/`write`, PathPolicy).
struct FilesCapability: Capability, CapabilityLifecycle, SelfDiagnosing, AdvertisesExtraCaps {
    let manifest: BundleManifest
    let policy: PathPolicy
    let uploads: UploadRoot
    let sweeper: UploadSweeper

    init(context: CapabilityContext) {
        manifest = context.manifest
        let settings = FilesSettings(context.section, home: PathName.home(context.environment))
        policy = PathPolicy(settings: settings, privateDirectories: context.privateDirectories, privateFiles: context.privateFiles)
        uploads = UploadRoot(environment: context.environment, stateDirectory: context.stateDirectory)
        sweeper = UploadSweeper(root: uploads, clock: context.clock)
    }

    var handlers: [CommandHandler] { [
        CommandHandler("fs.listDir", params: FsListDirParams.self) { [policy] (p: FsListDirParams, _: InvocationContext) async throws(NodeError) -> FsListDirResult in
            try await DirectoryPicker(policy: policy).run(p)
        },
        CommandHandler("terminal.upload", params: TerminalUploadParams.self) { [uploads] (p: TerminalUploadParams, _: InvocationContext) async throws(NodeError) -> TerminalUploadResult in
            try await TerminalUpload(root: uploads).run(p)
        },
        CommandHandler("file.fetch", params: FileFetchParams.self) { [policy] p, _ in await FileFetch(policy: policy).run(p) },
        CommandHandler("dir.list", params: DirListParams.self) { [policy] p, _ in await DirList(policy: policy).run(p) },
        CommandHandler("dir.fetch", params: DirFetchParams.self) { [policy] p, _ in await DirFetch(policy: policy).run(p) },
        CommandHandler("file.write", params: FileWriteParams.self) { [policy] p, _ in await FileWrite(policy: policy).run(p) },
    ] }

    /// Upstream's file-transfer plugin declares its commands under the capability "file".
    var extraCaps: [String] { ["file"] }

    func availability() async -> Availability { .available }

    func start() async -> Availability {
        sweeper.start()
        return .available
    }

    func shutdown() async { sweeper.stop() }

    func diagnose() async -> [Diagnosis] {
        let s = policy.settings
        var out: [Diagnosis] = []
        let globs = { (g: [PathGlob]) in g.isEmpty ? "none (nothing)" : g.map(\.pattern).joined(separator: ", ") }
        out.append(Diagnosis(s.read.isEmpty ? .warn : .ok, "read: \(globs(s.read)) — fs.listDir, file.fetch, dir.list and dir.fetch (capabilities.files.read)"))
        out.append(Diagnosis(.ok, "write: \(globs(s.write)) — file.write (capabilities.files.write); followSymlinks \(s.followSymlinks), maxBytes \(s.maxBytes)"))
        out.append(Diagnosis(.ok, "terminal uploads are staged in \(uploads.path) and removed after 24 h"))
        // tar and file(1): doctor's programs line, from the manifest.
        return out
    }
}
