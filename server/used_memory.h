// The memory the process has allocated, counted as it is allocated (Redis's
// zmalloc used_memory): INFO's used_memory, MEMORY STATS and maxmemory read
// it in O(1).
//
// Why not glibc's mallinfo2(): it walks malloc's free lists. After many keys
// are deleted the heap holds hundreds of thousands of free chunks and one
// call takes ~10 ms; the cron called it every second (a 10 ms stall of the
// loop), and with maxmemory set every write called it (a server doing 40k
// SET/s did 120). Here malloc, free and their kin are wrapped (ELF symbol
// interposition, which glibc supports for replacing its allocator): each
// call adds or subtracts the chunk's usable size to a counter of the
// calling thread's own, and a reading sums the threads' counters.
//
// Under a sanitizer, which has its own allocator, nothing is wrapped; under
// valgrind's memcheck, which replaces malloc in the executable too, the
// wrappers are never called. Counted() is false in both (it tries one
// allocation) and the callers estimate (server/diagnostics.cc).
#pragma once

#include <cstdint>

namespace latch::used_memory {

// Whether allocations are counted in this build.
bool Counted();
// Bytes allocated and not freed (the chunks' usable sizes), all threads.
uint64_t Bytes();

}  // namespace latch::used_memory
