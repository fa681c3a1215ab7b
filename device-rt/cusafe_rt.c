/* cusafe device runtime: the cold report path of every check.
 *
 * Freestanding C compiled to NVPTX bitcode (llvm-pass/build.rs) and linked by the pass
 * into every instrumented device module. The CUSAFE_* constants (record field offsets
 * CUSAFE_REC_*, device kinds CUSAFE_KIND_*, ...) come from the formats crate: build.rs
 * includes the header format/src/c_header.rs generates. Do not hard-code them here.
 *
 * A check that fails reports. The first thread to fail at a site writes one record
 * into the report page (pinned host memory, so it survives a trap), fences
 * system-wide, marks the record complete and the site done, then traps in trap mode.
 * Every other failing thread (and the writer in recover mode) returns and the
 * instrumented code skips the access.
 *
 * Three entries for the instrumented code, all (addr, root, size, len, site):
 * - __cusafe_trap: trap-mode builds (the default), for checks whose root cannot be a
 *   pseudo-pointer. An out-of-line call that never returns: nothing of the caller is
 *   live across it, so it costs the kernel no registers beyond its own few, where an
 *   inlined report costs every kernel the registers of its stores (one-off ptxas
 *   experiment, not scripted: gemm 30 with a bare trap, 58 with the report inlined).
 * - __cusafe_fail: recover-mode builds (`cusafe-clang++ --cusafe-recover`), same
 *   checks. The caller goes on after it (skipping the access), so a call would keep
 *   the caller's live values across it; the pass inlines it into each cold block.
 * - __cusafe_slow: for checks whose root may be a pseudo-pointer, which must be
 *   finished here (and may pass). An out-of-line call, only in such functions.
 */

typedef unsigned long long u64;
typedef unsigned int u32;

/* The runtime page's device address: the module's constant __cusafe_rtpage
 * (format::rtpage::RTPAGE_SYMBOL, here through the header's CUSAFE_RTPAGE_SYMBOL),
 * CUSAFE_RTPAGE_ADDR unless the runtime wrote another device's page into it before a
 * kernel's first launch there. Declared here and defined by the pass
 * (llvm-pass/src/rtpage.rs: weak, externally initialised, in the constant space) in
 * every module that reads it, so a module has one definition after linking this in.
 * RTPAGE reads it with ld.const, which ptxas shares between the reads of a function
 * (the constant space does not change during a launch) and keeps in a register pair
 * in between, where it rematerialised the old immediate address. */
extern const __attribute__((address_space(4))) u64 CUSAFE_RTPAGE_SYMBOL;
#define RTPAGE ((u64)CUSAFE_RTPAGE_SYMBOL)

/* A read of the same constant that ptxas neither shares nor moves (a volatile generic
 * load of its address, in inline assembly: LLVM turns a volatile load of a constant-
 * space global into ld.const, which is never volatile), for a read after a long stretch
 * of code: report()'s flags check after the record write. Through RTPAGE the page stayed
 * live across write_record's loop, and since the cold paths are inlined (recover mode)
 * or count toward their callers' registers (__cusafe_trap), that cost kernels registers:
 * llama_decode's attention kernel 36 -> 38 in trap mode, and 13 of the 36 perf-suite
 * programs changed register counts in recover mode (3 with this read, 0 in trap mode;
 * ptxas 12.5, sm_90). */
static inline __attribute__((always_inline)) u64 rtpage_reread(void) {
  u64 v;
  __asm__ volatile("ld.volatile.u64 %0, [%1];"
                   : "=l"(v)
                   : "l"((const u64 *)&CUSAFE_RTPAGE_SYMBOL)
                   : "memory");
  return v;
}

#define RT_U64(off) (*(volatile u64 *)(RTPAGE + (off)))
#define RT_U32(off) (*(volatile u32 *)(RTPAGE + (off)))

enum { SITE_FREE = 0, SITE_WRITING = 1, SITE_DONE = 2 };

/* One per check site, emitted by the pass (format::report::SITE_*): what the site
 * reports besides the run-time values, so the cold call passes few arguments (every
 * argument is a register live at the call, in every kernel). */
struct site {
  u32 state; /* SITE_FREE / SITE_WRITING / SITE_DONE: each site reports once */
  u32 flags; /* ACCESS_* | OBJECT_* */
  const char *loc; /* the site text: kernel, file, line, column, object */
};
_Static_assert(__builtin_offsetof(struct site, flags) == CUSAFE_SITE_FLAGS_OFFSET, "site layout");
_Static_assert(__builtin_offsetof(struct site, loc) == CUSAFE_SITE_LOC_OFFSET, "site layout");

