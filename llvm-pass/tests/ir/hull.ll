; Index hulls (elim/hull.rs): consecutive neighbouring groups of one block whose bases are
; `gep T, P, sext x_r` (rows at run-time indices, conv3d's stencil) get one check of
; `[P + 4 * smin(x_r) + lo, P + 4 * smax(x_r) + hi)` (its first and last bytes, each as a
; one-byte range), failing also when `smin + c` or
; `smax + c` could wrap for an assumed split; its cold path checks every member at its
; real address, in program order, at its own site. Must not fire: a call that may stop
; the thread between rows, another root's check between rows, different pointers,
; recover-mode builds.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %calls %opt %s -o %t.calls.ll 2>%t.calls.stats
; RUN: %verify %t.ll
; RUN: %verify %t.calls.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: FileCheck %s --check-prefix=RECOVER < %t.calls.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; A function the pass cannot see into (it might stop the thread).
define void @may_stop() noinline {
  ret void
}

; Three rows x, x + n, x + 2n (computed one by one), each A[x_r - 1], A[x_r], A[x_r + 1]
; with plain adds (assumed not to wrap). One check: smin/smax of the three indices
; (the later two cloned before the first load), the hull from 4 * smin - 4 to
; 4 * smax + 8 as its first and last bytes (one compare each, no run-time length),
; or-ed with the wrap guard at both extremes; the cold path checks all nine loads at
; their real addresses.
; CHECK-LABEL: define void @rows(
; CHECK: select i1
; CHECK: select i1
; CHECK: [[FIRST:%.*]] = getelementptr i8, ptr addrspace(1) {{%.*}}, i64 -4
; CHECK: [[LAST:%.*]] = getelementptr i8, ptr addrspace(1) {{%.*}}, i64 7
; CHECK: ptrtoint ptr addrspace(1) [[FIRST]] to i64
; CHECK-NEXT: sub i64
; CHECK-NEXT: [[IN1:%.*]] = icmp ult i64
; CHECK-NEXT: ptrtoint ptr addrspace(1) [[LAST]] to i64
; CHECK-NEXT: sub i64
; CHECK-NEXT: [[IN2:%.*]] = icmp ult i64
; CHECK-NEXT: and i1 [[IN1]], [[IN2]]
; CHECK: br i1 {{%.*}}, label %[[COLD:.*]], label
; CHECK-COUNT-9: call void %cusafe.trap
; CHECK: load float
; CHECK-NOT: cusafe.trap
; CHECK-LABEL: define void @call_between(
; (The store after them is a check of its own: two checks.)
; STATS: function rows: 2 checks {{.*}} 8 merged (neighbouring)
; RECOVER: function rows: 4 checks {{.*}} 6 merged (neighbouring)
define void @rows(ptr addrspace(1) %A, i32 %x, i32 %n) {
entry:
  %x0m = add i32 %x, -1
  %i0m = sext i32 %x0m to i64
  %p0m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0m
  %a0 = load float, ptr addrspace(1) %p0m, align 4
  %i0 = sext i32 %x to i64
  %p0 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0
  %b0 = load float, ptr addrspace(1) %p0, align 4
  %x0p = add i32 %x, 1
  %i0p = sext i32 %x0p to i64
  %p0p = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0p
  %c0 = load float, ptr addrspace(1) %p0p, align 4
  %x1 = add i32 %x, %n
  %x1m = add i32 %x1, -1
  %i1m = sext i32 %x1m to i64
  %p1m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1m
  %a1 = load float, ptr addrspace(1) %p1m, align 4
  %i1 = sext i32 %x1 to i64
  %p1 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1
  %b1 = load float, ptr addrspace(1) %p1, align 4
  %x1p = add i32 %x1, 1
  %i1p = sext i32 %x1p to i64
  %p1p = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1p
  %c1 = load float, ptr addrspace(1) %p1p, align 4
  %x2 = add i32 %x1, %n
  %x2m = add i32 %x2, -1
  %i2m = sext i32 %x2m to i64
  %p2m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i2m
  %a2 = load float, ptr addrspace(1) %p2m, align 4
  %i2 = sext i32 %x2 to i64
  %p2 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i2
  %b2 = load float, ptr addrspace(1) %p2, align 4
  %x2p = add i32 %x2, 1
  %i2p = sext i32 %x2p to i64
  %p2p = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i2p
  %c2 = load float, ptr addrspace(1) %p2p, align 4
  %s0 = fadd float %a0, %b0
  %s1 = fadd float %s0, %c0
  %s2 = fadd float %s1, %a1
  %s3 = fadd float %s2, %b1
  %s4 = fadd float %s3, %c1
  %s5 = fadd float %s4, %a2
  %s6 = fadd float %s5, %b2
  %s7 = fadd float %s6, %c2
  store float %s7, ptr addrspace(1) %A, align 4
  ret void
}

; A call that may stop the thread between the rows: each row keeps its own check.
; STATS: function call_between: 3 checks {{.*}} 2 merged (neighbouring)
define void @call_between(ptr addrspace(1) %A, i32 %x, i32 %n) {
entry:
  %x0m = add i32 %x, -1
  %i0m = sext i32 %x0m to i64
  %p0m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0m
  %a0 = load float, ptr addrspace(1) %p0m, align 4
  %i0 = sext i32 %x to i64
  %p0 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0
  %b0 = load float, ptr addrspace(1) %p0, align 4
  call void @may_stop()
  %x1 = add i32 %x, %n
  %x1m = add i32 %x1, -1
  %i1m = sext i32 %x1m to i64
  %p1m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1m
  %a1 = load float, ptr addrspace(1) %p1m, align 4
  %i1 = sext i32 %x1 to i64
  %p1 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1
  %b1 = load float, ptr addrspace(1) %p1, align 4
  %s0 = fadd float %a0, %b0
  %s1 = fadd float %s0, %a1
  %s2 = fadd float %s1, %b1
  store float %s2, ptr addrspace(1) %A, align 4
  ret void
}

; Another root's check between the rows (which would stop the thread first): no hull
; (the same checks as the recover-mode build, which makes none). Rows of different
; pointers: no hull either.
; STATS: function other_between: 3 checks {{.*}} 3 merged (neighbouring)
; RECOVER: function other_between: 3 checks {{.*}} 3 merged (neighbouring)
; STATS: function two_pointers: 2 checks {{.*}} 2 merged (neighbouring)
define void @other_between(ptr addrspace(1) %A, ptr addrspace(1) %B, i32 %x, i32 %n) {
entry:
  %x0m = add i32 %x, -1
  %i0m = sext i32 %x0m to i64
  %p0m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0m
  %a0 = load float, ptr addrspace(1) %p0m, align 4
  %i0 = sext i32 %x to i64
  %p0 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0
  %b0 = load float, ptr addrspace(1) %p0, align 4
  %q = getelementptr inbounds float, ptr addrspace(1) %B, i64 %i0
  %o = load float, ptr addrspace(1) %q, align 4
  %x1 = add i32 %x, %n
  %x1m = add i32 %x1, -1
  %i1m = sext i32 %x1m to i64
  %p1m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1m
  %a1 = load float, ptr addrspace(1) %p1m, align 4
  %i1 = sext i32 %x1 to i64
  %p1 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1
  %b1 = load float, ptr addrspace(1) %p1, align 4
  %s0 = fadd float %a0, %b0
  %s1 = fadd float %s0, %a1
  %s2 = fadd float %s1, %b1
  %s3 = fadd float %s2, %o
  store float %s3, ptr addrspace(1) %B, align 4
  ret void
}

define void @two_pointers(ptr addrspace(1) %A, ptr addrspace(1) %B, i32 %x, i32 %n) {
entry:
  %x0m = add i32 %x, -1
  %i0m = sext i32 %x0m to i64
  %p0m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0m
  %a0 = load float, ptr addrspace(1) %p0m, align 4
  %i0 = sext i32 %x to i64
  %p0 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0
  %b0 = load float, ptr addrspace(1) %p0, align 4
  %x1 = add i32 %x, %n
  %x1m = add i32 %x1, -1
  %i1m = sext i32 %x1m to i64
  %p1m = getelementptr inbounds float, ptr addrspace(1) %B, i64 %i1m
  %a1 = load float, ptr addrspace(1) %p1m, align 4
  %i1 = sext i32 %x1 to i64
  %p1 = getelementptr inbounds float, ptr addrspace(1) %B, i64 %i1
  %b1 = load float, ptr addrspace(1) %p1, align 4
  %s0 = fadd float %a0, %b0
  %s1 = fadd float %s0, %a1
  %s2 = fadd float %s1, %b1
  ret void
}

; Rows whose indices differ in type (i32 and i16): no hull (their smin/smax would not
; be one type); each row keeps its group's check and the module verifies.
; STATS: function mixed_widths: 2 checks {{.*}} 2 merged (neighbouring)
define void @mixed_widths(ptr addrspace(1) %A, i32 %x, i16 %y) {
entry:
  %x0m = add i32 %x, -1
  %i0m = sext i32 %x0m to i64
  %p0m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0m
  %a0 = load float, ptr addrspace(1) %p0m, align 4
  %i0 = sext i32 %x to i64
  %p0 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i0
  %b0 = load float, ptr addrspace(1) %p0, align 4
  %y1m = add i16 %y, -1
  %i1m = sext i16 %y1m to i64
  %p1m = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1m
  %a1 = load float, ptr addrspace(1) %p1m, align 4
  %i1 = sext i16 %y to i64
  %p1 = getelementptr inbounds float, ptr addrspace(1) %A, i64 %i1
  %b1 = load float, ptr addrspace(1) %p1, align 4
  %s0 = fadd float %a0, %b0
  %s1 = fadd float %s0, %a1
  %s2 = fadd float %s1, %b1
  ret void
}
