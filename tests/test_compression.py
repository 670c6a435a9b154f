"""Compression codecs: round trips, the framings Kafka clients produce, and the decompressed-size
bound that refuses a hostile frame before anything is allocated.

python-lz4 and zstandard are used here as independent implementations of the formats (they are
what kafka-python compresses with); the broker itself decodes with cramjam only.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap

import cramjam
import lz4.frame
import pytest
import zstandard

from kafkapy.protocol import compression
from kafkapy.protocol.compression import GZIP, LZ4, SNAPPY, ZSTD
from kafkapy.protocol.record_batch import CorruptRecordError

DATA = b"kafka " * 20000 + bytes(range(256))
BLOCK_SIZES = [
    lz4.frame.BLOCKSIZE_MAX64KB,
    lz4.frame.BLOCKSIZE_MAX256KB,
    lz4.frame.BLOCKSIZE_MAX4MB,
]


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_codec_round_trip_and_limit(codec: int) -> None:
    assert compression.decompress(codec, compression.compress(codec, DATA)) == DATA
    assert compression.decompress(codec, compression.compress(codec, b"")) == b""
    with pytest.raises(CorruptRecordError, match="exceeds the 1000-byte limit"):
        compression.decompress(codec, compression.compress(codec, DATA), limit=1000)
    with pytest.raises(CorruptRecordError):
        compression.decompress(codec, b"\x00garbage-not-compressed" * 3)


def test_xerial_snappy_sample_and_raw_snappy() -> None:
    data = bytes(range(256)) * 300  # > one 32 KiB xerial block
    blocks = [data[i : i + 32768] for i in range(0, len(data), 32768)]
    xerial = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    for blk in blocks:
        raw = bytes(cramjam.snappy.compress_raw(blk))
        xerial += struct.pack(">i", len(raw)) + raw
    assert compression.decompress(SNAPPY, xerial) == data
    raw_only = bytes(cramjam.snappy.compress_raw(data))
    assert compression.decompress(SNAPPY, raw_only) == data
    assert compression.compress(SNAPPY, data).startswith(b"\x82SNAPPY\x00")
    with pytest.raises(CorruptRecordError):
        compression.decompress(SNAPPY, xerial[:-5])


def test_lz4_frames_are_written_as_kafka_writes_them() -> None:
    """Kafka's Lz4BlockOutputStream: independent 64 KiB blocks, correct header checksum, no
    content size or checksums; a block that does not shrink is stored uncompressed."""
    frame = compression.compress(LZ4, DATA)
    assert frame[:7] == bytes.fromhex("04224d18604082")
    assert lz4.frame.decompress(frame) == DATA
    info = lz4.frame.get_frame_info(frame)
    assert info["block_linked"] is False and info["block_size"] == 64 * 1024
    assert not info["content_checksum"] and info["content_size"] == 0
    noise = os.urandom(100_000)  # does not shrink
    stored = compression.compress(LZ4, noise)
    assert struct.unpack_from("<I", stored, 7)[0] & 0x80000000
    assert lz4.frame.decompress(stored) == noise == compression.decompress(LZ4, stored)
    empty = compression.compress(LZ4, b"")
    assert empty == bytes.fromhex("04224d1860408200000000") and lz4.frame.decompress(empty) == b""


@pytest.mark.parametrize("block_size", BLOCK_SIZES)
@pytest.mark.parametrize("checksums", [False, True])
@pytest.mark.parametrize("store_size", [False, True])
def test_lz4_frames_from_other_writers(block_size: int, checksums: bool, store_size: bool) -> None:
    data = DATA * 8  # several blocks at every block size
    frame = lz4.frame.compress(
        data,
        block_size=block_size,
        block_linked=False,
        content_checksum=checksums,
        block_checksum=checksums,
        store_size=store_size,
    )
    assert compression.decompress(LZ4, frame) == data
    assert compression.decompress(LZ4, frame + b"trailing bytes") == data  # ignored, as Kafka


def test_lz4_frames_kafka_refuses() -> None:
    data = DATA * 8
    linked = lz4.frame.compress(data, block_linked=True)
    with pytest.raises(CorruptRecordError, match="dependent block stream is unsupported"):
        compression.decompress(LZ4, linked)
    good = compression.compress(LZ4, data)
    bad_checksum = good[:6] + bytes([good[6] ^ 0xFF]) + good[7:]
    with pytest.raises(CorruptRecordError, match="lz4: .*[Cc]hecksum"):
        compression.decompress(LZ4, bad_checksum)
    with pytest.raises(CorruptRecordError, match="truncated"):
        compression.decompress(LZ4, good[:-4])
    oversized_block = good[:7] + struct.pack("<I", 64 * 1024 + 1) + good[11:]
    with pytest.raises(CorruptRecordError, match="exceeds the frame's maximum"):
        compression.decompress(LZ4, oversized_block)
    with pytest.raises(CorruptRecordError, match="bad magic"):
        compression.decompress(LZ4, b"\x00" + good[1:])


def test_zstd_frames_clients_send() -> None:
    data = DATA * 4
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    with_size = zstandard.ZstdCompressor(write_checksum=True).compress(data)
    streamed = zstandard.ZstdCompressor().compressobj()
    chunks = [streamed.compress(data[i : i + 5000]) for i in range(0, len(data), 5000)]
    stream = b"".join(chunks) + streamed.flush()
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    for frame in (no_size, with_size, stream, compression.compress(ZSTD, data)):
        assert compression.decompress(ZSTD, frame) == data
    assert compression.decompress(ZSTD, no_size + skippable + with_size) == data + data
    assert zstandard.ZstdDecompressor().decompress(compression.compress(ZSTD, data)) == data
    with pytest.raises(CorruptRecordError, match="truncated"):
        compression.decompress(ZSTD, no_size[:-3])
    with pytest.raises(CorruptRecordError, match="unknown frame magic"):
        compression.decompress(ZSTD, no_size + b"junk")


def zstd_rle_frame(blocks: int) -> bytes:
    """A valid zstd frame of ``blocks`` RLE blocks of 128 KiB each: 4 bytes per 128 KiB out."""
    header = struct.pack("<IBB", 0xFD2FB528, 0x00, 7 << 3)  # no content size, 128 KiB window
    body = b"".join(
        struct.pack("<I", (128 * 1024) << 3 | 1 << 1 | (i == blocks - 1))[:3] + b"a"
        for i in range(blocks)
    )
    return header + body


def lz4_zero_frame(blocks: int) -> bytes:
    """A valid Kafka LZ4 frame of ``blocks`` 4 MiB blocks of zeros (about 16 KiB each)."""
    one = lz4.frame.compress(
        b"\x00" * (4 << 20),
        block_size=lz4.frame.BLOCKSIZE_MAX4MB,
        block_linked=False,
        content_checksum=False,
        store_size=False,
    )
    header, block = one[:7], one[7:-4]
    return header + block * blocks + b"\x00\x00\x00\x00"


def test_bounded_frames_decompress() -> None:
    assert compression.decompress(ZSTD, zstd_rle_frame(3)) == b"a" * (3 * 128 * 1024)
    assert compression.decompress(LZ4, lz4_zero_frame(2)) == b"\x00" * (8 << 20)


# The peak resident size of the child process itself, in KiB: VmHWM, not ru_maxrss, which in a
# forked child starts from the parent's size at fork and so hides growth below it.
CHILD_HWM = """
def hwm():
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))
"""


def child_growth_kib(setup: str, measured: str) -> tuple[int, str]:
    """Run ``setup`` then ``measured`` in a fresh interpreter: (KiB its peak resident size grew
    by during ``measured``, what it printed)."""
    script = "\n".join(
        [CHILD_HWM, textwrap.dedent(setup), "before = hwm()", textwrap.dedent(measured),
         "print('grew_kib', hwm() - before)"]
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    text, grown = out.rsplit("grew_kib", 1)
    return int(grown), text


@pytest.mark.parametrize(
    "codec, bomb",
    [(ZSTD, "zstd_rle_frame(8192)"), (LZ4, "lz4_zero_frame(128)")],  # 1 GiB and 512 MiB out
)
def test_decompression_bomb_is_refused_before_allocating(codec: int, bomb: str) -> None:
    """A frame that would decompress past the limit (256 MiB by default) is refused by walking
    its block headers: the process never grows by anything like the output size."""
    here = str(__import__("pathlib").Path(__file__).parent)
    grown, out = child_growth_kib(
        f"""
        import sys
        sys.path.insert(0, {here!r})
        from test_compression import lz4_zero_frame, zstd_rle_frame
        from kafkapy.protocol import compression
        from kafkapy.protocol.record_batch import CorruptRecordError
        data = {bomb}
        """,
        f"""
        try:
            compression.decompress({codec}, data)
        except CorruptRecordError as e:
            print(e)
        """,
    )
    assert "exceeds the 268435456-byte limit" in out, out
    assert grown < 32 * 1024, grown


@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD])
def test_an_accepted_batch_costs_one_copy_of_its_records(codec: int, tmp_path) -> None:
    """A batch under the limit is decompressed once: the process grows by about its
    decompressed size, not twice that (a produce request of 50 KiB of gzip or a few bytes of
    zstd may decompress to 128 MiB, and the broker validates such batches one after another)."""
    size = 48 << 20
    path = tmp_path / "compressed"
    path.write_bytes(compression.compress(codec, b"\x00" * size))
    grown, _ = child_growth_kib(
        f"""
        from kafkapy.protocol import compression
        data = open({str(path)!r}, "rb").read()
        """,
        f"assert len(compression.decompress({codec}, data)) == {size}",
    )
    assert grown / 1024 < 1.4 * (size >> 20), f"48 MiB decompressed, grew {grown / 1024:.0f} MiB"