static inline __attribute__((always_inline)) void put32(volatile unsigned char *rec, u32 off, u32 v) { *(volatile u32 *)(rec + off) = v; }
static inline __attribute__((always_inline)) void put64(volatile unsigned char *rec, u32 off, u64 v) { *(volatile u64 *)(rec + off) = v; }

static inline __attribute__((always_inline)) void write_record(u32 kind, u64 addr, u64 root, u64 header_size, u32 access_size,
                         u32 flags, const char *loc) {
  u32 idx = __atomic_fetch_add((u32 *)(RTPAGE + CUSAFE_RTPAGE_CLAIMED), 1u,
                               __ATOMIC_RELAXED);
  if (idx >= CUSAFE_PAGE_CAPACITY)
    return;
  volatile unsigned char *page = (volatile unsigned char *)RT_U64(CUSAFE_RTPAGE_REPORT_PTR);
  volatile unsigned char *rec = page + CUSAFE_PAGE_HEADER_BYTES + (u64)idx * CUSAFE_RECORD_BYTES;
  put32(rec, CUSAFE_REC_STATE, CUSAFE_STATE_WRITING);
  put32(rec, CUSAFE_REC_KIND, kind);
  put64(rec, CUSAFE_REC_ADDR, addr);
  put64(rec, CUSAFE_REC_ROOT, root);
  put64(rec, CUSAFE_REC_HEADER_SIZE, header_size);
  put32(rec, CUSAFE_REC_ACCESS_SIZE, access_size);
  put32(rec, CUSAFE_REC_FLAGS, flags);
  put32(rec, CUSAFE_REC_THREAD + 0, __nvvm_read_ptx_sreg_tid_x());
  put32(rec, CUSAFE_REC_THREAD + 4, __nvvm_read_ptx_sreg_tid_y());
  put32(rec, CUSAFE_REC_THREAD + 8, __nvvm_read_ptx_sreg_tid_z());
  put32(rec, CUSAFE_REC_BLOCK + 0, __nvvm_read_ptx_sreg_ctaid_x());
  put32(rec, CUSAFE_REC_BLOCK + 4, __nvvm_read_ptx_sreg_ctaid_y());
  put32(rec, CUSAFE_REC_BLOCK + 8, __nvvm_read_ptx_sreg_ctaid_z());
  u32 i = 0;
  /* Byte by byte, not unrolled: this code's register use adds to every kernel's. */
#pragma clang loop unroll(disable) vectorize(disable)
  for (; i + 1 < CUSAFE_LOC_BYTES && loc[i]; ++i)
    rec[CUSAFE_REC_LOC + i] = (unsigned char)loc[i];
  rec[CUSAFE_REC_LOC + i] = 0;
  __nvvm_membar_sys();
  put32(rec, CUSAFE_REC_STATE, CUSAFE_STATE_COMPLETE);
  __nvvm_membar_sys();
}

/* Reports once per site (kind: format::report::DeviceKind; extra_flags: or-ed into the
 * site's flags). In trap mode the thread that wrote the site's record traps; the others
 * go on, skipping their access, until that trap ends the launch. (Waiting for the
 * writer instead would put a spin loop into every cold block, and ptxas then keeps far
 * more registers: gemm 32 -> 64, kmeans assign 40 -> 255.) */
static inline __attribute__((always_inline)) void report(u32 kind, u64 addr, u64 root,
                                                         u64 header_size, u32 access_size,
                                                         u32 extra_flags, struct site *site) {
  u32 expected = SITE_FREE;
  if (!__atomic_compare_exchange_n(&site->state, &expected, SITE_WRITING, 0, __ATOMIC_RELAXED,
                                   __ATOMIC_RELAXED))
    return;
  write_record(kind, addr, root, header_size, access_size, site->flags | extra_flags, site->loc);
  __atomic_store_n(&site->state, SITE_DONE, __ATOMIC_RELAXED);
  __nvvm_membar_sys();
  /* The page read afresh: nothing of it kept across write_record (rtpage_reread). */
  if (!(*(volatile u32 *)(rtpage_reread() + CUSAFE_RTPAGE_FLAGS) & CUSAFE_FLAG_RECOVER))
    __builtin_trap();
}

/* The out-of-line report of __cusafe_slow's pseudo-pointer paths. */
__attribute__((noinline, cold)) void __cusafe_report(u32 kind, u64 addr, u64 root,
                                                     u64 header_size, u32 access_size,
                                                     u32 extra_flags, struct site *site) {
  report(kind, addr, root, header_size, access_size, extra_flags, site);
}

