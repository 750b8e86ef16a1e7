// Makes Swift's Synchronization.Mutex visible to ThreadSanitizer on Linux (preloaded by
// scripts/sanitizers.sh for the ThreadSanitizer runs only; never part of a product).
//
// Mutex's fast paths are compare-exchanges inlined into our (instrumented) code, which TSan sees. Its
// slow paths, _MutexHandle._lockSlow / _unlockSlow / _tryLockSlow in libswiftSynchronization.so, spin
// and then hand the lock over through FUTEX_LOCK_PI / FUTEX_UNLOCK_PI system calls; that library is not
// instrumented and TSan does not model futexes, so a thread that gets the lock there has no
// happens-before edge from the previous owner, and every access it makes under the lock is reported
// as a data race. This library interposes those three functions (Swift calling convention: the
// handle's address, which is the lock word, comes in the swiftself register), calls the real ones,
// and tells TSan about the acquire and release on the lock word, exactly what the fast paths' atomics
// already tell it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Weak: this library may be preloaded into processes that are not built with TSan (python, swift-build).
extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

#define SWIFTCALL __attribute__((swiftcall))
#define SWIFTSELF __attribute__((swift_context))

typedef SWIFTCALL void (*LockSlow)(uint32_t selfID, SWIFTSELF void *handle);
typedef SWIFTCALL void (*UnlockSlow)(SWIFTSELF void *handle);
typedef SWIFTCALL bool (*TryLockSlow)(SWIFTSELF void *handle);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"

static void *real(const char *name) {
  void *function = dlsym(RTLD_NEXT, name);
  if (!function) {
    fprintf(stderr, "tsan-mutex-annotations: %s not found\n", name);
    abort();
  }
  return function;
}

SWIFTCALL void lockSlow(uint32_t selfID, SWIFTSELF void *handle) __asm__(LOCK_SLOW);
SWIFTCALL void lockSlow(uint32_t selfID, SWIFTSELF void *handle) {
  static LockSlow original;
  if (!original) original = (LockSlow)real(LOCK_SLOW);
  original(selfID, handle);
  if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFTCALL void unlockSlow(SWIFTSELF void *handle) __asm__(UNLOCK_SLOW);
SWIFTCALL void unlockSlow(SWIFTSELF void *handle) {
  static UnlockSlow original;
  if (!original) original = (UnlockSlow)real(UNLOCK_SLOW);
  if (__tsan_release) __tsan_release(handle);
  original(handle);
}

SWIFTCALL bool tryLockSlow(SWIFTSELF void *handle) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool tryLockSlow(SWIFTSELF void *handle) {
  static TryLockSlow original;
  if (!original) original = (TryLockSlow)real(TRY_LOCK_SLOW);
  bool locked = original(handle);
  if (locked && __tsan_acquire) __tsan_acquire(handle);
  return locked;
}
