import CX11Capture
import Config
import Glibc
import Kit
import Support

/// An XImage whose pixels live in a System V shared-memory segment the X server writes into
/// (MIT-SHM): capture costs one request and no copy through the socket. Owns the XImage, the
/// attachment and the mapping; the segment is marked for removal as soon as both sides are
/// attached, so it cannot outlive the process.
final class SharedMemoryImage {
    let image: UnsafeMutablePointer<XImage>
    private let connection: X11Connection
    /// XShmCreateImage keeps a pointer to this, so it lives at a fixed heap address.
    private let segment: UnsafeMutablePointer<XShmSegmentInfo>
    private var attached = false
    private var mapped = false

    /// nil when the server has no usable MIT-SHM for us (remote display, other IPC namespace);
    /// the caller then falls back to XGetImage.
    init?(connection: X11Connection, screen: Int32, width: Int, height: Int) {
        let d = connection.display
        guard XShmQueryExtension(d) != 0 else { return nil }
        self.connection = connection
        segment = .allocate(capacity: 1)
        segment.initialize(to: XShmSegmentInfo())
        guard let img = XShmCreateImage(d, cx11cap_default_visual(d, screen), UInt32(cx11cap_default_depth(d, screen)),
                                        ZPixmap, nil, segment, UInt32(width), UInt32(height)) else {
            segment.deallocate()
            return nil
        }
        image = img
        // From here on the object is whole: a failure returns nil and deinit releases what exists.
        let id = cx11cap_shm_create(Int(img.pointee.bytes_per_line) * Int(img.pointee.height))
        guard id >= 0 else { return nil }
        segment.pointee.shmid = id
        let addr = shmat(id, nil, 0)
        guard let addr, addr != UnsafeMutableRawPointer(bitPattern: -1) else {
            _ = cx11cap_shm_remove(id)
            return nil
        }
        mapped = true
        segment.pointee.shmaddr = addr.assumingMemoryBound(to: CChar.self)
        segment.pointee.readOnly = 0
        img.pointee.data = segment.pointee.shmaddr
        let error = connection.checked { _ = XShmAttach(d, segment) }
        // Both sides are attached (or the server refused): the segment now goes away with its last user.
        _ = cx11cap_shm_remove(id)
        guard error == 0 else { return nil }
        attached = true
    }

    deinit {
        if attached && !connection.isDead {
            XShmDetach(connection.display, segment)
            XSync(connection.display, 0)
        }
        // XDestroyImage would free() the shared memory as if it were malloc'd: unhook it first.
        image.pointee.data = nil
        _ = cx11cap_destroy_image(image)
        if mapped { shmdt(segment.pointee.shmaddr) }
        segment.deallocate()
    }

    /// Copies the rectangle at (x, y) of `window` into the segment (one round trip, no socket copy).
    func capture(_ window: Window, x: Int, y: Int) -> Bool {
        connection.resetErrors()
        let ok = XShmGetImage(connection.display, window, image, Int32(x), Int32(y), cx11cap_all_planes())
        return ok != 0 && connection.lastError == 0 && !connection.isDead
    }
}