/* What a failed check of a heap block or a known object means: an object check is
 * about its object; a root with bit 63 is poisoned (its arithmetic left its block); any
 * other is out of bounds, with the header size the fast path compared against when the
 * root had a tag (else NO_HEADER in *size). */
static inline __attribute__((always_inline)) u32 fail_kind(u64 root, u64 *size,
                                                           const struct site *site) {
  if (site->flags & CUSAFE_OBJECT_SPACES)
    return CUSAFE_KIND_OBJECT;
  u64 tag = root >> CUSAFE_TAG_SHIFT;
  if ((long long)root < 0 || tag - CUSAFE_MIN_TAG > CUSAFE_MAX_TAG - CUSAFE_MIN_TAG)
    *size = CUSAFE_NO_HEADER;
  return (long long)root < 0 ? CUSAFE_KIND_POISONED : CUSAFE_KIND_OUT_OF_BOUNDS;
}

/* The cold path of a check whose root is no pseudo-pointer (the pass proved it): report
 * and tell the caller to skip the access (1; trap mode does not return). Inlined by
 * the pass into every cold block that calls it. */
u32 __cusafe_fail(u64 addr, u64 root, u64 size, u32 len, struct site *site) {
  u32 kind = fail_kind(root, &size, site);
  report(kind, addr, root, size, len, 0, site);
  return 1;
}

/* The cold path of trap-mode builds: report, then end the launch. The site's writer
 * traps in report(); every other thread failing at the site waits until the record is
 * complete, then traps too (a trap before then could end the launch with the record
 * half written). A trap-mode build run with halt_on_error=0 also stops here: its code
 * has no way to skip the access. */
__attribute__((noinline, noreturn, cold)) void __cusafe_trap(u64 addr, u64 root, u64 size,
                                                             u32 len, struct site *site) {
  u32 kind = fail_kind(root, &size, site);
  report(kind, addr, root, size, len, 0, site);
  while (__atomic_load_n(&site->state, __ATOMIC_RELAXED) != SITE_DONE) {
  }
  __builtin_trap();
}

/* ---- Stack epochs and local pseudo-pointers (format/src/pseudo.rs) ---------------- */

/* The hardware thread slot of the calling thread; the pass computes the same. */
static inline __attribute__((always_inline)) u64 epoch_slot(void) {
  return ((u64)(__nvvm_read_ptx_sreg_smid() & 255) * 64 + (__nvvm_read_ptx_sreg_warpid() & 63)) * 32 +
         __nvvm_read_ptx_sreg_laneid();
}

/* Checks an access through a local pseudo-pointer: the frame must be alive (epoch), the
 * object in scope (header bit 63) and the range inside the object (header size). Returns 0 if fine, else the device kind, with
 * the object's start and size in *start / *size. */
static inline __attribute__((always_inline)) u32 pseudo_check(u64 addr, u64 root, u64 len, u64 *start,
                                                              u64 *size) {
  u64 mask = (1ULL << CUSAFE_PSEUDO_BIT) - 1;
  u64 t = (root >> CUSAFE_CLASS_SHIFT) & CUSAFE_CLASS_MASK;
  u64 depth = (root >> CUSAFE_DEPTH_SHIFT) & CUSAFE_DEPTH_MASK;
  u64 gen = (root >> CUSAFE_GEN_SHIFT) & CUSAFE_GEN_MASK;
  u64 base = (root & mask) & ~((1ULL << (t + 3)) - 1);
  *start = base + CUSAFE_LOCAL_PREFIX;
  u64 header = *(volatile u64 *)base;
  *size = header & ~CUSAFE_OUT_OF_SCOPE;
  u64 slot = epoch_slot();
  u64 page = RTPAGE;
  u32 cur = *(volatile unsigned char *)(page + CUSAFE_EPOCH_DEPTH_OFFSET + slot);
  u32 now = *(volatile unsigned char *)(page + CUSAFE_EPOCH_GEN_OFFSET +
                                        slot * CUSAFE_EPOCH_GENS_PER_SLOT + depth);
  if ((cur <= CUSAFE_DEPTH_MASK && depth > cur) || (now & CUSAFE_GEN_MASK) != gen)
    return CUSAFE_KIND_STALE_LOCAL;
  if (header & CUSAFE_OUT_OF_SCOPE)
    return CUSAFE_KIND_LOCAL_OUT_OF_SCOPE;
  u64 off = (addr & mask) - *start;
  u64 end = off + len;
  if (end > *size || end < len)
    return CUSAFE_KIND_OBJECT;
  return 0;
}

