// CPU-only fuzz target (no CUDA): a type-length-value record parser and evaluator, for
// CI machines without a GPU. Build with plain clang++ (-fsanitize=address).
//
// Input: records, each u8 type, u16 len (little-endian), len value bytes:
//   0x01 U32   4 bytes, little-endian; its value
//   0x02 NAME  a name of at most 31 bytes; its value is its length up to the first NUL
//   0x03 BLOB  any bytes; its value is their sum
//   0x10 LIST  nested records (at most 8 deep); its value is the sum of theirs
//   0x11 REF   u16 index of an earlier record of the same list; that record's value
// The input's value is the sum of the top-level records' values.
//
// Planted bugs (-DCUSAFE_FIXED builds the fixed variant):
//  1. heap-buffer-overflow (WRITE): a NAME's len is trusted when it is copied into its
//     32-byte buffer. Seed 1's NAME is followed by a 40-byte BLOB: raise its len.
//  2. SEGV (null dereference): REF indices are checked at the top level only; a REF
//     inside a LIST that points past its list resolves to null and is dereferenced.
//     Seed 2 has a LIST ending in REF 1: raise the index.
#include <cusafe/fuzz.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

enum : uint8_t { kU32 = 0x01, kName = 0x02, kBlob = 0x03, kList = 0x10, kRef = 0x11 };
constexpr size_t kNameMax = 32;  // bytes of a name's buffer, the terminating NUL included
constexpr int kMaxDepth = 8;

struct Record {
  uint8_t type = 0;
  uint64_t value = 0;  // for U32, NAME and BLOB: known after parsing; LIST, REF: evaluated
  uint16_t ref = 0;
  std::string name;
  std::vector<Record> kids;
};

static bool parse(const uint8_t *p, const uint8_t *end, int depth, std::vector<Record> &out) {
  while (p < end) {
    if (end - p < 3) return false;
    Record r;
    r.type = p[0];
    const size_t len = p[1] | size_t(p[2]) << 8;
    const uint8_t *v = p + 3;
    if (size_t(end - v) < len) return false;
    p = v + len;
    switch (r.type) {
    case kU32:
      if (len != 4) return false;
      r.value = v[0] | uint32_t(v[1]) << 8 | uint32_t(v[2]) << 16 | uint32_t(v[3]) << 24;
      break;
    case kName: {
      char *buf = static_cast<char *>(std::malloc(kNameMax));
      if (!buf) return false;
#ifdef CUSAFE_FIXED
      if (len >= kNameMax) {
        std::free(buf);
        return false;
      }
#endif
      std::memcpy(buf, v, len); // asan-expect: heap-buffer-overflow
      buf[len] = 0;
      r.name = buf;
      r.value = r.name.size();
      std::free(buf);
      break;
    }
    case kBlob:
      for (size_t i = 0; i < len; ++i) r.value += v[i];
      break;
    case kList:
      if (depth + 1 > kMaxDepth || !parse(v, v + len, depth + 1, r.kids)) return false;
      break;
    case kRef:
      if (len != 2) return false;
      r.ref = uint16_t(v[0] | v[1] << 8);
#ifdef CUSAFE_FIXED
      if (r.ref >= out.size()) return false;  // not an earlier record of this list
#else
      if (depth == 0 && r.ref >= out.size()) return false;  // checked at the top level only
#endif
      break;
    default:
      return false;
    }
    out.push_back(std::move(r));
  }
  return true;
}

// The record a REF names, or null if there is none.
__attribute__((noinline)) static const Record *resolve(const std::vector<Record> &list,
                                                       size_t i) {
  return i < list.size() ? &list[i] : nullptr;
}

// Evaluates LIST and REF records in place, in order; returns the list's value.
static uint64_t eval(std::vector<Record> &list) {
  uint64_t sum = 0;
  for (Record &r : list) {
    if (r.type == kList) r.value = eval(r.kids);
    if (r.type == kRef) {
      const Record *target = resolve(list, r.ref);
      r.value = target->value; // asan-expect: SEGV
    }
    sum += r.value;
  }
  return sum;
}

CUSAFE_FUZZ_TARGET(data, size) {
  std::vector<Record> top;
  if (!parse(data, data + size, 0, top) || top.empty()) return 0;
  const uint64_t value = eval(top);
  size_t names = 0;
  for (const Record &r : top) names += r.type == kName;
  std::printf("cpu_tlv: %zu records (%zu names), value %llu\n", top.size(), names,
              (unsigned long long)value);
  return 0;
}
