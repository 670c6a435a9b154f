"""Structure checks and decompressed-size bounds for LZ4 and zstd frames (sans-io).

The codecs themselves (cramjam) decompress a whole frame at once into memory they allocate, so
before handing them a batch the broker walks the frame's block headers, which costs nothing next
to decompression, and computes an upper bound of what the frame can decompress to. A batch whose
bound is over the limit is refused without decompressing anything: a few hostile bytes cannot
make the broker allocate gigabytes. The walkers also apply the framing rules Kafka applies.

LZ4 (KIP-57, Kafka's ``Lz4BlockInputStream``): one frame; magic ``04 22 4D 18``; FLG version 01,
independent blocks (Kafka refuses dependent ones), reserved and dictionary-id bits zero; BD block
size id 4-7 (64 KiB-4 MiB), other bits zero; optional 8-byte content size; header checksum byte
(checked by the decoder); blocks of ``uint32le size`` (high bit: stored uncompressed) up to the
block maximum, each optionally followed by a 4-byte checksum; a zero end mark, then an optional
4-byte content checksum. Bytes after the end of the frame are ignored, as Kafka ignores them.
Bound: stored blocks count their size, compressed blocks the block maximum.

zstd (RFC 8878): one or more frames (``28 B5 2F FD``) and skippable frames (``5X 2A 4D 18``),
the content size optional (librdkafka and the Java client stream without it). Blocks carry a
3-byte header: last-block bit, type (raw, RLE, compressed, reserved) and size (at most 128 KiB).
Bound: raw and RLE blocks count their size, compressed blocks 128 KiB; a frame that declares its
content size is bounded by it too (the decoder checks the declaration).
"""

from __future__ import annotations

import struct

LZ4_MAGIC = 0x184D2204
ZSTD_MAGIC = 0xFD2FB528
ZSTD_SKIPPABLE_MASK = 0xFFFFFFF0
ZSTD_SKIPPABLE_MAGIC = 0x184D2A50
ZSTD_BLOCK_MAX = 128 * 1024
LZ4_BLOCK_SIZES = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}
LZ4_STORED_BIT = 0x80000000


class FrameError(ValueError):
    """The bytes do not follow the codec's framing (the message says how)."""


def _u32(data: memoryview, pos: int, what: str) -> int:
    if pos + 4 > len(data):
        raise FrameError(f"truncated {what}")
    return struct.unpack_from("<I", data, pos)[0]


def lz4_frame(data: memoryview) -> tuple[int, int]:
    """Walk one Kafka LZ4 frame; return (end of the frame, bound of its decompressed size)."""
    if len(data) < 7:
        raise FrameError("truncated frame header")
    if _u32(data, 0, "magic") != LZ4_MAGIC:
        raise FrameError("not an LZ4 frame (bad magic)")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise FrameError(f"frame version {flg >> 6} is unsupported")
    if flg & 0x03:
        raise FrameError("reserved or dictionary-id bits set in the frame descriptor")
    if not flg & 0x20:
        raise FrameError("dependent block stream is unsupported (Kafka needs independent blocks)")
    block_checksum, content_size, content_checksum = flg & 0x10, flg & 0x08, flg & 0x04
    if bd & 0x8F or (bd >> 4) & 7 not in LZ4_BLOCK_SIZES:
        raise FrameError(f"invalid block descriptor {bd:#04x}")
    block_max = LZ4_BLOCK_SIZES[(bd >> 4) & 7]
    pos = 6 + (8 if content_size else 0) + 1  # descriptor, content size, header checksum
    if pos > len(data):
        raise FrameError("truncated frame header")
    bound = 0
    while True:
        word = _u32(data, pos, "block size")
        pos += 4
        if word == 0:
            pos += 4 if content_checksum else 0
            if pos > len(data):
                raise FrameError("truncated content checksum")
            return pos, bound
        size = word & ~LZ4_STORED_BIT
        if size > block_max:
            raise FrameError(f"block size {size} exceeds the frame's maximum {block_max}")
        pos += size + (4 if block_checksum else 0)
        if pos > len(data):
            raise FrameError("truncated block")
        bound += size if word & LZ4_STORED_BIT else block_max


def _zstd_frame(data: memoryview, pos: int) -> tuple[int, int]:
    """Walk the zstd frame whose magic is at ``pos``; return (its end, its bound)."""
    pos += 4
    if pos >= len(data):
        raise FrameError("truncated frame header")
    fhd = data[pos]
    pos += 1
    fcs_flag, single_segment = fhd >> 6, fhd & 0x20
    if fhd & 0x08:
        raise FrameError("reserved bit set in the frame header")
    pos += 0 if single_segment else 1  # window descriptor
    pos += (0, 1, 2, 4)[fhd & 0x03]  # dictionary id
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if pos + fcs_size > len(data):
        raise FrameError("truncated frame header")
    content_size = None
    if fcs_size:
        content_size = int.from_bytes(data[pos : pos + fcs_size], "little")
        content_size += 256 if fcs_size == 2 else 0
    pos += fcs_size
    bound = 0
    while True:
        if pos + 3 > len(data):
            raise FrameError("truncated block header")
        header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        pos += 3
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        if kind == 3:
            raise FrameError("reserved block type")
        if size > ZSTD_BLOCK_MAX:
            raise FrameError(f"block size {size} exceeds {ZSTD_BLOCK_MAX}")
        pos += 1 if kind == 1 else size
        bound += ZSTD_BLOCK_MAX if kind == 2 else size
        if pos > len(data):
            raise FrameError("truncated block")
        if last:
            break
    pos += 4 if fhd & 0x04 else 0
    if pos > len(data):
        raise FrameError("truncated content checksum")
    return pos, bound if content_size is None else min(bound, content_size)


def zstd_frames(data: memoryview) -> int:
    """Walk a sequence of zstd (and skippable) frames; return the bound of the whole."""
    pos = bound = 0
    if not len(data):
        raise FrameError("no frame")
    while pos < len(data):
        magic = _u32(data, pos, "frame magic")
        if magic == ZSTD_MAGIC:
            pos, frame_bound = _zstd_frame(data, pos)
            bound += frame_bound
        elif magic & ZSTD_SKIPPABLE_MASK == ZSTD_SKIPPABLE_MAGIC:
            pos += 8 + _u32(data, pos + 4, "skippable frame size")
            if pos > len(data):
                raise FrameError("truncated skippable frame")
        else:
            raise FrameError(f"unknown frame magic {magic:#010x}")
    return bound