/* Bounds of the module's __shared__ arrays that have shared pseudo-pointers, defined by
 * the pass in every instrumented module (llvm-pass/src/shared.rs). */
u64 __cusafe_shared_start(u32 index);
u64 __cusafe_shared_size(u32 index);

/* The cold path of a check whose root may be a pseudo-pointer. The fast path sent the
 * access here because it looked bad or because its root is a pseudo-pointer (bits
 * 47..62 set); `size` is what the check compared against (the header word it loaded,
 * or the object's size). What the device saw is worked out here from the root's bits,
 * not passed in: fewer arguments, fewer registers live at the call. Pseudo-pointers
 * that pass their check return 0: the access goes ahead. Otherwise the access is
 * reported (trap mode never returns) and 1 tells the caller to skip it (recover mode). */
__attribute__((noinline, cold)) u32 __cusafe_slow(u64 addr, u64 root, u64 size, u32 len,
                                                  struct site *site) {
  int pseudo = !(site->flags & CUSAFE_OBJECT_SPACES) && (long long)root >= 0 &&
               ((root >> CUSAFE_PSEUDO_BIT) & 1);
  if (pseudo && ((root >> CUSAFE_SPACE_SHIFT) & 1)) {
    u32 index = (root >> CUSAFE_CLASS_SHIFT) & CUSAFE_CLASS_MASK;
    u64 start = __cusafe_shared_start(index), obj_size = __cusafe_shared_size(index);
    u64 real = addr & ((1ULL << CUSAFE_PSEUDO_BIT) - 1);
    u64 end = (real - start) + len;
    if (end <= obj_size && end >= len)
      return 0;
    __cusafe_report(CUSAFE_KIND_OBJECT, real, start, obj_size, len, CUSAFE_OBJECT_SHARED, site);
    return 1;
  }
  if (pseudo) {
    u64 start, obj_size;
    u32 kind = pseudo_check(addr, root, len, &start, &obj_size);
    if (kind == 0)
      return 0;
    __cusafe_report(kind, addr & ((1ULL << CUSAFE_PSEUDO_BIT) - 1), start, obj_size, len,
                    CUSAFE_OBJECT_LOCAL, site);
    return 1;
  }
  u32 kind = fail_kind(root, &size, site);
  __cusafe_report(kind, addr, root, size, len, 0, site);
  return 1;
}

/* ---- The device heap (format/src/devheap.rs) -------------------------------------- */

/* The real device allocator, for what the arena cannot serve. */
void *malloc(u64 size);
void free(void *p);

#define DH_ADDR(off) (RTPAGE + CUSAFE_DH_STATE_OFFSET + (off))
#define DH_U64(off) (*(volatile u64 *)DH_ADDR(off))
#define DH_U32(off) (*(volatile u32 *)DH_ADDR(off))
#define WORD(addr) (*(volatile u64 *)(addr))

/* A class's queue of freed blocks is guarded by a spin lock (independent thread
 * scheduling, sm_70 and later, lets threads of one warp take turns). */
static inline __attribute__((always_inline)) u64 queue_of(u64 t) {
  return DH_ADDR(CUSAFE_DH_QUEUES + t * CUSAFE_DH_QUEUE_BYTES);
}
static inline __attribute__((always_inline)) void queue_lock(u64 q) {
  while (__atomic_exchange_n((u32 *)q, 1u, __ATOMIC_RELAXED) != 0) {
  }
  __nvvm_membar_gl();
}
static inline __attribute__((always_inline)) void queue_unlock(u64 q) {
  __nvvm_membar_gl();
  /* An exchange, not an atomic store: LLVM 19's NVPTX backend cannot select those. */
  __atomic_exchange_n((u32 *)q, 0u, __ATOMIC_RELAXED);
}

/* Appends a freed block (its header already 0) to its class's queue. */
static void queue_push(u64 t, u64 base) {
  u64 q = queue_of(t);
  WORD(base + CUSAFE_DH_NEXT_OFFSET) = 0;
  queue_lock(q);
  u64 tail = WORD(q + 16);
  if (tail)
    WORD(tail + CUSAFE_DH_NEXT_OFFSET) = base;
  else
    WORD(q + 8) = base;
  WORD(q + 16) = base;
  queue_unlock(q);
}

