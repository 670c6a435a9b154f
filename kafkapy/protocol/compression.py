"""Record-batch compression codecs as Kafka clients produce them (sans-io).

Codec ids are the low three bits of a batch's attributes: 0 none, 1 gzip, 2 snappy, 3 lz4,
4 zstd. Every decompressor takes a ``limit`` on the decompressed size and raises
``CorruptRecordError`` beyond it, so a small hostile payload cannot exhaust memory.

* gzip: a gzip stream (``java.util.zip.GZIPOutputStream``); concatenated members accepted.
* snappy: Java clients and librdkafka use the xerial snappy-java framing: an 8-byte magic
  ``\\x82SNAPPY\\x00``, int32 version, int32 minimum compatible version, then blocks of
  ``int32 length`` + raw snappy. A plain raw snappy block is accepted too.
* lz4: the LZ4 frame format with a correct header checksum (KIP-57), independent blocks; written
  as Kafka's ``Lz4BlockOutputStream`` writes it (64 KiB blocks, no checksums).
* zstd: one or more zstd frames, possibly without a content size (streamed); written at
  Kafka's default level 3.

Every codec comes from the runtime dependencies (zlib from the standard library, the others
from cramjam), so a plain ``pip install kafkapy`` takes any batch a client sends. LZ4 and zstd
frames are walked first (``codec_frames``) to bound their decompressed size before cramjam,
which decompresses a whole frame at once, allocates anything.
"""

from __future__ import annotations

import struct
import zlib

import cramjam

from kafkapy.protocol import codec_frames
from kafkapy.protocol.batch_header import CorruptRecordError

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

DEFAULT_LIMIT = 256 * 1024 * 1024
GZIP_STEP = 1 << 20
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
XERIAL_BLOCK_SIZE = 32 * 1024
# Kafka's LZ4 frame header: magic, FLG 0x60 (version 01, independent blocks), BD 0x40 (64 KiB
# blocks), header checksum (second byte of xxh32 over FLG and BD).
LZ4_HEADER = b"\x04\x22\x4d\x18\x60\x40\x82"
LZ4_BLOCK_SIZE = 64 * 1024
LZ4_END_MARK = b"\x00\x00\x00\x00"
ZSTD_LEVEL = 3

Buffer = bytes | bytearray | memoryview


def _too_big(limit: int) -> CorruptRecordError:
    return CorruptRecordError(f"decompressed batch exceeds the {limit}-byte limit")


def _gunzip(data: Buffer, limit: int) -> bytearray:
    # In steps of GZIP_STEP into one growing buffer: zlib's own output for a large max_length is
    # assembled from blocks and then joined, twice the decompressed size at its peak.
    out = bytearray()
    rest = bytes(data)
    while rest:
        d = zlib.decompressobj(31)
        pending = rest
        while not d.eof:
            try:
                step = d.decompress(pending, GZIP_STEP)
            except zlib.error as e:
                raise CorruptRecordError(f"gzip: {e}") from None
            pending = d.unconsumed_tail
            if not step and not pending and not d.eof:
                raise CorruptRecordError("gzip: truncated stream")
            out += step
            if len(out) > limit:
                raise _too_big(limit)
        rest = d.unused_data
    return out


def _snappy_raw(data: Buffer, limit: int) -> memoryview:
    try:
        if cramjam.snappy.decompress_raw_len(data) > limit:
            raise _too_big(limit)
        return memoryview(cramjam.snappy.decompress_raw(data))
    except cramjam.DecompressionError as e:
        raise CorruptRecordError(f"snappy: {e}") from None


def _unsnappy(data: Buffer, limit: int) -> Buffer:
    mv = memoryview(data)
    if bytes(mv[:8]) != XERIAL_MAGIC:
        return _snappy_raw(mv, limit)
    if len(mv) < 16:
        raise CorruptRecordError("snappy: truncated xerial header")
    out = bytearray()
    pos, end = 16, len(mv)
    while pos < end:
        if pos + 4 > end:
            raise CorruptRecordError("snappy: truncated xerial block length")
        (n,) = struct.unpack_from(">i", mv, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise CorruptRecordError("snappy: xerial block overruns the data")
        out += _snappy_raw(mv[pos : pos + n], limit - len(out))
        pos += n
    return out


def _unlz4(data: Buffer, limit: int) -> memoryview:
    mv = memoryview(data)
    try:
        end, bound = codec_frames.lz4_frame(mv)
    except codec_frames.FrameError as e:
        raise CorruptRecordError(f"lz4: {e}") from None
    if bound > limit:
        raise _too_big(limit)
    try:
        return memoryview(cramjam.lz4.decompress(mv[:end]))
    except cramjam.DecompressionError as e:
        raise CorruptRecordError(f"lz4: {e}") from None


def _unzstd(data: Buffer, limit: int) -> memoryview:
    mv = memoryview(data)
    try:
        bound = codec_frames.zstd_frames(mv)
    except codec_frames.FrameError as e:
        raise CorruptRecordError(f"zstd: {e}") from None
    if bound > limit:
        raise _too_big(limit)
    try:
        return memoryview(cramjam.zstd.decompress(mv))
    except cramjam.DecompressionError as e:
        raise CorruptRecordError(f"zstd: {e}") from None


def decompress(codec: int, data: Buffer, limit: int = DEFAULT_LIMIT) -> Buffer:
    """Decompress the records section of a batch; raise CorruptRecordError on bad input.

    The result is the decompressor's own buffer (bytes, or a read-only memoryview of cramjam's),
    never a copy of it: a batch may decompress to ``limit`` bytes, and a second copy would
    double what one produce request costs."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        return _gunzip(data, limit)
    if codec == SNAPPY:
        return _unsnappy(data, limit)
    if codec == LZ4:
        return _unlz4(data, limit)
    if codec == ZSTD:
        return _unzstd(data, limit)
    raise CorruptRecordError(f"unknown compression codec {codec}")


def _xerial(data: Buffer) -> bytes:
    mv = memoryview(data)
    parts = [XERIAL_HEADER]
    for pos in range(0, len(mv), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(mv[pos : pos + XERIAL_BLOCK_SIZE]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


def _lz4_frame(data: Buffer) -> bytes:
    """One LZ4 frame of independent 64 KiB blocks; a block that does not shrink is stored."""
    mv = memoryview(data)
    parts = [LZ4_HEADER]
    for pos in range(0, len(mv), LZ4_BLOCK_SIZE):
        chunk = mv[pos : pos + LZ4_BLOCK_SIZE]
        block = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) < len(chunk):
            parts += (struct.pack("<I", len(block)), block)
        else:
            parts += (struct.pack("<I", len(chunk) | codec_frames.LZ4_STORED_BIT), chunk)
    parts.append(LZ4_END_MARK)
    return b"".join(parts)


def compress(codec: int, data: Buffer) -> bytes:
    """Compress a records section the way the Java client does for ``codec``."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if codec == SNAPPY:
        return _xerial(data)
    if codec == LZ4:
        return _lz4_frame(data)
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data, level=ZSTD_LEVEL))
    raise ValueError(f"unknown compression codec {codec}")
