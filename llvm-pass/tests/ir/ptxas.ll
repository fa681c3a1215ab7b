; The instrumented module (runtime included) goes through llc and ptxas.
; RUN: %opt %s -o %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s < %t.ptx
; RUN: env CUSAFE_PASS_RECOVER=1 %opt %s -o %t.rec.ll
; RUN: %llc %t.rec.ll -o %t.rec.ptx
; RUN: %ptxas %t.rec.ptx -o %t.rec.cubin
; RUN: FileCheck %s --check-prefix=RECOVER < %t.rec.ptx
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
; Trap mode: the cold path is one call through the slot; the runtime's __cusafe_trap
; claims the site and traps.
; CHECK: .entry k(
; CHECK: ld.global.u64 {{.*}}__cusafe_trap_slot
; CHECK: callseq
; CHECK: .func __cusafe_trap(
; CHECK: atom.cas.b32
; CHECK: trap;
; Recover mode: the cold path is inlined: the site is claimed in place, no call.
; RECOVER: .entry k(
; RECOVER-NOT: call
; RECOVER: atom.global.cas.b32
; RECOVER-NOT: call
; RECOVER: trap;