/* Takes the block freed longest ago of class t, or 0. */
static u64 queue_pop(u64 t) {
  u64 q = queue_of(t);
  queue_lock(q);
  u64 head = WORD(q + 8);
  if (head) {
    u64 next = WORD(head + CUSAFE_DH_NEXT_OFFSET);
    WORD(q + 8) = next;
    if (!next)
      WORD(q + 16) = 0;
  }
  queue_unlock(q);
  return head;
}

/* Cuts a block of `bytes` (a power of two) from the arena: its offset, or ~0 when the
 * arena is used up. */
static u64 arena_cut(u64 bytes, u64 arena) {
  u64 *bump = (u64 *)DH_ADDR(CUSAFE_DH_BUMP);
  u64 cur = __atomic_load_n(bump, __ATOMIC_RELAXED);
  for (;;) {
    u64 o = (cur + bytes - 1) & ~(bytes - 1);
    if (o + bytes > arena || o + bytes < o)
      return ~0ULL;
    if (__atomic_compare_exchange_n(bump, &cur, o + bytes, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return o;
  }
}

/* Device malloc (every call in instrumented device code; new calls malloc): a tagged
 * block of the arena with the exact size in its header, the payload 256 bytes in.
 * Fresh blocks first, then the class's oldest freed one; what the arena cannot serve
 * (no arena mapped, too large, used up, size 0) goes to the real malloc, unchecked,
 * and what the real malloc served is counted (the runtime says so at exit). */
void *__cusafe_malloc(u64 size) {
  u64 arena = DH_U64(CUSAFE_DH_ARENA_BYTES);
  u64 need = size + CUSAFE_PREFIX + 1;
  if (arena && size && need > size) {
    u64 t = 64 - __builtin_clzll(need - 1) - 3;
    u64 first = DH_U32(CUSAFE_DH_FIRST_CLASS), last = DH_U32(CUSAFE_DH_LAST_CLASS);
    if (t < first)
      t = first;
    if (t <= last) {
      u64 bytes = 1ULL << (t + 3);
      u64 o = arena_cut(bytes, arena);
      u64 base = o != ~0ULL ? (t << CUSAFE_TAG_SHIFT) + CUSAFE_DH_ARENA_OFFSET + o : queue_pop(t);
      if (base) {
        WORD(base) = size;
        __nvvm_membar_gl();
        return (void *)(base + CUSAFE_PREFIX);
      }
    }
  }
  void *p = malloc(size);
  /* Counted when the real heap handed out memory: that memory goes unchecked. */
  if (p && arena && size)
    __atomic_fetch_add((u32 *)DH_ADDR(CUSAFE_DH_FALLBACKS), 1u, __ATOMIC_RELAXED);
  return p;
}

/* Device free (every call in instrumented device code; delete calls free). An arena
 * block must be freed at its payload start and once: its header goes to 0 (later
 * accesses fail their checks) and the block to its class's queue. A cusafe pointer
 * outside the arena (a cudaMalloc buffer), a pseudo-pointer or poisoned pointer, and
 * a shared, local or constant address are reported; other global addresses are the
 * real malloc's and go to the real free. */
void __cusafe_free(void *p, struct site *site) {
  u64 a = (u64)p;
  if (!a)
    return;
  u64 t = a >> CUSAFE_TAG_SHIFT;
  if (t - CUSAFE_MIN_TAG <= CUSAFE_MAX_TAG - CUSAFE_MIN_TAG) {
    if (a - (t << CUSAFE_TAG_SHIFT) < CUSAFE_DH_ARENA_OFFSET) {
      __cusafe_report(CUSAFE_KIND_INVALID_FREE, a, 0, CUSAFE_NO_HEADER, 0, 0, site);
      return;
    }
    u64 base = a & ~((1ULL << (t + 3)) - 1);
    if (a != base + CUSAFE_PREFIX) {
      __cusafe_report(CUSAFE_KIND_INVALID_FREE, a, base + CUSAFE_PREFIX, WORD(base), 0, 0, site);
      return;
    }
    if (__atomic_exchange_n((u64 *)base, 0ULL, __ATOMIC_RELAXED) == 0) {
      __cusafe_report(CUSAFE_KIND_DOUBLE_FREE, a, a, 0, 0, 0, site);
      return;
    }
    __nvvm_membar_gl();
    queue_push(t, base);
    return;
  }
  if ((a >> CUSAFE_PSEUDO_BIT) || !__nvvm_isspacep_global(p)) {
    __cusafe_report(CUSAFE_KIND_INVALID_FREE, a, 0, CUSAFE_NO_HEADER, 0, 0, site);
    return;
  }
  free(p);
}
