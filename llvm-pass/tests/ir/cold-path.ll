; Which cold path a check gets. A module with an escaping local makes pseudo-pointers,
; so a check whose root may hold one calls __cusafe_slow (out of line: it finishes
; pseudo-pointer checks). Roots the host wrote cannot: kernel pointer arguments,
; pointers loaded from a kernel's by-value argument or from __constant__ memory. Their
; checks, and object checks, call __cusafe_trap in trap-mode builds (the default): an
; indirect call (ptxas would inline a direct one) that never returns, so the cold block
; ends in unreachable. Recover-mode builds (--cusafe-recover) get __cusafe_fail inlined
; into the cold block instead: no call, the site claimed in place, the trap there.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: env CUSAFE_PASS_RECOVER=1 %opt %s -o %t.rec.ll
; RUN: %verify %t.rec.ll
; RUN: FileCheck %s --check-prefix=RECOVER < %t.rec.ll
; RUN: %calls %opt_noelim %s | FileCheck %s --check-prefix=CALLS
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.args = type { ptr, i32 }

@table = addrspace(4) externally_initialized global ptr null, align 8

; A device function: its parameter may be the local's pseudo-pointer.
define void @fill(ptr %p, i64 %n) {
  %q = getelementptr inbounds i32, ptr %p, i64 %n
  store i32 7, ptr %q, align 4
  ret void
}

define void @k(ptr %a, ptr byval(%struct.args) align 8 %s, ptr %pp, i64 %i) {
  %arr = alloca [8 x i32], align 4
  call void @fill(ptr %arr, i64 %i)
  %x = getelementptr inbounds float, ptr %a, i64 %i
  store float 1.0, ptr %x, align 4
  %fromval = load ptr, ptr %s, align 8
  %y = getelementptr inbounds float, ptr %fromval, i64 %i
  store float 2.0, ptr %y, align 4
  %fromconst = load ptr, ptr addrspacecast (ptr addrspace(4) @table to ptr), align 8
  %z = getelementptr inbounds float, ptr %fromconst, i64 %i
  store float 3.0, ptr %z, align 4
  %frommem = load ptr, ptr %pp, align 8
  %w = getelementptr inbounds float, ptr %frommem, i64 %i
  store float 4.0, ptr %w, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; CALLS-LABEL: define void @fill(
; CALLS: call i32 @__cusafe_slow(
; CALLS-LABEL: define void @k(
; CALLS: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CALLS: store float 1.000000e+00
; The loads of the pointers themselves: roots %s and the __constant__ global.
; CALLS: call i32 @__cusafe_fail({{.*}}, i32 8, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.2 to ptr))
; CALLS: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.3 to ptr))
; CALLS: store float 2.000000e+00
; CALLS: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.4 to ptr))
; CALLS: store float 3.000000e+00
; CALLS: call i32 @__cusafe_fail({{.*}}, i32 8, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.5 to ptr))
; The root loaded from %pp (global memory) may be a pseudo-pointer.
; CALLS: call i32 @__cusafe_slow({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.6 to ptr))
; CALLS: store float 4.000000e+00
; CALLS: define internal {{.*}} @__cusafe_fail(
; CALLS: define internal {{.*}} @__cusafe_slow(

; Trap mode: calls through the slot, nothing after them; no __cusafe_fail at all.
; CHECK-NOT: @__cusafe_fail(
; CHECK-LABEL: define void @k(
; CHECK: [[T:%cusafe.trap[0-9]*]] = load ptr, ptr addrspace(1) @__cusafe_trap_slot
; CHECK-NEXT: call void [[T]]({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK-NEXT: unreachable
; CHECK: store float 1.000000e+00
; CHECK-NOT: @__cusafe_fail(
; CHECK: define internal {{.*}} @__cusafe_trap(
; CHECK: define internal {{.*}} @__cusafe_slow(

; Recover mode, inlined: no call of __cusafe_fail is left, nor its definition.
; RECOVER-NOT: call {{.*}} @__cusafe_fail(
; RECOVER-LABEL: define void @k(
; RECOVER: cmpxchg ptr addrspacecast (ptr addrspace(1) @__cusafe_site.
; RECOVER: call void @llvm.trap()
; RECOVER: store float 1.000000e+00
; RECOVER-NOT: define {{.*}} @__cusafe_fail(
; RECOVER-NOT: define {{.*}} @__cusafe_trap(
; RECOVER: define internal {{.*}} @__cusafe_slow(

; PTX-LABEL: .entry k(
; PTX: ld.global.u64 {{.*}}__cusafe_trap_slot
; PTX: callseq
; PTX: .func __cusafe_trap(
; PTX: atom.cas.b32
; PTX: trap;
