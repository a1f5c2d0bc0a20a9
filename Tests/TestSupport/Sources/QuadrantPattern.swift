/// The picture both LD_PRELOAD fakes draw (Tests/fakes/fakefb.c fakefb_expected_rgb and
/// fakev4l2.c fakev4l2_rgb): red/green/blue/white quadrants with a black square in the middle.
/// Keep in sync with those two C functions.
enum QuadrantPattern {
    static func rgb(x: Int, y: Int, width w: Int, height h: Int) -> UInt32 {
        let cx = w / 2, cy = h / 2, half = w / 16
        if x >= cx - half && x < cx + half && y >= cy - half && y < cy + half { return 0x000000 }
        switch (x >= cx, y >= cy) {
        case (false, false): return 0xff0000
        case (true, false): return 0x00ff00
        case (false, true): return 0x0000ff
        case (true, true): return 0xffffff
        }
    }
}
