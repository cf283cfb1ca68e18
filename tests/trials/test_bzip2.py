"""Block-parallel bzip2 decompression gives exactly what bz2.decompress gives."""

import bz2
import random

import pytest

from common.trials import bzip2


@pytest.fixture
def text():
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "TRUE", "FALSE", '"quoted"', "\\", "{", "\n"]
    return " ".join(rng.choice(words) + str(rng.randrange(1000)) for _ in range(60_000)).encode()


@pytest.fixture(autouse=True)
def small_files_too(monkeypatch):
    monkeypatch.setattr(bzip2, "MIN_PARALLEL_BYTES", 0)


def test_many_blocks_decompress_in_parallel_to_the_same_bytes(text):
    raw = bz2.compress(text, compresslevel=1)  # 100 kB blocks
    pieces = bzip2.split_blocks(raw)
    assert pieces is not None and len(pieces) >= 5
    assert b"".join(bz2.decompress(piece) for piece in pieces) == text
    assert bzip2.decompress(raw, workers=2) == text
    assert bzip2.decompress(raw, workers=1) == text


def test_multi_stream_and_tiny_files_take_the_ordinary_way(text):
    raw = bz2.compress(text[:1000]) + bz2.compress(text[1000:], compresslevel=1)
    assert bzip2.decompress(raw, workers=2) == text
    assert bzip2.decompress(bz2.compress(b""), workers=2) == b""


def test_corrupt_data_raises_like_bz2(text):
    raw = bytearray(bz2.compress(text, compresslevel=1))
    raw[len(raw) // 2] ^= 0xFF
    with pytest.raises(OSError):
        bz2.decompress(bytes(raw))
    with pytest.raises(OSError):
        bzip2.decompress(bytes(raw), workers=2)


@pytest.mark.parametrize("shift", range(8))
def test_block_magic_is_found_at_every_bit_alignment(shift):
    """The magic is searched byte-wise per alignment; compare with a plain bit-by-bit scan."""
    rng = random.Random(shift)
    nbits = 8 * 64
    positions = sorted({8 * rng.randrange(1, 10) + shift, 8 * rng.randrange(20, 40) + shift, nbits - 48})
    bits = rng.getrandbits(nbits)
    for position in positions:  # write the magic at these bit offsets (counted from the top bit)
        bits &= ~(((1 << 48) - 1) << (nbits - position - 48))
        bits |= bzip2.BLOCK_MAGIC << (nbits - position - 48)
    raw = bits.to_bytes(nbits // 8, "big")
    window = (1 << 48) - 1
    expected = [p for p in range(nbits - 47) if (bits >> (nbits - p - 48)) & window == bzip2.BLOCK_MAGIC]
    assert bzip2._find(raw, bzip2.BLOCK_MAGIC) == expected
    assert set(positions) <= set(expected)
