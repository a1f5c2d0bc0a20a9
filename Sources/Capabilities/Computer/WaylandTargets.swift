import Kit
import WaylandSupport

extension WaylandConnection {
    /// The output number `screenIndex`, as it is now, as computer.act aims at it (wlroots and
    /// KWin alike): its identity for displayFrameId, its size, and the output itself.
    func inputTarget(screenIndex: Int) throws(NodeError) -> InputTarget {
        try roundtrip()
        let outputs = orderedOutputs
        guard outputs.indices.contains(screenIndex) else {
            throw NodeError.invalidRequest("screenIndex \(screenIndex) does not exist: the compositor has \(outputs.count) output(s)")
        }
        let o = outputs[screenIndex]
        return InputTarget(identity: o.identity, width: o.width, height: o.height, label: o.name, handle: o)
    }
}
