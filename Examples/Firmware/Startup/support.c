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

// The key store over ARM semihosting (the debugger, here QEMU with -semihosting-config, does the file I/O
// on the host): scripts/firmware.sh passes the store file as the second word of the semihosting command
// line (SYS_GET_CMDLINE), and nothing after the first word when there is no store. A board with flash
// would implement the same two functions over a reserved flash sector (erase, then program the octets).
enum { SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_WRITE = 0x05, SYS_READ = 0x06, SYS_FLEN = 0x0C, SYS_GET_CMDLINE = 0x15 };
enum { OPEN_READ_BINARY = 1, OPEN_WRITE_BINARY = 5 };

static int semihost(int operation, void *argument) {
    register int r0 __asm__("r0") = operation;
    register void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static char store_path[256];
static int store_known;  // 0: not asked yet; 1: asked

static const char *store_name(void) {
    if (!store_known) {
        store_known = 1;
        static char line[300];
        uint32_t block[2] = {(uint32_t)line, sizeof line - 1};
        if (semihost(SYS_GET_CMDLINE, block) != 0) return NULL;
        line[block[1] < sizeof line ? block[1] : sizeof line - 1] = 0;
        const char *rest = line;
        while (*rest && *rest != ' ') rest++;
        while (*rest == ' ') rest++;
        size_t length = 0;
        while (rest[length] && length < sizeof store_path - 1) { store_path[length] = rest[length]; length++; }
        store_path[length] = 0;
    }
    return store_path[0] ? store_path : NULL;
}

static int store_open(int mode) {
    const char *name = store_name();
    if (!name) return -1;
    size_t length = 0;
    while (name[length]) length++;
    uint32_t block[3] = {(uint32_t)name, (uint32_t)mode, (uint32_t)length};
    return semihost(SYS_OPEN, block);
}

int board_store_load(uint8_t *buffer, size_t capacity) {
    int file = store_open(OPEN_READ_BINARY);
    if (file == -1) return -1;
    uint32_t handle[1] = {(uint32_t)file};
    int length = semihost(SYS_FLEN, handle);
    if (length < 0) length = 0;
    if ((size_t)length > capacity) length = (int)capacity;
    uint32_t block[3] = {(uint32_t)file, (uint32_t)buffer, (uint32_t)length};
    int unread = semihost(SYS_READ, block);  // the octets NOT read
    semihost(SYS_CLOSE, handle);
    return unread < 0 ? -1 : length - unread;
}

int board_store_save(const uint8_t *bytes, size_t count) {
    int file = store_open(OPEN_WRITE_BINARY);
    if (file == -1) return -1;
    uint32_t block[3] = {(uint32_t)file, (uint32_t)bytes, (uint32_t)count};
    int unwritten = semihost(SYS_WRITE, block);
    uint32_t handle[1] = {(uint32_t)file};
    semihost(SYS_CLOSE, handle);
    return unwritten == 0 ? 0 : -1;
}
