// The Linux Bluetooth socket ABI, from Debian's libbluetooth-dev headers.
// Only types and constants are used (sockaddr_hci, AF_BLUETOOTH, BTPROTO_HCI, HCI_CHANNEL_USER);
// function-like ioctl macros do not import into Swift and are spelled out in BluewireTransport.
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/l2cap.h>
