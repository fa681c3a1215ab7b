; The instrumented module (runtime included) goes through llc and ptxas.
; RUN: %opt %s -o %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s < %t.ptx
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, i64 %i) {
  %p = getelementptr inbounds double, ptr %a, i64 %i
  %v = load double, ptr %p, align 8
  %old = atomicrmw fadd ptr %p, double %v monotonic, align 8
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
; The cold path is inlined: the site is claimed in place, no call.
; CHECK: .entry k(
; CHECK-NOT: call
; CHECK: atom.global.cas.b32
; CHECK-NOT: call
; CHECK: trap;
