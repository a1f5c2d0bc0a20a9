import CHeap

/// glibc keeps freed memory in its heap for reuse; after something large is let go (a codec's
/// buffers, a language model) that memory stays resident until the heap is trimmed.
public enum HeapTrim {
    /// Returns free heap pages to the kernel (malloc_trim(0): every arena, whole free pages in the
    /// middle of the heap too). Costs a walk over the free lists, so call it after a release, not
    /// in a loop. True when something was given back.
    @discardableResult
    public static func returnFreeMemory() -> Bool { ocn_heap_trim() == 1 }
}
