// What Embedded Swift needs from a C library, on top of picolibc: putchar (print) on the log UART,
// arc4random_buf (hashing seeds for Dictionary/Set), and a malloc shim that counts heap use.
// The shim wraps picolibc's allocator with the linker's --wrap: every malloc, free,
// posix_memalign, calloc and realloc from any object goes through __wrap_*, which calls the
// real one and keeps the bytes in use (malloc_usable_size) and their peak.
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <malloc.h>
#include "board.h"

int putchar(int c) {
    uint8_t byte = (uint8_t)c;
    if (byte == '\n') board_log_write((const uint8_t *)"\r", 1);
    board_log_write(&byte, 1);
    return c;
}

int puts(const char *text) {
    while (*text) putchar(*text++);
    putchar('\n');
    return 0;
}

// abort() and the stack protector end here: say so on the log and stop.
void _exit(int status) {
    (void)status;
    const char *text = "\nfirmware: abort\n";
    while (*text) putchar(*text++);
    board_halt();
}
int getpid(void) { return 1; }
int kill(int pid, int signal) { (void)pid; (void)signal; _exit(128 + signal); }

// Hash seeds only (no cryptography here): xorshift from the millisecond clock.
void arc4random_buf(void *buffer, size_t count) {
    static uint32_t state = 0x9e3779b9u;
    state ^= board_millis();
    uint8_t *out = buffer;
    for (size_t i = 0; i < count; i++) {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5;
        out[i] = (uint8_t)state;
    }
}

static size_t in_use, peak, allocations;
static int depth;  // picolibc's realloc/calloc call malloc/free themselves: count the outer call only

void *__real_malloc(size_t);
void __real_free(void *);
int __real_posix_memalign(void **, size_t, size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);

static void counted(void *pointer) {
    if (!pointer || depth) return;
    in_use += malloc_usable_size(pointer);
    allocations++;
    if (in_use > peak) peak = in_use;
}

static void uncounted(void *pointer) {
    if (!pointer || depth) return;
    in_use -= malloc_usable_size(pointer);
}

void *__wrap_malloc(size_t size) {
    depth++;
    void *pointer = __real_malloc(size);
    depth--;
    counted(pointer);
    return pointer;
}

void __wrap_free(void *pointer) {
    uncounted(pointer);
    depth++;
    __real_free(pointer);
    depth--;
}

int __wrap_posix_memalign(void **result, size_t alignment, size_t size) {
    depth++;
    int status = __real_posix_memalign(result, alignment, size);
    depth--;
    if (status == 0) counted(*result);
    return status;
}

void *__wrap_calloc(size_t count, size_t size) {
    depth++;
    void *pointer = __real_calloc(count, size);
    depth--;
    counted(pointer);
    return pointer;
}

void *__wrap_realloc(void *old, size_t size) {
    uncounted(old);
    depth++;
    void *pointer = __real_realloc(old, size);
    depth--;
    counted(pointer);
    if (pointer == NULL && old != NULL && size != 0) counted(old);  // failed: the old block stays
    return pointer;
}

size_t board_heap_in_use(void) { return in_use; }
size_t board_heap_peak(void) { return peak; }
size_t board_heap_allocations(void) { return allocations; }
