// Start-up for the Cortex-M4 of QEMU's mps2-an386: vector table, reset handler (copy .data, zero
// .bss, set picolibc's TLS pointer, start SysTick), SysTick millisecond clock, CMSDK UART driver.
#include <stdint.h>
#include <stddef.h>
#include "board.h"

extern uint32_t __stack_top[], __heap_end[], __data_start[], __data_end[], __data_source[], __bss_start[], __bss_end[];
extern uint8_t __tls_base[];
extern void _set_tls(void *tls);
extern int main(int argc, char **argv);

void reset_handler(void);
static void default_handler(void);
void hardfault_handler(void);
void systick_handler(void);
void uart0_rx_handler(void);

// ARMv7-M vector table (Architecture Reference Manual B1.5.3): initial SP, then the exceptions.
__attribute__((section(".vectors"), used))
static void (*const vectors[16 + 16])(void) = {
    (void (*)(void))__stack_top, reset_handler,
    default_handler,    // NMI
    hardfault_handler,  // HardFault
    hardfault_handler,  // MemManage
    hardfault_handler,  // BusFault
    hardfault_handler,  // UsageFault
    0, 0, 0, 0,
    default_handler,    // SVCall
    default_handler,    // DebugMonitor
    0,
    default_handler,    // PendSV
    systick_handler,    // SysTick
    // External interrupts (mps2-an386: 0 UART0 RX, 1 UART0 TX, 2 UART1 RX, ...): only UART0 RX is used.
    uart0_rx_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
    default_handler, default_handler, default_handler, default_handler,
};

// CMSDK APB UART (Arm DDI 0479C §4.3): DATA, STATE (bit0 TX full, bit1 RX full), CTRL (bit0 TX
// enable, bit1 RX enable), INTSTATUS, BAUDDIV.
typedef struct {
    volatile uint32_t data, state, ctrl, intstatus, bauddiv;
} cmsdk_uart;
#define UART0 ((cmsdk_uart *)0x40004000u)
#define UART1 ((cmsdk_uart *)0x40005000u)
#define SYSCLK_HZ 25000000u

// SysTick (ARMv7-M B3.3): CSR, RVR, CVR.
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)

static volatile uint32_t millis;

// UART0 receive ring: the RX interrupt moves each octet here so that WFI wakes on controller
// traffic. When the ring is full the interrupt is switched off and the octet stays in the UART,
// which makes QEMU (or the wire's flow control) hold the rest: nothing is dropped.
#define RX_RING_SIZE 4096u
static volatile uint8_t rx_ring[RX_RING_SIZE];
static volatile uint32_t rx_head, rx_tail;  // head: written by the interrupt; tail: by the main loop
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define UART_CTRL_RX_INTERRUPT 0x8u

static void uart_init(cmsdk_uart *uart) {
    uart->bauddiv = SYSCLK_HZ / 115200u;
    uart->ctrl = 0x3;  // TX and RX enabled, no interrupts
}

// The stack is painted with a pattern at reset, below what reset_handler itself uses; the lowest word no
// longer holding it marks the deepest the stack has been. Nothing stops the stack at __heap_end (the
// Cortex-M4 has no stack limit register), so the paint reaches 48 KiB further down, into the top of the
// heap's room, which the allocator (a few KiB at its peak) never reaches: a stack that outgrew its
// reservation shows as a high-water mark above __stack_size instead of silently.
#define STACK_PAINT 0x5AC4C0DEu
#define PAINT_BELOW_WORDS (48u * 1024u / 4u)

static void paint_stack(void) {
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (volatile uint32_t *word = __heap_end - PAINT_BELOW_WORDS; word < sp - 16;) *word++ = STACK_PAINT;
}

size_t board_stack_high_water(void) {
    const uint32_t *word = __heap_end - PAINT_BELOW_WORDS;
    while (word < __stack_top && *word == STACK_PAINT) word++;
    return (size_t)((const uint8_t *)__stack_top - (const uint8_t *)word);
}

