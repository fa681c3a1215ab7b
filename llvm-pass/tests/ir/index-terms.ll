; A rebuilt index adds its terms in the order its additions name them (operand 0
; first), so that the output is the same from one run of the pass to the next: an
; order by value handle (heap addresses) once made the PTX of one input differ
; between runs. Here the handle order of the arguments (%a before %b) is the
; reverse of the addition's.
; RUN: env CUSAFE_PASS_LAUNCH_BOUNDS=0 %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; The neighbours p[b + a] and p[b + a + 1] share the base p + (b + a), rebuilt in the
; cold path from the terms b, a.
; CHECK-LABEL: define void @terms(
; CHECK: [[B:%[0-9]+]] = sext i32 %b to i64
; CHECK-NEXT: [[A:%[0-9]+]] = sext i32 %a to i64
; CHECK-NEXT: add i64 [[B]], [[A]]
define void @terms(ptr %p, i32 %a, i32 %b) {
  %s = add nsw i32 %b, %a
  %s1 = add nsw i32 %s, 1
  %x0 = sext i32 %s to i64
  %x1 = sext i32 %s1 to i64
  %g0 = getelementptr inbounds float, ptr %p, i64 %x0
  %g1 = getelementptr inbounds float, ptr %p, i64 %x1
  %v0 = load float, ptr %g0, align 4
  %v1 = load float, ptr %g1, align 4
  %v = fadd float %v0, %v1
  store float %v, ptr %p, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @terms, !"kernel", i32 1}
