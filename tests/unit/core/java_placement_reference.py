"""Independent reference for Storm's fields-grouping placement.

Prints 1000 sample keys, one JSON object per line: {"key": [...],
"tasks": N, "index": I}, where I is the task index Storm picks:
Math.floorMod(Arrays.deepHashCode(key), N). The hashing follows the Java
language spec (String.hashCode over UTF-16 code units, Long.hashCode as
(int)(v ^ (v >>> 32))), written here without reference to the C++ code.
Deterministic: the same seed always gives the same keys.
"""
import json
import random


def to_int32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


def java_string_hash(s):
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return to_int32(h)


def java_long_hash(v):
    u = v & 0xFFFFFFFFFFFFFFFF
    return to_int32(u ^ (u >> 32))


def java_hash(value):
    if isinstance(value, str):
        return java_string_hash(value)
    return java_long_hash(value)


def deep_hash(values):
    h = 1
    for v in values:
        h = to_int32(31 * h + java_hash(v))
    return h


def floor_mod(x, n):
    return x - (x // n) * n  # Python's // floors, like Math.floorMod


def sample_key(rng):
    kind = rng.randrange(5)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ "
    word = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24)))
    if kind == 0:
        return [word]
    if kind == 1:  # non-ASCII, including characters outside the BMP
        extra = "".join(rng.choice("éüßżłñ東京語😀🚀𝄞") for _ in range(rng.randrange(1, 6)))
        return [word + extra]
    if kind == 2:
        return [rng.randrange(-(1 << 63), 1 << 63)]
    if kind == 3:
        return [rng.randrange(-1000, 1000)]
    return [word, rng.randrange(-(1 << 40), 1 << 40)]


def main():
    rng = random.Random(20261130)
    for _ in range(1000):
        key = sample_key(rng)
        tasks = rng.randrange(1, 17)
        index = floor_mod(deep_hash(key), tasks)
        print(json.dumps({"key": key, "tasks": tasks, "index": index}, ensure_ascii=False))


if __name__ == "__main__":
    main()
