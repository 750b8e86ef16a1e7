// What the Swift firmware calls in the start-up code (Examples/Firmware/Startup).
#pragma once
#include <stdint.h>
#include <stddef.h>

// Milliseconds since reset, counted by the SysTick interrupt.
uint32_t board_millis(void);
// Waits for the next interrupt (SysTick at least every millisecond).
void board_wait_for_interrupt(void);

// UART0: H4 to the controller. Non-blocking read: -1 when no octet is waiting.
int board_hci_read(void);
void board_hci_write(const uint8_t *bytes, size_t count);

// UART1: the log.
void board_log_write(const uint8_t *bytes, size_t count);

// Heap accounting from the malloc shim.
size_t board_heap_in_use(void);
size_t board_heap_peak(void);
size_t board_heap_allocations(void);

// Stack use: the deepest the stack went since reset, in bytes (startup.c paints it at reset).
size_t board_stack_high_water(void);

// The key store file (support.c, ARM semihosting): -1 when the board has none (run without --store,
// or nothing saved yet), else the octets read into `buffer` (at most `capacity`).
int board_store_load(uint8_t *buffer, size_t capacity);
// Replaces the store's contents; 0 on success, -1 without a store or when writing failed.
int board_store_save(const uint8_t *bytes, size_t count);

// Stops the firmware: sleeps forever (QEMU keeps running until it is killed).
void board_halt(void) __attribute__((noreturn));
