#!/usr/bin/env python3
"""Builds the fuzz seed corpora in Fuzz/Corpus/<target>/ from the real captures in Captures/.

Each target's input format is described at the top of its file in Fuzz/Targets/. The seeds are
packets, PDUs and small slices taken from the captures (plus a few synthetic pcapng variants:
big-endian sections, other link types and block kinds that no real capture here has), at most a
few hundred per target, chosen for variety (one to a few per opcode / event / subevent / AD type
set). Files are named by the SHA-1 of their content, like libFuzzer's own corpus files.

Usage: python3 Fuzz/Tools/make-seeds.py [--clean]
"""
import hashlib
import os
import random
import shutil
import struct
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CAPTURES = os.path.join(ROOT, "Captures")
CORPUS = os.path.join(ROOT, "Fuzz", "Corpus")
rng = random.Random(20261122)


# ---------------------------------------------------------------- capture reading

MONITOR_H4 = {2: 0x01, 3: 0x04, 4: 0x02, 5: 0x02, 6: 0x03, 7: 0x03, 18: 0x05, 19: 0x05}


def read_btsnoop(path, notes=None):
    """(file bytes, [(offset, direction, h4 bytes)]) for datalinks 1002 and 2001 (monitor records that
    carry HCI packets are given their H4 indicator; the others go to `notes` as (opcode, data))."""
    data = open(path, "rb").read()
    if data[:8] != b"btsnoop\0":
        return data, []
    _, datalink = struct.unpack(">II", data[8:16])
    records = []
    i = 16
    while i + 24 <= len(data):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIq", data[i:i + 24])
        if i + 24 + incl > len(data):
            break
        body = data[i + 24:i + 24 + incl]
        if datalink == 1002 and body:
            records.append((i, flags & 1, body))
        elif datalink == 2001:
            opcode = flags & 0xFFFF
            if opcode in MONITOR_H4:
                records.append((i, 0 if opcode in (2, 4, 6, 18) else 1, bytes([MONITOR_H4[opcode]]) + body))
            elif notes is not None:
                notes.append((opcode, body))
        i += 24 + incl
    return data, records


def read_pcapng(path):
    """Yields (direction, h4 bytes) from a little-endian pcapng with link type 201; and the blocks."""
    data = open(path, "rb").read()
    records, blocks = [], []
    i = 0
    while i + 12 <= len(data):
        btype, blen = struct.unpack("<II", data[i:i + 8])
        block = data[i:i + blen]
        blocks.append(block)
        if btype == 6:
            _, _, _, caplen, _ = struct.unpack("<IIIII", block[8:28])
            pkt = block[28:28 + caplen]
            direction = struct.unpack(">I", pkt[:4])[0] & 1
            records.append((i, direction, pkt[4:]))
        i += blen
    return data, records, blocks


def all_packets():
    """(capture name, direction, h4 bytes) for every HCI packet in every capture."""
    out = []
    for name in sorted(os.listdir(CAPTURES)):
        path = os.path.join(CAPTURES, name)
        head = open(path, "rb").read(8)
        if head == b"btsnoop\0":
            _, records = read_btsnoop(path)
            out += [(name, d, b) for _, d, b in records]
        elif head[:4] == b"\x0a\x0d\x0d\x0a":
            _, records, _ = read_pcapng(path)
            out += [(name, d, b) for _, d, b in records]
    return out


# ---------------------------------------------------------------- helpers

def write_corpus(target, seeds, limit):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    unique = []
    seen = set()
    for s in seeds:
        if s and s not in seen:
            seen.add(s)
            unique.append(s)
    if len(unique) > limit:
        unique = rng.sample(unique, limit)
    for s in unique:
        with open(os.path.join(folder, hashlib.sha1(s).hexdigest()), "wb") as f:
            f.write(s)
    print(f"{target}: {len(unique)} seeds")


def pick(groups, per_group):
    out = []
    for key in sorted(groups, key=repr):
        items = groups[key]
        out += items[:per_group] if len(items) <= per_group else rng.sample(items, per_group)
    return out


