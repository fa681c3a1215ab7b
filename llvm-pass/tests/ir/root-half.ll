; The root half of a heap check, built in the function for a root the launch gives no
; window (docs/formats.md, "The check"): the class from the tag, the block base, the
; header (at the base, or for slotted classes, blocks of 4 MiB and up, in the base's
; 16-byte slot of the shared header granule) and the payload start (base + 256, or
; base + 2 MiB for slotted classes).
; RUN: %calls %opt_noelim %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define i32 @get(ptr addrspace(1) %a, i64 %i) {
  %p = getelementptr inbounds i32, ptr addrspace(1) %a, i64 %i
  %v = load i32, ptr addrspace(1) %p, align 4
  ret i32 %v
}
; CHECK-LABEL: define i32 @get(
; CHECK: [[T:%.*]] = lshr i64 [[RI:%.*]], 41
; CHECK-NEXT: [[T1:%.*]] = sub i64 [[T]], 1
; CHECK-NEXT: [[IN:%.*]] = icmp ult i64 [[T1]], 35
; CHECK-NEXT: [[SH:%.*]] = add i64 [[T]], 3
; CHECK-NEXT: [[SHM:%.*]] = and i64 [[SH]], 63
; CHECK-NEXT: [[MASK:%.*]] = shl i64 -1, [[SHM]]
; CHECK-NEXT: [[BASE:%.*]] = and i64 [[RI]], [[MASK]]
; Slotted from class 19; slot = (base >> 22) mod 2^17, 16 bytes each.
; CHECK-NEXT: [[SLOTTED:%.*]] = icmp uge i64 [[T]], 19
; CHECK-NEXT: [[S1:%.*]] = lshr i64 [[BASE]], 18
; CHECK-NEXT: [[S2:%.*]] = and i64 [[S1]], 2097136
; CHECK-NEXT: [[AT:%.*]] = or i64 [[BASE]], [[S2]]
; CHECK-NEXT: [[HDR:%.*]] = select i1 [[SLOTTED]], i64 [[AT]], i64 [[BASE]]
; CHECK-NEXT: [[HA:%.*]] = select i1 [[IN]], i64 [[HDR]], i64 ptrtoint (ptr addrspace(1) @__cusafe_no_header to i64)
; CHECK-NEXT: %cusafe.hdr = inttoptr i64 [[HA]] to ptr addrspace(1)
; CHECK-NEXT: %cusafe.size = load i64, ptr addrspace(1) %cusafe.hdr, align 8
; CHECK: [[PRE:%.*]] = select i1 [[SLOTTED]], i64 2097152, i64 256
; CHECK: [[PAY:%.*]] = add i64 [[BASE]], [[PRE]]
; CHECK: [[START:%.*]] = select i1 [[IN]], i64 [[PAY]], i64 {{%.*}}
; CHECK: [[SL:%.*]] = sub i64 [[START]], 3
; CHECK: [[LIMIT:%.*]] = select i1 [[IN]], i64 %cusafe.size, i64 {{%.*}}
; The offset the report passes, then the last byte's, compared against the limit.
; CHECK: [[A0:%.*]] = ptrtoint ptr addrspace(1) %p to i64
; CHECK-NEXT: sub i64 [[A0]], [[START]]
; CHECK-NEXT: [[AI:%.*]] = ptrtoint ptr addrspace(1) %p to i64
; CHECK-NEXT: [[LAST:%.*]] = sub i64 [[AI]], [[SL]]
; CHECK: icmp ult i64 [[LAST]], [[LIMIT]]
