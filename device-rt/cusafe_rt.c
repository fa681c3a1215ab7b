/* cusafe device runtime: the cold report path of every check.
 *
 * Freestanding C compiled to NVPTX bitcode (llvm-pass/build.rs) and linked by the pass
 * into every instrumented device module. The CUSAFE_* constants come from the formats
 * crate (format/src/{rtpage,report}.rs) as -D flags: do not hard-code them here.
 *
 * A check that fails calls __cusafe_report. The first thread to fail at a site writes
 * one record into the report page (pinned host memory, so it survives a trap), fences
 * system-wide, marks the record complete and the site done. Then, in trap mode, every
 * failing thread traps (after waiting for its site's record, so the trap cannot cut the
 * record short); in recover mode it returns and the instrumented code skips the access.
 */

typedef unsigned long long u64;
typedef unsigned int u32;

#define RT_U64(off) (*(volatile u64 *)(CUSAFE_RTPAGE_ADDR + (off)))
#define RT_U32(off) (*(volatile u32 *)(CUSAFE_RTPAGE_ADDR + (off)))

enum { SITE_FREE = 0, SITE_WRITING = 1, SITE_DONE = 2 };

static inline __attribute__((always_inline)) void put32(volatile unsigned char *rec, u32 off, u32 v) { *(volatile u32 *)(rec + off) = v; }
static inline __attribute__((always_inline)) void put64(volatile unsigned char *rec, u32 off, u64 v) { *(volatile u64 *)(rec + off) = v; }

static inline __attribute__((always_inline)) void write_record(u32 kind, u64 addr, u64 root, u64 header_size, u32 access_size,
                         u32 flags, const char *loc) {
  u32 idx = __atomic_fetch_add((u32 *)(CUSAFE_RTPAGE_ADDR + CUSAFE_RTPAGE_CLAIMED), 1u,
                               __ATOMIC_RELAXED);
  if (idx >= CUSAFE_PAGE_CAPACITY)
    return;
  volatile unsigned char *page = (volatile unsigned char *)RT_U64(CUSAFE_RTPAGE_REPORT_PTR);
  volatile unsigned char *rec = page + CUSAFE_PAGE_HEADER_BYTES + (u64)idx * CUSAFE_RECORD_BYTES;
  put32(rec, 0, 1);
  put32(rec, 4, kind);
  put64(rec, 8, addr);
  put64(rec, 16, root);
  put64(rec, 24, header_size);
  put32(rec, 32, access_size);
  put32(rec, 36, flags);
  put32(rec, 40, __nvvm_read_ptx_sreg_tid_x());
  put32(rec, 44, __nvvm_read_ptx_sreg_tid_y());
  put32(rec, 48, __nvvm_read_ptx_sreg_tid_z());
  put32(rec, 52, __nvvm_read_ptx_sreg_ctaid_x());
  put32(rec, 56, __nvvm_read_ptx_sreg_ctaid_y());
  put32(rec, 60, __nvvm_read_ptx_sreg_ctaid_z());
  u32 i = 0;
  for (; i + 1 < CUSAFE_LOC_BYTES && loc[i]; ++i)
    rec[CUSAFE_LOC_OFFSET + i] = (unsigned char)loc[i];
  rec[CUSAFE_LOC_OFFSET + i] = 0;
  __nvvm_membar_sys();
  put32(rec, 0, CUSAFE_STATE_COMPLETE);
  __nvvm_membar_sys();
}

/* kind: format::report::DeviceKind; site: a per-check-site u32 in global memory. */
__attribute__((noinline, cold)) void __cusafe_report(u32 kind, u64 addr, u64 root,
                                                     u64 header_size, u32 access_size,
                                                     u32 flags, const char *loc, u32 *site) {
  u32 expected = SITE_FREE;
  if (__atomic_compare_exchange_n(site, &expected, SITE_WRITING, 0, __ATOMIC_RELAXED,
                                  __ATOMIC_RELAXED)) {
    write_record(kind, addr, root, header_size, access_size, flags, loc);
    __atomic_store_n(site, SITE_DONE, __ATOMIC_RELAXED);
    __nvvm_membar_sys();
  }
  if (RT_U32(CUSAFE_RTPAGE_FLAGS) & CUSAFE_FLAG_RECOVER)
    return;
  /* Trap mode: give this site's writer a bounded time to finish its record. */
  for (u32 spin = 0; spin < (1u << 24) && __atomic_load_n(site, __ATOMIC_RELAXED) != SITE_DONE; ++spin)
    ;
  __builtin_trap();
}