class L2CAPStream:
    """Reassembles ACL packets per (capture, direction, handle) into L2CAP PDUs (for ATT seeds)."""

    def __init__(self):
        self.partial = {}
        self.pdus = []  # (key, cid, payload, list of raw ACL packets)

    def feed(self, key, acl):
        if len(acl) < 4:
            return
        hf, length = struct.unpack("<HH", acl[:4])
        data = acl[4:4 + length]
        pb = (hf >> 12) & 3
        k = (key, hf & 0x0FFF)
        if pb != 1:
            self.partial[k] = [bytearray(data), [acl]]
        elif k in self.partial:
            self.partial[k][0] += data
            self.partial[k][1].append(acl)
        else:
            return
        buf, packets = self.partial[k]
        if len(buf) >= 4:
            plen, cid = struct.unpack("<HH", buf[:4])
            if len(buf) >= plen + 4:
                self.pdus.append((k, cid, bytes(buf[4:4 + plen]), packets))
                del self.partial[k]


# ---------------------------------------------------------------- targets

def seeds_hci_event(packets):
    groups = {}
    for _, _, p in packets:
        if p[0] == 4 and len(p) >= 3:
            key = ("event", p[1], p[3] if p[1] == 0x3E and len(p) > 3 else None, len(p) // 64)
        elif p[0] == 1 and len(p) >= 4:
            key = ("command", p[1] | p[2] << 8)
        else:
            continue
        groups.setdefault(key, []).append(p)
    seeds = pick(groups, 3)
    # Sequences: a few Command Complete / Status runs as a controller answers them.
    answers = [p for _, _, p in packets if p[0] == 4 and p[1] in (0x0E, 0x0F)]
    for _ in range(20):
        start = rng.randrange(max(1, len(answers) - 12))
        seeds.append(b"".join(answers[start:start + rng.randint(2, 12)]))
    return seeds


def ad_records(packets):
    """Advertising reports as (kind, address bytes, rssi, data) in capture order."""
    out = []
    for _, d, p in packets:
        if p[0] != 4 or len(p) < 5 or p[1] != 0x3E:
            continue
        sub, body = p[3], p[4:]
        try:
            if sub == 0x02:
                n, i = body[0], 1
                for _ in range(n):
                    etype, atype, addr, dlen = body[i], body[i + 1], body[i + 2:i + 8], body[i + 8]
                    data = body[i + 9:i + 9 + dlen]
                    rssi = body[i + 9 + dlen]
                    i += 10 + dlen
                    kind = (1 if etype == 4 else 0) | (0x10 if etype in (0, 1) else 0)
                    out.append((kind, bytes(addr) + bytes([atype]), rssi, bytes(data)))
            elif sub == 0x0D:
                n, i = body[0], 1
                for _ in range(n):
                    etype = body[i] | body[i + 1] << 8
                    atype, addr = body[i + 2], body[i + 3:i + 9]
                    sid, rssi = body[i + 11], body[i + 13]
                    dlen = body[i + 23]
                    data = body[i + 24:i + 24 + dlen]
                    i += 24 + dlen
                    kind = 2 | (1 if etype & 8 else 0) | (0x10 if etype & 1 else 0) | (((etype >> 5) & 3) << 2) | ((sid & 7) << 5)
                    out.append((kind, bytes(addr) + bytes([atype]), rssi, bytes(data)))
        except IndexError:
            continue
    return out


def seeds_advertising(packets):
    reports = ad_records(packets)
    seeds = []
    # Single reports, one per distinct set of AD types.
    groups = {}
    for r in reports:
        types, i, data = [], 0, r[3]
        while i < len(data) and data[i] != 0:
            if i + 1 < len(data):
                types.append(data[i + 1])
            i += 1 + data[i]
        groups.setdefault((r[0] & 3, tuple(sorted(set(types)))), []).append(r)
    singles = pick(groups, 2)
    for r in singles:
        seeds.append(bytes([0, r[0], 0, r[2], len(r[3])]) + r[3])
    # Runs of consecutive reports, addresses mapped to 0…15 by first appearance.
    for _ in range(80):
        start = rng.randrange(max(1, len(reports) - 16))
        run = reports[start:start + rng.randint(2, 16)]
        index = {}
        out = bytearray([rng.randrange(4)])
        for kind, addr, rssi, data in run:
            who = index.setdefault(addr, len(index)) & 0x0F | (0x10 if addr[-1] else 0)
            out += bytes([kind, who, rssi, len(data)]) + data
        seeds.append(bytes(out))
    return seeds


def seeds_l2cap(packets):
    streams = {}
    for name, d, p in packets:
        if p[0] == 2 and len(p) >= 5:
            hf = p[1] | p[2] << 8
            streams.setdefault((name, d, hf & 0x0FFF), []).append(p[1:])
    seeds = []
    configs = [0x68, 0x00, 0x01, 0x02, 0x03, 0x04, 0x3C, 0xFC]
    for key, acls in sorted(streams.items()):
        # Windows starting at a start fragment, preferring those that hold continuations.
        starts = [i for i, a in enumerate(acls) if ((a[1] >> 4) & 3) != 1]
        multi = [i for i in starts if i + 1 < len(acls) and ((acls[i + 1][1] >> 4) & 3) == 1]
        chosen = rng.sample(multi, min(12, len(multi))) + rng.sample(starts, min(6, len(starts)))
        for i in chosen:
            window = acls[i:i + rng.randint(1, 6)]
            seeds.append(bytes([rng.choice(configs)]) + b"".join(window))
    # Every LE signaling PDU seen (CID 5), alone.
    for name, d, p in packets:
        if p[0] == 2 and len(p) >= 9 and p[7] | p[8] << 8 == 5:
            seeds.append(bytes([0x68]) + p[1:])
    return seeds


def att_pdus(packets):
    stream = L2CAPStream()
    for name, d, p in packets:
        if p[0] == 2:
            stream.feed((name, d), p[1:])
    return [(k, pdu) for k, cid, pdu, _ in stream.pdus if cid == 4 and pdu]


def seeds_att_pdu(packets):
    groups = {}
    for _, pdu in att_pdus(packets):
        groups.setdefault((pdu[0], min(len(pdu), 40) // 8), []).append(pdu)
    return pick(groups, 3)


REQUEST_KIND = {0x0B: 0, 0x0D: 1, 0x13: 2, 0x05: 3, 0x11: 4, 0x09: 5, 0x17: 6, 0x03: 7}


def bearer_request(kind, handle=0x0001):
    """Operation 2 of the att-bearer target: queue a request of `kind` (operands as the target reads them)."""
    operands = {0: b"", 1: b"\x00\x00", 2: b"\x02\xAA\xBB", 3: b"\xFF\xFF", 4: b"", 5: b"",
                6: b"\x00\x00\x02\xAA\xBB", 7: b"\xF7\x00"}[kind]
    return bytes([2]) + struct.pack("<H", handle) + bytes([kind]) + operands


def bearer_local_operation():
    """A random local operation with well-formed operands: time passes, notify, indicate, drop."""
    op = rng.choice([1, 4, 5, 9])
    if op == 1:
        return bytes([1, rng.choice([4, 40, 121, 255])])
    if op in (4, 5):
        return bytes([op]) + struct.pack("<HH", 0x0003, 2) + b"\x07\x07"
    return bytes([9])
REQUEST_OF_RESPONSE = {0x03: 0x02, 0x05: 0x04, 0x09: 0x08, 0x0B: 0x0A, 0x0D: 0x0C, 0x11: 0x10, 0x13: 0x12, 0x17: 0x16}


def seeds_att_bearer(packets):
    # The peer's PDUs as the local bearer receives them (controller → host), in order, per connection.
    incoming = {}
    for (key, pdu) in att_pdus(packets):
        (name, d), handle = key
        if d == 1 and len(pdu) <= 255:
            incoming.setdefault((name, handle), []).append(pdu)
    seeds = []
    for key, pdus in sorted(incoming.items()):
        for _ in range(12):
            start = rng.randrange(max(1, len(pdus) - 10))
            script = bytearray()
            for pdu in pdus[start:start + rng.randint(1, 10)]:
                op = pdu[0]
                if op in REQUEST_KIND:
                    # Queue a matching request first so the response has something to answer.
                    script += bearer_request(REQUEST_KIND[op])
                if op == 0x01 and len(pdu) >= 2 and pdu[1] in REQUEST_OF_RESPONSE.values():
                    kind = {v: REQUEST_KIND[k] for k, v in REQUEST_OF_RESPONSE.items()}[pdu[1]]
                    script += bearer_request(kind)
                script += bytes([0, len(pdu)]) + pdu
                if op == 0x1D:
                    script += bytes([7])
                elif op & 0x40 == 0 and op in (0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20):
                    script += bytes([6, rng.randrange(256), 3, 0, 1, 2, 3])
            script += bearer_local_operation()
            seeds.append(bytes(script))
    # Timeouts and MTU exchanges.
    seeds.append(bearer_request(0) + bytes([1, 200, 1, 200]))
    seeds.append(bytes([5, 3, 0, 2, 0, 9, 9, 1, 200, 5, 4, 0, 1, 0, 8]))
    seeds.append(bytes([8, 0xF7, 0x00, 1]) + bearer_request(7) + bytes([0, 3, 3, 0xF7, 0]))
    return seeds


def btsnoop_slice(data, records, start, count, cut_last=False):
    header = data[:16]
    begin = records[start][0]
    end_index = min(len(records), start + count)
    end = records[end_index][0] if end_index < len(records) else len(data)
    body = data[begin:end]
    if cut_last and len(body) > 10:
        body = body[:-rng.randint(1, 10)]
    return header + body


def seeds_btsnoop():
    seeds = []
    for name in sorted(os.listdir(CAPTURES)):
        path = os.path.join(CAPTURES, name)
        data = open(path, "rb").read()
        if data[:8] != b"btsnoop\0":
            continue
        _, records = read_btsnoop(path)
        # read_btsnoop keeps offsets for every record of 1002 files.
        if not records:
            seeds.append(data[:16])
            continue
        for _ in range(8):
            start = rng.randrange(len(records))
            seeds.append(btsnoop_slice(data, records, start, rng.randint(1, 12), cut_last=rng.random() < 0.3))
        seeds.append(btsnoop_slice(data, records, 0, 6))
    # The same records under the other datalinks the reader knows (1001 H1 without the H4 byte, 2001
    # monitor with opcodes in the flags) and an unknown one.
    _, records = read_btsnoop(os.path.join(CAPTURES, "horizon_treadmill_notify.btsnoop_hci.log"))
    for datalink in (1001, 2001, 1003):
        out = bytearray(b"btsnoop\0" + struct.pack(">II", 1, datalink))
        for _, d, body in records[:10]:
            if datalink == 2001:
                opcode = {1: 2, 2: 4 + d, 4: 3}.get(body[0], 12)
                flags, payload = opcode, body[1:]
            elif datalink == 1001:
                flags, payload = d | (2 if body[0] in (1, 4) else 0), body[1:]
            else:
                flags, payload = d, body
            out += struct.pack(">IIIIq", len(payload), len(payload), flags, 0, 0x00E0_3AB4_4A67_6000) + payload
        seeds.append(bytes(out))
    return seeds


def pcapng_block(btype, body, big=False):
    pad = (-len(body)) % 4
    length = 12 + len(body) + pad
    e = ">" if big else "<"
    return struct.pack(e + "II", btype, length) + body + b"\0" * pad + struct.pack(e + "I", length)


def synthetic_pcapng(packets, linktype, big=False, kind="epb", tsresol=None):
    e = ">" if big else "<"
    out = pcapng_block(0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1), big)
    options = b""
    if tsresol is not None:
        options = struct.pack(e + "HH", 9, 1) + bytes([tsresol, 0, 0, 0]) + struct.pack(e + "HH", 0, 0)
    out += pcapng_block(1, struct.pack(e + "HHI", linktype, 0, 0xFFFF) + options, big)
    for t, (d, h4) in enumerate(packets):
        if linktype == 201:
            data = struct.pack(">I", d) + h4
        elif linktype == 254:
            opcode = {1: 2, 2: 4 + d, 4: 3}.get(h4[0], 12)
            data = struct.pack(">HH", 0, opcode) + h4[1:]
        else:
            data = h4
        if kind == "epb":
            flags = struct.pack(e + "HHI", 2, 4, 1 if d else 2) + struct.pack(e + "HH", 0, 0)
            body = struct.pack(e + "IIIII", 0, 0x0005_F000, 1000 + t, len(data), len(data))
            body += data + b"\0" * ((-len(data)) % 4) + flags
            out += pcapng_block(6, body, big)
        elif kind == "spb":
            out += pcapng_block(3, struct.pack(e + "I", len(data)) + data, big)
        else:
            out += pcapng_block(2, struct.pack(e + "HHIIII", 0, 0, 0, 1000 + t, len(data), len(data)) + data, big)
    return out


def seeds_pcapng(packets):
    seeds = []
    path = os.path.join(CAPTURES, "darkelf_att_only_h4.pcapng")
    data, records, blocks = read_pcapng(path)
    head = b"".join(blocks[:2])
    seeds.append(data)
    for _ in range(20):
        start = rng.randrange(2, len(blocks))
        body = b"".join(blocks[start:start + rng.randint(1, 8)])
        if rng.random() < 0.3:
            body = body[:-rng.randint(1, 12)]
        seeds.append(head + body)
    sample = [(d, p) for _, d, p in packets if len(p) < 80]
    for linktype in (201, 187, 254, 999):
        for big in (False, True):
            for kind in ("epb", "spb", "pb"):
                chosen = rng.sample(sample, 4)
                seeds.append(synthetic_pcapng(chosen, linktype, big, kind, tsresol=rng.choice([None, 9, 0x8A, 3])))
    return seeds


def seeds_h4_framer(packets):
    # Input: one chunking byte, then an H4 stream (see Fuzz/Targets/h4-framer.swift).
    seeds = []
    by_type = {}
    for _, _, p in packets:
        by_type.setdefault(p[0], []).append(p)
    for _ in range(60):
        stream = b"".join(rng.choice(packets)[2] for _ in range(rng.randint(1, 8)))
        seeds.append(bytes([rng.randrange(256)]) + stream)
    for t, items in by_type.items():
        for p in rng.sample(items, min(5, len(items))):
            seeds.append(bytes([rng.randrange(256)]) + p)
    # SCO and ISO packets, which the captures lack.
    seeds.append(bytes([3, 0x03, 0x01, 0x00, 0x03, 1, 2, 3]))
    seeds.append(bytes([5, 0x05, 0x01, 0x20, 0x04, 0x40, 1, 2, 3, 4]))
    return seeds


def seeds_gatt_server(packets):
    # Input: a configuration byte, then operations (see Fuzz/Targets/gatt-server.swift). The client PDUs
    # are the requests and commands the phones in the captures sent (host → controller).
    client = [pdu for ((name, d), _), pdu in att_pdus(packets) if d == 0 and len(pdu) <= 255 and (pdu[0] & 1 == 0 or pdu[0] == 0x52)]
    groups = {}
    for pdu in client:
        groups.setdefault((pdu[0], len(pdu) // 8), []).append(pdu)
    singles = pick(groups, 2)
    seeds = [bytes([rng.randrange(32), 0, 0, len(pdu)]) + pdu for pdu in singles]
    for _ in range(60):
        start = rng.randrange(max(1, len(client) - 12))
        script = bytearray([rng.randrange(32)])
        for pdu in client[start:start + rng.randint(2, 12)]:
            script += bytes([0, rng.randrange(2), len(pdu)]) + pdu
            if rng.random() < 0.1:
                script += bytes([rng.choice([5, 6]), rng.randrange(16), 3, 1, 2, 3])
        seeds.append(bytes(script))
    # A whole discovery, a long write and a subscription, written by hand.
    def req(*pdus, connection=0):
        return b"".join(bytes([0, connection, len(p)]) + bytes(p) for p in pdus)
    discovery = req([0x02, 0x05, 0x02], [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], [0x10, 0x14, 0x00, 0xFF, 0xFF, 0x00, 0x28],
                    [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x02, 0x28], [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28],
                    [0x04, 0x01, 0x00, 0xFF, 0xFF], [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0F, 0x18])
    long_write = req([0x16, 0x17, 0x00, 0x00, 0x00] + [0x41] * 18, [0x16, 0x17, 0x00, 0x12, 0x00] + [0x42] * 18, [0x18, 0x01],
                     [0x0A, 0x17, 0x00], [0x0C, 0x17, 0x00, 0x16, 0x00], [0x0E, 0x17, 0x00, 0x1B, 0x00], [0x20, 0x03, 0x00, 0x1B, 0x00])
    subscribe = req([0x12, 0x19, 0x00, 0x03, 0x00]) + bytes([6, 4, 2, 9, 9, 5, 4, 1, 7]) + req([0x1E]) + req([0x12, 0x19, 0x00, 0x00, 0x00])
    seeds += [bytes([0]) + discovery, bytes([0x10]) + long_write, bytes([5]) + subscribe, bytes([0]) + discovery + bytes([7]) + long_write]
    return seeds


def seeds_capture_analysis(packets):
    # Input: records as (meta, 16-bit length, bytes), see Fuzz/Targets/capture-analysis.swift. Windows of
    # consecutive packets of each capture, plus the Linux monitor notes none of the captures has.
    seeds = []
    by_capture = {}
    for name, d, p in packets:
        by_capture.setdefault(name, []).append((d, p))
    for name, items in sorted(by_capture.items()):
        for _ in range(15):
            start = rng.randrange(max(1, len(items) - 10))
            out = bytearray()
            for d, p in items[start:start + rng.randint(1, 10)]:
                out += bytes([d]) + struct.pack("<H", len(p)) + p
            seeds.append(bytes(out))
    # Whole connections (the analyzer's GATT tables need discovery), from each LE Connection Complete on.
    for name, items in sorted(by_capture.items()):
        starts = [i for i, (d, p) in enumerate(items) if p[:2] == b"\x04\x3e" and len(p) > 3 and p[3] in (0x01, 0x0A)]
        for start in starts[:3]:
            out = bytearray()
            for d, p in items[start:]:
                if len(out) + len(p) + 3 > 8000:
                    break
                if p[:2] == b"\x04\x3e" and len(p) > 3 and p[3] in (0x02, 0x0D):
                    continue  # advertising reports: not what these seeds are for
                out += bytes([d]) + struct.pack("<H", len(p)) + p
            seeds.append(bytes(out))
    # The monitor notes of the BlueZ captures (System Note, New Index, Open Index, …).
    real_notes = []
    for name in sorted(os.listdir(CAPTURES)):
        if name.startswith("bluez_monitor"):
            read_btsnoop(os.path.join(CAPTURES, name), real_notes)
    for opcode, body in real_notes[:30]:
        note = bytes([opcode]) + body
        seeds.append(bytes([0x0A]) + struct.pack("<H", len(note)) + note)
    notes = [bytes([12]) + b"Bluetooth daemon 5.66\0", bytes([13, 6, 8]) + b"bluetoothd\0" + b"src/adapter.c:adapter_start()\0",
             bytes([0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]) + b"hci0\0\0\0\0", bytes([8]), bytes([10, 1, 2, 3])]
    for note in notes:
        seeds.append(bytes([0x0A]) + struct.pack("<H", len(note)) + note)
    seeds.append(bytes([0x0C, 0, 0, 0x0E, 3, 0, 0xFF]))
    return seeds


def seeds_gatt_database_json():
    # Database files in both forms of GATTDatabase(json:) (see its documentation), and JSON edge cases.
    table = b"""{ "attributes": [
  { "handle": "0x0001", "type": "0x2800", "value": "0018", "perms": ["read"] },
  { "handle": "0x0002", "type": "0x2803", "value": "020300002a", "perms": ["read"] },
  { "handle": "0x0003", "type": "0x2a00", "value": "426c75655a", "perms": ["read"] },
  { "handle": 16, "type": "0x2800", "value": "0f18", "perms": ["read"] },
  { "handle": "0x0011", "type": "0x2803", "value": "1212001a2a", "perms": ["read"] },
  { "handle": "0x0012", "type": "6e400002-b5a3-f393-e0a9-e50e24dcca9e", "value": "64", "perms": ["read", "write_encrypted"] },
  { "handle": "0x0013", "type": "0x2902", "value": "0000", "perms": ["read", "write"] } ] }
"""
    services = b"""{ "services": [
  { "uuid": "0x180f", "id": "battery",
    "characteristics": [
      { "uuid": "0x2a19", "properties": ["read", "notify"], "value": "64",
        "descriptors": [ { "uuid": "0x2901", "perms": ["read"], "text": "Battery" } ] } ] },
  { "uuid": "0x180a", "secondary": true, "id": "info", "characteristics": [
      { "uuid": "0x2a24", "properties": ["read"], "text": "Model \u00e9\ud83d\ude00" } ] },
  { "uuid": "6e400001-b5a3-f393-e0a9-e50e24dcca9e", "handle": 32, "includes": ["battery", "info"], "characteristics": [
      { "uuid": "6e400002-b5a3-f393-e0a9-e50e24dcca9e", "properties": ["write", "write_without_response", "indicate"],
        "perms": ["write_authenticated"], "cccd_perms": ["read", "write_encrypted"] } ] } ] }
"""
    generic = [b'[]', b'{}', b'"\\u0041\\n\\t\\"\\\\"', b'[1, -0, 0.5e10, -12.25E-3, true, false, null]',
               b'{"a": {"b": [[[[{"c": "d"}]]]]}}', b'  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"  ', b'[1,2,]', b'{"a":1,"a":2}']
    return [table, services] + generic


def seeds_gatt_client(packets):
    # Input: procedure byte, MTU byte, then the server's answers as length-prefixed PDUs (see
    # Fuzz/Targets/gatt-client.swift). The answers are the peripherals' responses in the captures.
    answers = {}
    for ((name, d), _), pdu in att_pdus(packets):
        if d == 1 and len(pdu) <= 255 and pdu[0] & 1 == 1:
            answers.setdefault(pdu[0], []).append(pdu)
    # procedure: (its response opcode, the request opcode whose Attribute Not Found ends it)
    procedures = {0: (0x11, 0x10), 1: (0x07, 0x06), 2: (0x09, 0x08), 3: (0x09, 0x08), 4: (0x05, 0x04), 5: (0x0B, 0x0C),
                  6: (0x17, 0x16), 7: (0x09, 0x08), 8: (0x0F, 0x0E), 9: (0x05, 0x04), 10: (0x13, 0x12)}
    seeds = []
    for which, (response, request) in procedures.items():
        pool = answers.get(response, [])
        for _ in range(10):
            out = bytearray([which, rng.choice([0, 0, 0, 224, 40])])
            if pool:
                for pdu in rng.sample(pool, min(len(pool), rng.randint(1, 5))):
                    out += bytes([len(pdu)]) + pdu
            end = bytes([0x01, request, 0x20, 0x00, 0x0A])
            out += bytes([len(end)]) + end
            seeds.append(bytes(out))
    # The answers of an honest server to a subscription: descriptors, then the write.
    seeds.append(bytes([9, 0, 6, 0x05, 0x01, 0x13, 0x00, 0x02, 0x29, 1, 0x13]))
    seeds.append(bytes([5, 0, 23, 0x0B] + [0x41] * 22 + [23, 0x0D] + [0x42] * 22 + [5, 0x0D, 1, 2, 3, 4]))
    return seeds


def main():
    if "--clean" in sys.argv:
        for target in ("hci-event", "advertising-data", "l2cap", "att-pdu", "att-bearer", "btsnoop", "pcapng", "h4-framer", "gatt-server", "capture-analysis", "gatt-database-json", "gatt-client"):
            shutil.rmtree(os.path.join(CORPUS, target), ignore_errors=True)
    packets = all_packets()
    write_corpus("hci-event", seeds_hci_event(packets), 300)
    write_corpus("advertising-data", seeds_advertising(packets), 200)
    write_corpus("l2cap", seeds_l2cap(packets), 250)
    write_corpus("att-pdu", seeds_att_pdu(packets), 200)
    write_corpus("att-bearer", seeds_att_bearer(packets), 200)
    write_corpus("btsnoop", seeds_btsnoop(), 80)
    write_corpus("pcapng", seeds_pcapng(packets), 80)
    write_corpus("h4-framer", seeds_h4_framer(packets), 100)
    write_corpus("gatt-server", seeds_gatt_server(packets), 200)
    write_corpus("capture-analysis", seeds_capture_analysis(packets), 200)
    write_corpus("gatt-database-json", seeds_gatt_database_json(), 50)
    write_corpus("gatt-client", seeds_gatt_client(packets), 150)


if __name__ == "__main__":
    main()
