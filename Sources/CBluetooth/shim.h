// The Linux Bluetooth socket ABI, from Debian's libbluetooth-dev headers.
// Only types and constants are used (sockaddr_hci, AF_BLUETOOTH, BTPROTO_HCI, HCI_CHANNEL_USER);
// function-like ioctl macros do not import into Swift and are spelled out in BluewireTransport.
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/l2cap.h>

// ioctl(2) is variadic, and Swift cannot call variadic C functions: this fixes the one signature
// the HCI device ioctls use (an int argument, the device index).
static inline int bluewire_ioctl_int(int fd, unsigned long request, int argument) {
    return ioctl(fd, request, argument);
}
