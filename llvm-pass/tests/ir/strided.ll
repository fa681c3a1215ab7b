; Strided groups (elim/stride.rs): the accesses of one block at p + m * s + off, s a run-time
; 32-bit value extended to 64 bits, m constant (an unrolled column walk), get one branch
; on the checks of the two outermost members before the first; the cold path checks the
; members one by one at their own sites. Must not fire: a call between members, a
; stride that is not a 32-bit value, members with different constant offsets.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %calls %opt %s -o %t.calls.ll
; RUN: %verify %t.ll
; RUN: %verify %t.calls.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: FileCheck %s --check-prefix=TRAP < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @external() noinline {
  ret void
}

; Rows 0, 1, 2 and 3 of a column (p, p + 4s, p + 8s, p + 12s): one branch on the checks
; of rows 0 and 3, the group's two ends (s may be negative; every member lies between
; them, and the window is one interval), each a member's own one-compare check; no
; run-time hull (no min/max selects), then the four loads with no branch between them.
; CHECK-LABEL: define void @column(
; CHECK: [[S0:%.*]] = mul i64 %s, 0
; CHECK: [[A:%.*]] = getelementptr i8, ptr %p, i64
; CHECK: [[S3:%.*]] = mul i64 %s, 12
; CHECK: [[Z:%.*]] = getelementptr i8, ptr %p, i64
; CHECK-NOT: select
; CHECK: ptrtoint ptr [[A]] to i64
; CHECK: [[INA:%.*]] = icmp ult i64 {{.*}}, %cusafe.limit.0
; CHECK-NOT: select
; CHECK: ptrtoint ptr [[Z]] to i64
; CHECK: [[INZ:%.*]] = icmp ult i64 {{.*}}, %cusafe.limit.0
; CHECK: [[BOTH:%.*]] = and i1 [[INA]], [[INZ]]
; CHECK: [[BAD:%.*]] = xor i1 [[BOTH]], true
; CHECK: br i1 [[BAD]]
; The cold path: each of the four members at its own site.
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.2 to ptr))
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.3 to ptr))
; CHECK-NOT: call i32 @__cusafe_fail(
; CHECK: ret void
; In a trap-mode build the four loads follow with no conditional branch between them.
; TRAP-LABEL: define void @column(
; TRAP: load i32
; TRAP-NOT: br i1
; TRAP: load i32
; TRAP-NOT: br i1
; TRAP: load i32
; TRAP-NOT: br i1
; TRAP: load i32
; TRAP: ret void
; STATS: kernel column: 1 checks {{.*}} 3 merged (neighbouring)
define void @column(ptr %p, i32 %cols, ptr addrspace(3) %out) {
  %s = sext i32 %cols to i64
  %v0 = load i32, ptr %p, align 4
  %p1 = getelementptr i32, ptr %p, i64 %s
  %v1 = load i32, ptr %p1, align 4
  %i2 = shl nsw i64 %s, 1
  %p2 = getelementptr i32, ptr %p, i64 %i2
  %v2 = load i32, ptr %p2, align 4
  %i3 = mul nsw i64 %s, 3
  %p3 = getelementptr i32, ptr %p, i64 %i3
  %v3 = load i32, ptr %p3, align 4
  %a = add i32 %v0, %v1
  %b = add i32 %v2, %v3
  %c = add i32 %a, %b
  store i32 %c, ptr addrspace(3) %out, align 4
  ret void
}

; A call that may not return between rows 1 and 2: rows 0-1 and rows 2-3 are two groups.
; STATS: kernel call_between: 2 checks {{.*}} 2 merged (neighbouring)
define void @call_between(ptr %p, i32 %cols) {
  %s = sext i32 %cols to i64
  %p1 = getelementptr i32, ptr %p, i64 %s
  store i32 0, ptr %p, align 4
  store i32 1, ptr %p1, align 4
  call void @external()
  %i2 = shl nsw i64 %s, 1
  %p2 = getelementptr i32, ptr %p, i64 %i2
  %i3 = mul nsw i64 %s, 3
  %p3 = getelementptr i32, ptr %p, i64 %i3
  store i32 2, ptr %p2, align 4
  store i32 3, ptr %p3, align 4
  ret void
}

; A 64-bit stride could make the walk wrap around the address space: no group.
; STATS: kernel wide_stride: 3 checks {{.*}} 0 merged (neighbouring)
define void @wide_stride(ptr %p, i64 %s) {
  %p1 = getelementptr i32, ptr %p, i64 %s
  %i2 = shl nsw i64 %s, 1
  %p2 = getelementptr i32, ptr %p, i64 %i2
  store i32 0, ptr %p, align 4
  store i32 1, ptr %p1, align 4
  store i32 2, ptr %p2, align 4
  ret void
}

; Different constant offsets on top (p + 4s and p + 8s + 4) are different groups
; (the hull of the outermost members would not be set by members).
; STATS: kernel offsets: 2 checks {{.*}} 0 merged (neighbouring)
define void @offsets(ptr %p, i32 %cols) {
  %s = sext i32 %cols to i64
  %p1 = getelementptr i32, ptr %p, i64 %s
  %i2 = shl nsw i64 %s, 1
  %p2 = getelementptr i32, ptr %p, i64 %i2
  %q2 = getelementptr i8, ptr %p2, i64 4
  store i32 1, ptr %p1, align 4
  store i32 2, ptr %q2, align 4
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3}
!0 = !{ptr @column, !"kernel", i32 1}
!1 = !{ptr @call_between, !"kernel", i32 1}
!2 = !{ptr @wide_stride, !"kernel", i32 1}
!3 = !{ptr @offsets, !"kernel", i32 1}
