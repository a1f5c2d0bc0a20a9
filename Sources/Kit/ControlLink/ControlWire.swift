/// The control socket's framing, shared by the daemon's server and its clients: one JSON object
/// per line each way (ControlProtocol in the core lists the requests).
public enum ControlWire {
    /// Invoke params and payloads can be large (photos): 64 MiB per line.
    public static let maxLineBytes = 64 * 1024 * 1024
}
