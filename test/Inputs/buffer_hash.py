"""kloop's BufferHash (include/kloop/Support/BufferHash.h) in Python: the hash libkloop-cupti.so writes
for every captured argument. An independent implementation for the fakes and checkers of the tests;
unittests/Support/BufferHashTest.cpp checks that the C++ one gives the values this one gives."""
import struct

MASK = (1 << 64) - 1
SEED, M1, M2, M3 = 0x6B6C6F6F70686173, 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def buffer_hash(data: bytes) -> int:
    h = SEED
    padded = bytes(data) + b"\0" * (-len(data) % 8)
    for (w,) in struct.iter_unpack("<Q", padded):
        rot = ((h << 23) | (h >> 41)) & MASK
        h = ((rot ^ ((w * M2) & MASK)) * M1) & MASK
    h ^= len(data)
    h ^= h >> 30
    h = (h * M2) & MASK
    h ^= h >> 27
    h = (h * M3) & MASK
    h ^= h >> 31
    return h


def buffer_hash_hex(data: bytes) -> str:
    return "%016x" % buffer_hash(data)


if __name__ == "__main__":
    for text in [b"", b"a", b"foobar", b"0123456789abcdef!", bytes(range(256))]:
        print("%r %016x" % (text[:20], buffer_hash(text)))
