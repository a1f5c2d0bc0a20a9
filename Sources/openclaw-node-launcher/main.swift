import ControlLink
import Glibc
import Support

// /usr/bin/openclaw-node as installed. A script that calls `openclaw-node invoke …` once per
// action pays the program's start each time, and for the full program half of that start is
// loading the Swift runtime's shared libraries and the core. This program has the runtime linked
// in and only the control socket's client: it answers `invoke` when a daemon is running, and
// hands every other command line — and an invoke with no daemon to ask — to the full program by
// execv (same process, arguments and environment).

var arguments = CommandLine.arguments
if arguments.count > 1, arguments[1] == "invoke" {
    // A daemon that closes early, or a reader of stdout that went away, is an error, not a signal.
    let inherited = signal(SIGPIPE, SIG_IGN)
    if let code = DaemonInvoke.viaDaemon(Array(arguments.dropFirst(2))) { exit(code) }
    signal(SIGPIPE, inherited)
    // The socket is somebody else's (said already): the program runs the invoke itself, as it
    // would after finding that out again.
    if DaemonInvoke.refusedTheSocket { arguments.insert("--local", at: 2) }
}
let why = FullProgram.exec(arguments)
StandardStreams.line("openclaw-node: \(why)", to: STDERR_FILENO)
exit(127)
