; A fast-path check of an address `q + c` (a constant byte offset `c` from its base,
; here the constant of a signed index `sext (x +nsw 1)`) against a window whose start is
; a kernel parameter (a launch-time window) compares `q` against the start less `c`,
; built once at the entry: the access keeps `c` as its own immediate offset, and no
; register holds `q + c` for the check alone. The cold path compares the address itself.
; Must not fire: an index whose addition may wrap (no `nsw`), a root whose window is
; worked out in the kernel (its start is an instruction), a zero-extended sum of two
; terms (codegen keeps it narrow, so a rebuilt wide sum would be extra arithmetic).
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; `a[x + 1]`, aligned: the last byte of `a + 4 * x + 4`, `(a + 4 * x + 4) - (start - 3)`,
; is compared as `(a + 4 * x) - (start - 7)`: the same value (a start less 3 - 4 = -1
; would move the window 8 bytes and report every in-bounds access near its end).
; CHECK-LABEL: define void @row(
; CHECK: [[SL:%cusafe.start.less[0-9]*]] = sub i64 %cusafe.start.0, 7
; CHECK: [[X:%.*]] = sext i32 %x to i64
; CHECK-NEXT: [[Q:%.*]] = getelementptr float, ptr %a, i64 [[X]]
; CHECK-NEXT: [[QI:%.*]] = ptrtoint ptr [[Q]] to i64
; CHECK-NEXT: [[LAST:%.*]] = sub i64 [[QI]], [[SL]]
; CHECK-NEXT: icmp ult i64 [[LAST]], %cusafe.limit.0
; The cold path: the address itself.
; CHECK: [[PI:%.*]] = ptrtoint ptr %p to i64
; CHECK-NEXT: sub i64 [[PI]], %cusafe.start.0
; CHECK: call void %cusafe.trap
; CHECK: load float, ptr %p, align 4
define void @row(ptr %a, ptr %b, i32 %x) {
  %x1 = add nsw i32 %x, 1
  %s = sext i32 %x1 to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 4
  store float %v, ptr %b, align 4
  ret void
}

; `a[x + y - 1]` (nsw), a group of 12 bytes from it (a stencil's row): `(a + 4 * (sext x
; + sext y)) - (start + 4)` against the bound for 12 bytes.
; CHECK-LABEL: define void @stencil_row(
; CHECK: [[S4:%cusafe.start.less[0-9]*]] = sub i64 %cusafe.start.0, -4
; CHECK: [[SX:%.*]] = sext i32 %x to i64
; CHECK-NEXT: [[SY:%.*]] = sext i32 %y to i64
; CHECK-NEXT: [[SUM:%.*]] = add i64 [[SX]], [[SY]]
; CHECK-NEXT: [[Q:%.*]] = getelementptr float, ptr %a, i64 [[SUM]]
; CHECK-NEXT: [[QI:%.*]] = ptrtoint ptr [[Q]] to i64
; CHECK-NEXT: [[OFF:%.*]] = sub i64 [[QI]], [[S4]]
; CHECK-NEXT: icmp ult i64 [[OFF]], %cusafe.bound
define void @stencil_row(ptr %a, ptr %b, i32 %x, i32 %y) {
  %xy = add nsw i32 %x, %y
  %m = add nsw i32 %xy, -1
  %sm = sext i32 %m to i64
  %pm = getelementptr inbounds float, ptr %a, i64 %sm
  %v0 = load float, ptr %pm, align 4
  %s0 = sext i32 %xy to i64
  %p0 = getelementptr inbounds float, ptr %a, i64 %s0
  %v1 = load float, ptr %p0, align 4
  %p1 = getelementptr inbounds float, ptr %p0, i64 1
  %v2 = load float, ptr %p1, align 4
  %t = fadd float %v0, %v1
  %u = fadd float %t, %v2
  store float %u, ptr %b, align 4
  ret void
}

; No `nsw`: `sext (x + 1)` is not `sext x + 1`; the address itself.
; CHECK-LABEL: define void @wraps(
; CHECK-NOT: getelementptr float, ptr %a
; CHECK: [[PI:%.*]] = ptrtoint ptr %p to i64
; CHECK: sub i64 [[PI]], %cusafe.start.less
; CHECK: ret void
define void @wraps(ptr %a, ptr %b, i32 %x) {
  %x1 = add i32 %x, 1
  %s = sext i32 %x1 to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 4
  store float %v, ptr %b, align 4
  ret void
}

; A root loaded in the kernel: its start is worked out from its header, not a uniform
; parameter; the address itself.
; CHECK-LABEL: define void @loaded(
; CHECK: %cusafe.size = load i64
; CHECK-NOT: getelementptr float, ptr %a
; CHECK: [[PI:%.*]] = ptrtoint ptr %p to i64
; CHECK: ret void
define void @loaded(ptr %pp, i32 %x) {
  %a = load ptr, ptr %pp, align 8
  %x1 = add nsw i32 %x, 1
  %s = sext i32 %x1 to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 4
  store float %v, ptr %pp, align 4
  ret void
}

; `a[zext (x + y + 1)]` (nuw): codegen computes `x + y` narrow, so no wide rebuild.
; CHECK-LABEL: define void @unsigned_sum(
; CHECK-NOT: getelementptr float, ptr %a
; CHECK: [[PI:%.*]] = ptrtoint ptr %p to i64
; CHECK: ret void
define void @unsigned_sum(ptr %a, ptr %b, i32 %x, i32 %y) {
  %xy = add nuw i32 %x, %y
  %x1 = add nuw i32 %xy, 1
  %s = zext i32 %x1 to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 4
  store float %v, ptr %b, align 4
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4}
!0 = !{ptr @row, !"kernel", i32 1}
!1 = !{ptr @stencil_row, !"kernel", i32 1}
!2 = !{ptr @wraps, !"kernel", i32 1}
!3 = !{ptr @loaded, !"kernel", i32 1}
!4 = !{ptr @unsigned_sum, !"kernel", i32 1}
