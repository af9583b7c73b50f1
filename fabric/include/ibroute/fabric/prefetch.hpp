#pragma once

namespace ibroute::fabric {

// Asks the cache for the line holding `p` (a hint: no fault, no effect on results). GCC 12's
// tree DCE deletes a __builtin_prefetch whose address is a product of loaded values (it compiled
// SwitchPaths::prefetch to nothing), so on x86-64 the instruction is written out.
inline void prefetch_read(const void* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace ibroute::fabric