void reset_handler(void) {
    for (uint32_t *src = __data_source, *dst = __data_start; dst < __data_end;) *dst++ = *src++;
    for (uint32_t *dst = __bss_start; dst < __bss_end;) *dst++ = 0;
    _set_tls(__tls_base);
    paint_stack();
    uart_init(UART0);
    uart_init(UART1);
    UART0->ctrl |= UART_CTRL_RX_INTERRUPT;
    NVIC_ISER0 = 1u << 0;  // UART0 RX
    SYST_RVR = SYSCLK_HZ / 1000u - 1u;
    SYST_CVR = 0;
    SYST_CSR = 0x7;  // processor clock, interrupt, enable
    main(0, 0);
    board_halt();
}

void systick_handler(void) { millis++; }

uint32_t board_millis(void) { return millis; }

void board_wait_for_interrupt(void) { __asm__ volatile("wfi"); }

void uart0_rx_handler(void) {
    while (UART0->state & 0x2) {
        if (rx_head - rx_tail >= RX_RING_SIZE) {
            UART0->ctrl &= ~UART_CTRL_RX_INTERRUPT;  // full: leave the octet in the UART
            break;
        }
        rx_ring[rx_head % RX_RING_SIZE] = (uint8_t)UART0->data;
        rx_head++;
    }
    UART0->intstatus = 0x2;  // clear RX interrupt
}

int board_hci_read(void) {
    int octet = -1;
    __asm__ volatile("cpsid i" ::: "memory");
    if (rx_head != rx_tail) {
        octet = rx_ring[rx_tail % RX_RING_SIZE];
        rx_tail++;
    } else if (UART0->state & 0x2) {
        octet = (int)(UART0->data & 0xff);  // the octet held back while the ring was full
    }
    UART0->ctrl |= UART_CTRL_RX_INTERRUPT;
    __asm__ volatile("cpsie i" ::: "memory");
    return octet;
}

static void uart_write(cmsdk_uart *uart, const uint8_t *bytes, size_t count) {
    for (size_t i = 0; i < count; i++) {
        while (uart->state & 0x1) {}
        uart->data = bytes[i];
    }
}

void board_hci_write(const uint8_t *bytes, size_t count) { uart_write(UART0, bytes, count); }
void board_log_write(const uint8_t *bytes, size_t count) { uart_write(UART1, bytes, count); }

static void log_string(const char *text) {
    while (*text) uart_write(UART1, (const uint8_t *)text++, 1);
}

void board_halt(void) {
    for (;;) __asm__ volatile("wfi");
}

static void log_hex(uint32_t value) {
    char text[11] = "0x";
    for (int i = 0; i < 8; i++) text[2 + i] = "0123456789abcdef"[(value >> (28 - 4 * i)) & 0xf];
    text[10] = 0;
    log_string(text);
}

// The frame the core stacked on exception entry (ARMv7-M B1.5.6): r0-r3, r12, lr, pc, xPSR. The
// faulting pc finds the trap in the image (`arm-none-eabi-addr2line -e IMAGE.elf PC`); CFSR and
// HFSR (System Control Block, B3.2.15-16) say what kind of fault it was (a Swift trap is UDF:
// CFSR bit 16, UNDEFINSTR).
void hardfault_report(const uint32_t *frame) {
    log_string("\r\nfirmware: fault (trap or bad access) at pc ");
    log_hex(frame[6]);
    log_string(", lr ");
    log_hex(frame[5]);
    log_string(", CFSR ");
    log_hex(*(volatile uint32_t *)0xE000ED28u);
    log_string(", HFSR ");
    log_hex(*(volatile uint32_t *)0xE000ED2Cu);
    log_string("; halted\r\n");
    board_halt();
}

// Hands the stacked frame (on the main or the process stack, as EXC_RETURN bit 2 says) to the report.
__attribute__((naked)) void hardfault_handler(void) {
    __asm__ volatile(
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "b hardfault_report\n");
}

static void default_handler(void) {
    log_string("\r\nfirmware: unexpected exception, halted\r\n");
    board_halt();
}
