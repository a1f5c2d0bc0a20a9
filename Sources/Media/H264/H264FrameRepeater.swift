/// Repeats the previous picture of an H.264 stream without the encoder. A P frame whose every
/// macroblock is skipped (with no motion, its neighbours having none) decodes as an exact copy
/// of the frame before it, and it is a few bytes that need no encoding: a recording of a still
/// screen keeps its constant frame rate for the cost of writing them.
///
/// The repeats are CAVLC slices (a skip run is one Exp-Golomb number) that use a picture
/// parameter set of their own, added to the stream's header beside the encoder's. Each repeat is
/// a reference frame, so it takes the next frame_num; the encoder's own frames after it are
/// renumbered to follow (frame_num is a fixed-width field of the slice header, rewritten in
/// place). Only streams whose pictures are ordered by frame_num (picture order count type 2, what
/// libx264 writes without B-frames) and are whole frames are handled: `init` is nil for the rest.
public final class H264FrameRepeater {
    private let sps: H264SequenceParameters
    private let repeatPPSId: UInt32
    /// frame_num of the last reference frame written (PrevRefFrameNum).
    private var lastReferenceFrameNum: UInt32 = 0
    private var maxFrameNum: UInt32 { 1 << UInt32(sps.log2MaxFrameNum) }

    /// The picture parameter set the repeats use, as an Annex B NAL unit: add it to the header.
    public let parameterSet: [UInt8]

    /// `extradata`: the encoder's sequence and picture parameter sets, Annex B.
    public init?(extradata: [UInt8]) {
        var sps: H264SequenceParameters?
        var ppsIds: [UInt32] = []
        for unit in H264NALUnits.split(annexB: extradata) where !unit.isEmpty {
            let rbsp = H264NALUnits.unescape(unit.dropFirst())
            switch unit.first! & 0x1f {
            case 7: if sps == nil { sps = H264SequenceParameters(rbsp: rbsp) }
            case 8:
                var r = BitstreamReader(rbsp)
                guard let id = try? r.ue() else { return nil }
                ppsIds.append(id)
            default: break
            }
        }
        guard let sps, !ppsIds.isEmpty, sps.pictureOrderCountType == 2, sps.frameMbsOnly, !sps.separateColourPlane,
              let top = ppsIds.max(), top < 255 else { return nil }
        self.sps = sps
        repeatPPSId = top + 1
        parameterSet = [0, 0, 0, 1] + [0x68] + H264NALUnits.escape(Self.repeatParameterSet(id: repeatPPSId, spsId: sps.id))
    }

    /// A frame showing the previous one again, Annex B.
    public func repeatFrame() -> [UInt8] {
        let frameNum = (lastReferenceFrameNum + 1) % maxFrameNum
        lastReferenceFrameNum = frameNum
        var w = BitstreamWriter()
        w.ue(0)                  // first_mb_in_slice
        w.ue(0)                  // slice_type: P
        w.ue(repeatPPSId)
        w.bits(frameNum, sps.log2MaxFrameNum)
        w.flag(false)            // num_ref_idx_active_override_flag (the set's default: one)
        w.flag(false)            // ref_pic_list_modification_flag_l0
        w.flag(false)            // adaptive_ref_pic_marking_mode_flag: sliding window
        w.se(0)                  // slice_qp_delta
        w.ue(1)                  // disable_deblocking_filter_idc: nothing to filter
        w.ue(UInt32(sps.frameSizeInMbs))  // mb_skip_run: every macroblock
        // nal_ref_idc 2, nal_unit_type 1 (a non-IDR slice)
        return [0, 0, 0, 1, 0x41] + H264NALUnits.escape(w.finish())
    }

