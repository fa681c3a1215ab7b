; Loop-invariant verdicts (elim/mod.rs): a check in a loop whose inputs are all defined
; outside it has its compares built in the preheader; the branch stays at the access, so
; a loop that runs no trip (or a trip that skips the access) reports nothing, and the
; cold path computes each member's verdict again at the access. Must not fire: an
; address that changes per trip, a root loaded in the loop, recover-mode builds.
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

@tile = internal addrspace(3) global [256 x float] undef, align 4

declare void @llvm.nvvm.barrier0()

; hotspot's shape: tile[tx] and tile[tx + 1] (one neighbouring group) read and tile[tx]
; written on the trips where i < tx, between barriers. The union [4 tx, 4 tx + 8) is
; compared in the preheader (entry), which then goes on to the loop unconditionally;
; the body branches on that predicate.
; CHECK-LABEL: define void @steps(
; CHECK: entry:
; CHECK: icmp ult i64 {{%.*}}, 1017
; CHECK-NEXT: [[BAD:%.*]] = xor i1
; CHECK-NEXT: br label %loop
; CHECK: body:
; CHECK-NEXT: br i1 [[BAD]], label %[[COLD:.*]], label
; The cold path: each member compared again, reported at its own site.
; CHECK: [[COLD]]:
; CHECK: icmp ult i64 {{%.*}}, 1021
; CHECK: call void %cusafe.trap({{.*}} @__cusafe_site.0
; CHECK: icmp ult i64 {{%.*}}, 1021
; CHECK: call void %cusafe.trap1({{.*}} @__cusafe_site.1
; CHECK: load float, ptr addrspace(3) %p
; STATS: kernel steps: 1 checks {{.*}} 1 merged (neighbouring){{.*}} 1 loop-invariant verdicts
; RECOVER: kernel steps: {{.*}} 0 loop-invariant verdicts
define void @steps(i32 %tx, i32 %n) {
entry:
  %x = zext i32 %tx to i64
  %p = getelementptr inbounds [256 x float], ptr addrspace(3) @tile, i64 0, i64 %x
  %q = getelementptr inbounds float, ptr addrspace(3) %p, i64 1
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %c = icmp ult i32 %i, %tx
  br i1 %c, label %body, label %latch
body:
  %a = load float, ptr addrspace(3) %p, align 4
  %b = load float, ptr addrspace(3) %q, align 4
  %s = fadd float %a, %b
  store float %s, ptr addrspace(3) %p, align 4
  br label %latch
latch:
  call void @llvm.nvvm.barrier0()
  %i1 = add i32 %i, 1
  %d = icmp slt i32 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; tile[i] on the trips where i < tx: the address changes per trip, the check stays.
; STATS: kernel varying: 1 checks {{.*}} 0 loop-invariant verdicts
define void @varying(i32 %tx, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %c = icmp ult i32 %i, %tx
  br i1 %c, label %body, label %latch
body:
  %x = zext i32 %i to i64
  %p = getelementptr inbounds [256 x float], ptr addrspace(3) @tile, i64 0, i64 %x
  store float 0.0, ptr addrspace(3) %p, align 4
  br label %latch
latch:
  %i1 = add i32 %i, 1
  %d = icmp slt i32 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; A heap root loaded in the loop: its root half (header load) is built there, and so
; is the store's compare that needs it. (The load of the root itself, through the
; argument %pp, reads the same slot on every trip of a loop that runs at least once: a
; loop range of that one slot, checked in the preheader; loop-range.ll.)
; CHECK-LABEL: define void @loaded_root(
; CHECK: loop:
; CHECK: %r = load ptr
; CHECK: %cusafe.size{{[0-9]*}} = load i64
; CHECK: store float
; STATS: kernel loaded_root: 2 checks {{.*}} 1 loop ranges {{.*}} 0 loop-invariant verdicts
define void @loaded_root(ptr %pp, i64 %k, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %r = load ptr, ptr %pp, align 8
  %p = getelementptr inbounds float, ptr %r, i64 %k
  store float 0.0, ptr %p, align 4
  %i1 = add i32 %i, 1
  %d = icmp slt i32 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

!nvvm.annotations = !{!0, !1, !2}
!0 = !{ptr @steps, !"kernel", i32 1}
!1 = !{ptr @varying, !"kernel", i32 1}
!2 = !{ptr @loaded_root, !"kernel", i32 1}
