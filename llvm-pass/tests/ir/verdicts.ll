; The checks' verdicts, evaluated: the instrumented kernels are linked with calls that
; pass constant pointers and launch-time windows (verdicts-driver.ll.in), inlined and
; folded, so each call's check becomes "never fails" (no trap left) or "always fails"
; (the trap, with the address it reports). A 16-byte window at 4096; each form at its
; first and last in-bounds element and one element past either end: `a[i]` plain,
; `a[x + 1]` and `a[x - 1]` (a constant offset taken off the window's start, the
; last-byte form), `a[x + 1]` aligned to 1 (the bound form), a stencil row (a group of
; three neighbours), a struct field, a batch of three rows `a[(i + d) * n + j]` (`n` = 1
; and -1) and a strided group `a[x + k * m]`, k = 0..3 (its two ends; `m` = 1 and -1);
; a batch or group reports the first member that fails. An error in a check's
; arithmetic shows here as a trap where the access fits (a false positive) or none where
; it does not, as the sign error in ce2ac09's last-byte form of a folded offset did.
; Loop ranges are not covered: their base goes through an opaque copy (docs/pass.md)
; that folding cannot see through.
; RUN: %opt %s -o %t.ll
; RUN: %llvm_link -S %t.ll %S/verdicts-driver.ll.in -o %t.linked.ll
; RUN: %fold %t.linked.ll | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%pair = type { i32, float }

define void @plain(ptr %a, ptr %b, i32 %x) {
  %s = sext i32 %x to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 4
  store float %v, ptr %b, align 4
  ret void
}

define void @last_plus(ptr %a, ptr %b, i32 %x) {
  %x1 = add nsw i32 %x, 1
  %s = sext i32 %x1 to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 4
  store float %v, ptr %b, align 4
  ret void
}

define void @last_minus(ptr %a, ptr %b, i32 %x) {
  %x1 = add nsw i32 %x, -1
  %s = sext i32 %x1 to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 4
  store float %v, ptr %b, align 4
  ret void
}

define void @unaligned_plus(ptr %a, ptr %b, i32 %x) {
  %x1 = add nsw i32 %x, 1
  %s = sext i32 %x1 to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %v = load float, ptr %p, align 1
  store float %v, ptr %b, align 4
  ret void
}

define void @row(ptr %a, ptr %b, i32 %x) {
  %m = add nsw i32 %x, -1
  %sm = sext i32 %m to i64
  %pm = getelementptr inbounds float, ptr %a, i64 %sm
  %v0 = load float, ptr %pm, align 4
  %s0 = sext i32 %x to i64
  %p0 = getelementptr inbounds float, ptr %a, i64 %s0
  %v1 = load float, ptr %p0, align 4
  %p1 = getelementptr inbounds float, ptr %p0, i64 1
  %v2 = load float, ptr %p1, align 4
  %t = fadd float %v0, %v1
  %u = fadd float %t, %v2
  store float %u, ptr %b, align 4
  ret void
}

define void @field(ptr %a, ptr %b, i32 %x) {
  %s = sext i32 %x to i64
  %p = getelementptr inbounds %pair, ptr %a, i64 %s, i32 1
  %v = load float, ptr %p, align 4
  store float %v, ptr %b, align 4
  ret void
}

define void @rows(ptr %a, ptr %b, i32 %i, i32 %j, i32 %n) {
  %im = add nsw i32 %i, -1
  %ip = add nsw i32 %i, 1
  %r0 = mul nsw i32 %im, %n
  %r1 = mul nsw i32 %i, %n
  %r2 = mul nsw i32 %ip, %n
  %x0 = add nsw i32 %r0, %j
  %x1 = add nsw i32 %r1, %j
  %x2 = add nsw i32 %r2, %j
  %s0 = sext i32 %x0 to i64
  %s1 = sext i32 %x1 to i64
  %s2 = sext i32 %x2 to i64
  %p0 = getelementptr inbounds float, ptr %a, i64 %s0
  %p1 = getelementptr inbounds float, ptr %a, i64 %s1
  %p2 = getelementptr inbounds float, ptr %a, i64 %s2
  %v0 = load float, ptr %p0, align 4
  %v1 = load float, ptr %p1, align 4
  %v2 = load float, ptr %p2, align 4
  %t = fadd float %v0, %v1
  %u = fadd float %t, %v2
  store float %u, ptr %b, align 4
  ret void
}

define void @strided(ptr %a, ptr %b, i32 %x, i32 %m) {
  %sx = sext i32 %x to i64
  %sm = sext i32 %m to i64
  %p0 = getelementptr inbounds float, ptr %a, i64 %sx
  %v0 = load float, ptr %p0, align 4
  %p1 = getelementptr inbounds float, ptr %p0, i64 %sm
  %v1 = load float, ptr %p1, align 4
  %m2 = mul nsw i64 %sm, 2
  %p2 = getelementptr inbounds float, ptr %p0, i64 %m2
  %v2 = load float, ptr %p2, align 4
  %m3 = mul nsw i64 %sm, 3
  %p3 = getelementptr inbounds float, ptr %p0, i64 %m3
  %v3 = load float, ptr %p3, align 4
  %t = fadd float %v0, %v1
  %u = fadd float %t, %v2
  %w = fadd float %u, %v3
  store float %w, ptr %b, align 4
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6, !7}
!0 = !{ptr @plain, !"kernel", i32 1}
!1 = !{ptr @last_plus, !"kernel", i32 1}
!2 = !{ptr @last_minus, !"kernel", i32 1}
!3 = !{ptr @unaligned_plus, !"kernel", i32 1}
!4 = !{ptr @row, !"kernel", i32 1}
!5 = !{ptr @field, !"kernel", i32 1}
!6 = !{ptr @rows, !"kernel", i32 1}
!7 = !{ptr @strided, !"kernel", i32 1}

; CHECK-LABEL: define void @plain_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @plain_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @plain_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @plain_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @last_plus_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @last_plus_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @last_plus_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @last_plus_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @last_minus_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @last_minus_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @last_minus_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @last_minus_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @unaligned_plus_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @unaligned_plus_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @unaligned_plus_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @unaligned_plus_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @row_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @row_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @row_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @row_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @field_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @field_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @field_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4116, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @field_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @rows_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @rows_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @rows_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @rows_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @rows_down_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @rows_down_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @rows_down_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @rows_down_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @strided_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @strided_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @strided_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @strided_down_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @strided_down_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @strided_down_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
