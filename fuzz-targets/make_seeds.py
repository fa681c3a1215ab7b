#!/usr/bin/env python3
"""Writes the fuzz targets' binary seeds and every target's bug inputs.

    python3 fuzz-targets/make_seeds.py      (from anywhere; output is deterministic)

Seeds of the text formats (graph_bfs, tokens_embed, mtx_spmv) are committed as they
are; their bug inputs are derived from them here, one edit each. Each bug input
triggers exactly one planted bug of the unfixed build (targets.toml lists them).
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, kind, name, data):
    path = os.path.join(HERE, target, kind, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def read(target, name):
    with open(os.path.join(HERE, target, "seeds", name), "rb") as f:
        return f.read()


def edit(data, old, new):
    assert data.count(old) >= 1, (old, data[:80])
    return data.replace(old, new, 1)


# --- ppm_filter: P6 images; heights are multiples of 16, maxval <= 255.
def ppm(w, h, maxval, pixel, comment=b""):
    head = b"P6\n" + comment + b"%d %d\n%d\n" % (w, h, maxval)
    body = bytes(c for y in range(h) for x in range(w) for c in pixel(x, y))
    return head + body


def ring(x, y):
    d = (x - 12) ** 2 + (y - 16) ** 2
    return (255 if d < 90 else 30, (x * 10) % 256, (y * 7) % 256)


a = ppm(32, 16, 255, lambda x, y: (x * 8, y * 16, 255 * ((x ^ y) & 1)))
b1 = ppm(24, 32, 255, ring, b"# two frames of a 24x32 clip\n")
b2 = ppm(24, 32, 255, lambda x, y: ring((x + 3) % 24, y))
c = ppm(16, 48, 15, lambda x, y: (x % 16, (y // 3) % 16, 15 - x % 16), b"# 4-bit levels\n")
write("ppm_filter", "seeds", "gradient_32x16.ppm", a)
write("ppm_filter", "seeds", "clip_24x32_2frames.ppm", b1 + b2)
write("ppm_filter", "seeds", "levels_16x48.ppm", c)
# device: height 33 (the second frame supplies the extra row of samples)
write("ppm_filter", "bugs", "heap-buffer-overflow-mask-rows.bin",
      edit(b1 + b2, b"24 32\n255\n", b"24 33\n255\n"))
# host: maxval 355 means 16-bit samples: 4608 bytes into a 2304-byte buffer
write("ppm_filter", "bugs", "heap-buffer-overflow-16bit-samples.bin",
      edit(b1 + b2, b"24 32\n255\n", b"24 32\n355\n"))


# --- block_decode: "BLKZ" w h bs version, then (type, len, payload) per tile.
def blk_header(w, h, bs):
    return b"BLKZ" + struct.pack("<HHBB", w, h, bs, 1)


def literal(pixels):  # delta-coded
    prev, out = 0, bytearray()
    for p in pixels:
        out.append((p - prev) & 0xFF)
        prev = p
    return struct.pack("<BH", 0, len(out)) + bytes(out)


def runs(pairs):
    payload = bytes(v for pair in pairs for v in pair)
    return struct.pack("<BH", 1, len(payload)) + payload


def fill(value):
    return struct.pack("<BHB", 2, 1, value)


s1_blocks = [
    literal([(i * 3) % 256 for i in range(64)]),
    runs([(20, 10), (24, 200), (20, 90)]),
    fill(77),
    literal([200 - i for i in range(40)]),  # short: the rest of the tile is 0
    fill(3),
    runs([(32, 250), (32, 5)]),  # last block: its runs add up to 64
]
s1 = blk_header(20, 12, 8) + b"".join(s1_blocks)
s2_blocks = []
for t in range(16):
    if t % 3 == 0:
        s2_blocks.append(literal([(t * 16 + i) % 256 for i in range(16)]))
    elif t % 3 == 1:
        s2_blocks.append(fill(t * 15))
    else:
        s2_blocks.append(runs([(5, t), (11, 255 - t)]))
s2_blocks[-1] = runs([(8, 1), (4, 2), (4, 3)])
s2 = blk_header(16, 16, 4) + b"".join(s2_blocks)
s3 = (blk_header(33, 7, 16) + literal([(i * 7) % 256 for i in range(256)]) + fill(128)
      + runs([(255, 1), (1, 2)]) + b"trailer")
write("block_decode", "seeds", "mixed_20x12_bs8.blk", s1)
write("block_decode", "seeds", "grid_16x16_bs4.blk", s2)
write("block_decode", "seeds", "wide_33x7_bs16.blk", s3)
# device: the last block's first run grows from 32 to 40 pixels (72 > 64)
write("block_decode", "bugs", "heap-buffer-overflow-run-counts.bin",
      s1[:-4] + bytes([40, 250, 32, 5]))
# host: the first literal block says 66 bytes for a 64-pixel tile
write("block_decode", "bugs", "heap-buffer-overflow-literal-len.bin",
      s1[:10] + struct.pack("<BH", 0, 66) + s1[13:])


# --- attention: 24-byte header, valid-key counts, optional ALiBi slopes.
def attn(batch, heads, seq, hd, flags, lens, seed, slopes=(), n_lens=None):
    n = len(lens) if n_lens is None else n_lens
    head = b"ATTN" + struct.pack("<6HII", batch, heads, seq, hd, flags, n, seed, 0)
    return head + struct.pack("<%dH" % len(lens), *lens) + struct.pack("<%df" % len(slopes), *slopes)


alibi = (0.5, 0.25, 0.125, 0.0625)
write("attention", "seeds", "b1_h2_s16_d32.attn", attn(1, 2, 16, 32, 0, [12], 7))
write("attention", "seeds", "b2_h4_s24_d64_alibi.attn", attn(2, 4, 24, 64, 2, [24, 20], 11, alibi))
write("attention", "seeds", "b3_h1_s40_d16_causal.attn", attn(3, 1, 40, 16, 1, [], 3))
# device: head_dim 96 > the 64-float query tile
write("attention", "bugs", "shared-buffer-overflow-head-dim.bin", attn(1, 2, 16, 96, 0, [12], 7))
# device: 20 valid keys in a 16-key sequence (the only batch item, no causal mask)
write("attention", "bugs", "heap-buffer-overflow-key-count.bin", attn(1, 2, 16, 32, 0, [20], 7))
# host: n_lens 3 for a batch of 2 (the slopes supply the bytes)
write("attention", "bugs", "heap-buffer-overflow-lens-count.bin",
      attn(2, 4, 24, 64, 2, [24, 20], 11, alibi, n_lens=3))


# --- cpu_tlv: (type, u16 len, value) records.
def rec(t, value):
    return struct.pack("<BH", t, len(value)) + value


def u32(v):
    return rec(0x01, struct.pack("<I", v))


def name(s):
    return rec(0x02, s)


def blob(b):
    return rec(0x03, b)


def lst(*kids):
    return rec(0x10, b"".join(kids))


def ref(i):
    return rec(0x11, struct.pack("<H", i))


write("cpu_tlv", "seeds", "flat.tlv", u32(7) + name(b"sensor-7") + blob(bytes(range(40))) + u32(9))
write("cpu_tlv", "seeds", "refs.tlv", name(b"root") + lst(u32(1), u32(2), ref(1)) + ref(0))
write("cpu_tlv", "seeds", "nested.tlv", lst(lst(name(b"leaf"), blob(b"\x01" * 8)), u32(3)) + blob(b"abcd"))
# heap-buffer-overflow: a NAME of 40 bytes (the BLOB after it supplies them)
write("cpu_tlv", "bugs", "heap-buffer-overflow-name-len.bin",
      u32(7) + struct.pack("<BH", 0x02, 40) + b"sensor-7" + blob(bytes(range(40))) + u32(9))
# SEGV: the REF inside the LIST names record 5 of a 3-record list
write("cpu_tlv", "bugs", "segv-nested-ref.bin", name(b"root") + lst(u32(1), u32(2), ref(5)) + ref(0))


# --- bug inputs of the text targets, one edit of a committed seed each.
chain = read("graph_bfs", "chain.txt")
# device: a shortcut one junction shorter makes the chain 32 levels deep
write("graph_bfs", "bugs", "heap-buffer-overflow-level-bins.bin", edit(chain, b"\n0 9\n", b"\n0 8\n"))
# host: 16 edge lines after a header that says 10
write("graph_bfs", "bugs", "heap-buffer-overflow-edge-count.bin",
      edit(read("graph_bfs", "small.csv"), b"12,20", b"12,10"))
bert = read("tokens_embed", "bert.txt")
# device: id 601 in a 512-row table
write("tokens_embed", "bugs", "heap-buffer-overflow-token-id.bin", edit(bert, b"[101]", b"[601]"))
# host: a 33-byte word with a capital
write("tokens_embed", "bugs", "heap-buffer-overflow-long-word.bin",
      edit(bert, b"Hello", b"Hello" + b"o" * 28))
# device: column 7 of an 8 x 4 matrix
write("mtx_spmv", "bugs", "heap-buffer-overflow-column.bin",
      edit(read("mtx_spmv", "tall8x4.mtx"), b"\n5 4 3.0\n", b"\n5 7 3.0\n"))
# host: row 0
write("mtx_spmv", "bugs", "heap-buffer-overflow-row-zero.bin",
      edit(read("mtx_spmv", "lap5.mtx"), b"\n1 2 -1.0\n", b"\n0 2 -1.0\n"))
