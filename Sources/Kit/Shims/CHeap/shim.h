// malloc_trim for Support's HeapTrim: bundles cannot use the core's CMalloc shim.
#include <malloc.h>

/// Gives free heap pages back to the kernel, in every arena and in the middle of the heap
/// (madvise), not only at its top. 1 when memory was released.
static inline int ocn_heap_trim(void) { return malloc_trim(0); }
