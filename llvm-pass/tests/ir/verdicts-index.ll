; Index groups' verdicts, evaluated as in verdicts.ll: the instrumented kernel (two
; loads at one index through two windowed parameters, then a store) is linked with
; calls that pass constant pointers, windows and the group's launch bounds `lo` and
; `span` as the runtime works them out (`cusafe_format::launch::index_bounds`: the
; indices at which every member's element fits its window; its unit test
; `index_bounds_of_the_verdicts_driver` pins these values), inlined and folded. A
; failing index reports the first member that does not fit, at its own window. Two
; set-ups: `a` (16 bytes at 4096) and `c` (12 bytes at 12288) at their starts (x in
; [0, 3)), and `a` 8 bytes into its window (x in [0, 2)). The last call passes bounds
; narrower than the windows, which `index_bounds` never gives: both members fit, yet
; the call reaches the cold path, so the fast path is the index compare alone; the
; batch's cold path, exact for consistent bounds, then reports its last member (the
; store) without comparing it.
; RUN: %opt %s -o %t.ll
; RUN: %llvm_link -S %t.ll %S/verdicts-index-driver.ll.in -o %t.linked.ll
; RUN: %fold %t.linked.ll | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @pair(ptr %a, ptr %c, ptr %b, i32 %x) {
  %s = sext i32 %x to i64
  %p = getelementptr inbounds float, ptr %a, i64 %s
  %q = getelementptr inbounds float, ptr %c, i64 %s
  %v = load float, ptr %p, align 4
  %w = load float, ptr %q, align 4
  %t = fadd float %v, %w
  store float %t, ptr %b, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @pair, !"kernel", i32 1}
; CHECK-LABEL: define void @pair_first(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @pair_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @pair_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 12300, i64 12288, i64 12, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @pair_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @inner_last(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @inner_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4112, i64 4096, i64 16, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @inner_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 12284, i64 12288, i64 12, i32 4,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @narrow_bounds(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 8192, i64 8192, i64 4, i32 4,
; CHECK-NEXT: unreachable
