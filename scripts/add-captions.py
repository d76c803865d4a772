#!/usr/bin/env python3
"""Adds CEA-608 closed captions to an H.264 elementary stream, as broadcast video carries them.

    add-captions.py IN.h264 OUT.h264 FPS TEXT FROM_SECONDS TO_SECONDS

Each frame gets an SEI message (user_data_registered_itu_t_t35, ATSC A/53 "GA94" cc_data) with
one CEA-608 byte pair of field 1, channel CC1: a pop-on caption TEXT loaded from the first
frame, shown (End Of Caption) at FROM_SECONDS and erased at TO_SECONDS, padding otherwise.
The input must be Annex B with one slice per frame and no B-frames (decode order is display
order), as make-media.sh encodes it.
"""
import sys


def odd_parity(byte):
    return byte | 0x80 if bin(byte).count("1") % 2 == 0 else byte


def pairs(text, frames, show, erase):
    """The 608 byte pair of each frame."""
    control = lambda code: (odd_parity(0x14), odd_parity(code))
    loading = [control(0x20)]  # Resume Caption Loading (pop-on)
    loading.append((odd_parity(0x14), odd_parity(0x70)))  # Preamble: row 15, column 0, white
    padded = text + (" " if len(text) % 2 else "")
    loading += [(odd_parity(ord(padded[i])), odd_parity(ord(padded[i + 1]))) for i in range(0, len(padded), 2)]
    if len(loading) >= show:
        sys.exit("add-captions.py: the caption needs %d frames to load before it shows" % len(loading))
    result = [(0x80, 0x80)] * frames
    for index, pair in enumerate(loading):
        result[index] = pair
    result[show] = control(0x2F)  # End Of Caption: show what was loaded
    if erase < frames:
        result[erase] = control(0x2C)  # Erase Displayed Memory
    return result


def escape(payload):
    """RBSP to NAL payload: an emulation prevention byte after every two zero bytes."""
    out, zeros = bytearray(), 0
    for byte in payload:
        if zeros >= 2 and byte <= 3:
            out.append(3)
            zeros = 0
        out.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    return bytes(out)


def sei(pair):
    cc_data = bytes([0x40 | 1, 0xFF, 0xFC, pair[0], pair[1], 0xFF])  # process_cc_data, 1 triplet
    t35 = bytes([0xB5, 0x00, 0x31]) + b"GA94" + bytes([0x03]) + cc_data
    message = bytes([4, len(t35)]) + t35  # payload type 4, size
    return b"\x00\x00\x00\x01" + bytes([0x06]) + escape(message + b"\x80")


def units(stream):
    """The stream's NAL units, each with its start code."""
    starts = []
    index = stream.find(b"\x00\x00\x01")
    while index >= 0:
        begin = index - 1 if index > 0 and stream[index - 1] == 0 else index
        starts.append((begin, index + 3))
        index = stream.find(b"\x00\x00\x01", index + 3)
    for number, (begin, header) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(stream)
        yield stream[header] & 0x1F, stream[begin:end]


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    source, target, fps, text = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    show, erase = round(float(sys.argv[5]) * fps), round(float(sys.argv[6]) * fps)
    stream = open(source, "rb").read()
    slices = sum(1 for kind, _ in units(stream) if kind in (1, 5))
    if not 0 < show < erase:
        sys.exit("add-captions.py: the caption must show after the first frame and before it is erased")
    schedule = pairs(text, slices, show, erase)
    out, frame = bytearray(), 0
    for kind, unit in units(stream):
        if kind in (1, 5):
            out += sei(schedule[frame])
            frame += 1
        out += unit
    open(target, "wb").write(out)


if __name__ == "__main__":
    main()
