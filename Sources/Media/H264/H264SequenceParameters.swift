/// The fields of an H.264 sequence parameter set that a slice header depends on (7.3.2.1.1).
struct H264SequenceParameters: Equatable {
    let id: UInt32
    let log2MaxFrameNum: Int
    /// 0, 1 or 2: how pictures carry their display order.
    let pictureOrderCountType: UInt32
    let frameMbsOnly: Bool
    let separateColourPlane: Bool
    let widthInMbs: Int
    let heightInMapUnits: Int

    /// Macroblocks in one frame.
    var frameSizeInMbs: Int { widthInMbs * heightInMapUnits * (frameMbsOnly ? 1 : 2) }

    /// Parses the RBSP after the NAL header byte; nil when it is cut short or malformed.
    init?(rbsp: [UInt8]) {
        var r = BitstreamReader(rbsp)
        do throws(BitstreamReader.Overrun) {
            let profile = try r.bits(8)
            _ = try r.bits(16)  // constraint flags, reserved bits, level_idc
            id = try r.ue()
            var separate = false
            if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
                let chromaFormat = try r.ue()
                if chromaFormat == 3 { separate = try r.flag() }
                _ = try r.ue(); _ = try r.ue()  // bit depths
                _ = try r.flag()  // qpprime_y_zero_transform_bypass_flag
                if try r.flag() {  // seq_scaling_matrix_present_flag
                    for list in 0..<(chromaFormat == 3 ? 12 : 8) where try r.flag() {
                        try Self.skipScalingList(&r, size: list < 6 ? 16 : 64)
                    }
                }
            }
            separateColourPlane = separate
            log2MaxFrameNum = Int(try r.ue()) + 4
            pictureOrderCountType = try r.ue()
            if pictureOrderCountType == 0 {
                _ = try r.ue()  // log2_max_pic_order_cnt_lsb_minus4
            } else if pictureOrderCountType == 1 {
                _ = try r.flag(); _ = try r.se(); _ = try r.se()
                for _ in 0..<(try r.ue()) { _ = try r.se() }
            }
            _ = try r.ue()    // max_num_ref_frames
            _ = try r.flag()  // gaps_in_frame_num_value_allowed_flag
            widthInMbs = Int(try r.ue()) + 1
            heightInMapUnits = Int(try r.ue()) + 1
            frameMbsOnly = try r.flag()
        } catch {
            return nil
        }
        guard log2MaxFrameNum <= 16, pictureOrderCountType <= 2 else { return nil }
    }

    private static func skipScalingList(_ r: inout BitstreamReader, size: Int) throws(BitstreamReader.Overrun) {
        var last: Int32 = 8, next: Int32 = 8
        for _ in 0..<size {
            if next != 0 { next = (last + (try r.se()) + 256) % 256 }
            last = next == 0 ? last : next
        }
    }
}