    /// The encoder's frame (Annex B) renumbered to follow the repeats written before it; nil when
    /// its numbers are already right (no repeat since its last keyframe) or it has no slice.
    public func follow(_ packet: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        // The common case, with no repeat since the last keyframe: the first slice's number is
        // already right (a frame's slices share it), and the rest of the packet is not read.
        if let first = firstSlice(packet), let header = first.first, let number = frameNum(ofSlice: first),
           number.current == wanted(for: header) {
            if header & 0x60 != 0 { lastReferenceFrameNum = number.current }
            return nil
        }
        let units = H264NALUnits.split(annexB: Array(packet))
        var replaced: [Int: [UInt8]] = [:]
        var isReference = false
        var numbered: UInt32?
        for (index, unit) in units.enumerated() {
            guard let header = unit.first, header & 0x1f == 1 || header & 0x1f == 5 else { continue }
            isReference = isReference || header & 0x60 != 0
            let wanted = wanted(for: header)
            numbered = wanted
            // The header's first bytes tell whether it needs rewriting; the whole slice only if so.
            guard let number = frameNum(ofSlice: unit), number.current != wanted else { continue }
            var rbsp = H264NALUnits.unescape(unit.dropFirst())
            Self.overwrite(&rbsp, at: number.position, value: wanted, width: sps.log2MaxFrameNum)
            replaced[index] = [header] + H264NALUnits.escape(rbsp)
        }
        if isReference, let numbered { lastReferenceFrameNum = numbered }
        guard !replaced.isEmpty else { return nil }
        return H264NALUnits.join(units.enumerated().map { replaced[$0.offset] ?? Array($0.element) })
    }

    /// The first slice NAL unit of an Annex B packet (up to its first 64 bytes: enough for a header).
    private func firstSlice(_ packet: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var i = 0
        while i + 3 < packet.count {
            if packet[i] == 0, packet[i + 1] == 0, packet[i + 2] == 1 {
                let type = packet[i + 3] & 0x1f
                if type == 1 || type == 5 { return Array(packet[(i + 3)..<min(packet.count, i + 3 + 64)]) }
                i += 3
            } else {
                i += 1
            }
        }
        return nil
    }

    /// The frame_num a slice should carry: 0 in an IDR picture, else the one after the last
    /// reference frame's.
    private func wanted(for header: UInt8) -> UInt32 {
        header & 0x1f == 5 ? 0 : (lastReferenceFrameNum + 1) % maxFrameNum
    }

    /// A slice NAL unit's frame_num and its bit position in the RBSP, from the header's first bytes.
    private func frameNum(ofSlice unit: some Collection<UInt8>) -> (current: UInt32, position: Int)? {
        var r = BitstreamReader(H264NALUnits.unescape(unit.dropFirst().prefix(32)))
        do throws(BitstreamReader.Overrun) {
            _ = try r.ue(); _ = try r.ue(); _ = try r.ue()  // first_mb_in_slice, slice_type, pic_parameter_set_id
            let position = r.position
            return (try r.bits(sps.log2MaxFrameNum), position)
        } catch { return nil }
    }

    private static func overwrite(_ rbsp: inout [UInt8], at position: Int, value: UInt32, width: Int) {
        for i in 0..<width {
            let bit = UInt8(value >> UInt32(width - 1 - i) & 1)
            let p = position + i
            let mask = UInt8(0x80) >> UInt8(p & 7)
            rbsp[p >> 3] = bit == 1 ? rbsp[p >> 3] | mask : rbsp[p >> 3] & ~mask
        }
    }

    /// A picture parameter set for skip-only slices: CAVLC, one reference, no weighting,
    /// deblocking control present (so the slices can turn it off).
    private static func repeatParameterSet(id: UInt32, spsId: UInt32) -> [UInt8] {
        var w = BitstreamWriter()
        w.ue(id)
        w.ue(spsId)
        w.flag(false)   // entropy_coding_mode_flag: CAVLC
        w.flag(false)   // bottom_field_pic_order_in_frame_present_flag
        w.ue(0)         // num_slice_groups_minus1
        w.ue(0); w.ue(0)  // num_ref_idx_l0/l1_default_active_minus1
        w.flag(false)   // weighted_pred_flag
        w.bits(0, 2)    // weighted_bipred_idc
        w.se(0); w.se(0); w.se(0)  // pic_init_qp_minus26, pic_init_qs_minus26, chroma_qp_index_offset
        w.flag(true)    // deblocking_filter_control_present_flag
        w.flag(false)   // constrained_intra_pred_flag
        w.flag(false)   // redundant_pic_cnt_present_flag
        return w.finish()
    }
}
