; Loop ranges checked before one preheader's terminator share one branch: the or of
; their verdicts. The cold path compares each range again, in order, and reports the
; first that fails (recover mode: each that fails, then the loop runs); in trap mode the
; last range's report needs no compare. A lone range keeps its own branch
; (loop-range.ll); so does every range with CUSAFE_PASS_LOOP_SETS=0. A set holds at
; most two ranges: a third range of the same preheader starts a set of its own.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: FileCheck %s --check-prefix=TRAP < %t.ll
; RUN: %calls %opt %s 2>/dev/null | FileCheck %s
; RUN: env CUSAFE_PASS_LOOP_SETS=0 %calls %opt %s 2>/dev/null | FileCheck %s --check-prefix=OFF
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; STATS: kernel dot: 3 checks {{.*}} 2 loop ranges

; CHECK-LABEL: define void @dot(
; CHECK-LABEL: ph:
; CHECK: %[[N0:[0-9]+]] = xor i1 {{%.*}}, true
; CHECK: %[[N1:[0-9]+]] = xor i1 {{%.*}}, true
; CHECK-NEXT: %[[BAD:[0-9]+]] = or i1 %[[N0]], %[[N1]]
; CHECK-NEXT: br i1 %[[BAD]], label %[[COLD:[0-9]+]], label %[[GO:[0-9]+]], !prof
; CHECK: [[COLD]]:
; CHECK: br i1 {{%.*}}, label %[[R0:[0-9]+]], label %[[NEXT:[0-9]+]], !prof
; CHECK: [[R0]]:
; CHECK: {{%.*}} = call i32 @__cusafe_fail({{.*}}, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK: [[NEXT]]:
; CHECK: br i1 {{%.*}}, label %[[R1:[0-9]+]], label %{{[0-9]+}}, !prof
; CHECK: [[R1]]:
; CHECK: {{%.*}} = call i32 @__cusafe_fail({{.*}}, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.2 to ptr))
; CHECK: [[GO]]:
; CHECK-NEXT: br label %loop
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: exit.loopexit:

; OFF-LABEL: define void @dot(
; OFF-LABEL: ph:
; OFF: br i1 {{%.*}}, label %[[R0:[0-9]+]], label %[[NEXT:[0-9]+]], !prof
; OFF: [[R0]]:
; OFF-NOT: br i1
; OFF: call i32 @__cusafe_fail({{.*}} @__cusafe_site.1 to ptr))
; OFF: [[NEXT]]:
; OFF: br i1 {{%.*}}, label %[[R1:[0-9]+]], label %{{[0-9]+}}, !prof
; OFF: [[R1]]:
; OFF-NOT: br i1
; OFF: call i32 @__cusafe_fail({{.*}} @__cusafe_site.2 to ptr))

; Trap mode: the first range is compared again in the cold path, the second is then
; the one that failed.
; TRAP-LABEL: define void @dot(
; TRAP-LABEL: ph:
; TRAP: br i1 {{%.*}}, label %[[COLD:[0-9]+]], label %{{[0-9]+}}, !prof
; TRAP: [[COLD]]:
; TRAP: br i1 {{%.*}}, label %[[R0:[0-9]+]], label %[[LAST:[0-9]+]], !prof
; TRAP: [[R0]]:
; TRAP: unreachable
; TRAP: [[LAST]]:
; TRAP-NOT: br i1
; TRAP: unreachable
; Three ranges before one terminator: the first two share a branch, the third has its
; own.
; TRAP-LABEL: define void @triad(
; TRAP-LABEL: ph:
; TRAP: %[[N0:[0-9]+]] = xor i1 {{%.*}}, true
; TRAP: %[[N1:[0-9]+]] = xor i1 {{%.*}}, true
; TRAP-NEXT: %[[BAD:[0-9]+]] = or i1 %[[N0]], %[[N1]]
; TRAP-NEXT: br i1 %[[BAD]], label %{{[0-9]+}}, label %[[GO:[0-9]+]], !prof
; TRAP: [[GO]]:
; TRAP: %[[N2:[0-9]+]] = xor i1 {{%.*}}, true
; TRAP-NEXT: br i1 %[[N2]], label %{{[0-9]+}}, label %{{[0-9]+}}, !prof
; TRAP-LABEL: loop:
; TRAP-NOT: cusafe.trap
; TRAP: exit.loopexit:
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @dot(ptr %a, ptr %b, ptr %out, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %s = phi float [ 0.0, %ph ], [ %s1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %x = load float, ptr %p, align 4
  %y = load float, ptr %q, align 4
  %m = fmul float %x, %y
  %s1 = fadd float %s, %m
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  %r = phi float [ 0.0, %entry ], [ %s1, %loop ]
  store float %r, ptr %out, align 4
  ret void
}

define void @triad(ptr %a, ptr %b, ptr %c, ptr %out, i64 %n) {
entry:
  %go = icmp sgt i64 %n, 0
  br i1 %go, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %s = phi float [ 0.0, %ph ], [ %s2, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %r = getelementptr inbounds float, ptr %c, i64 %i
  %x = load float, ptr %p, align 4
  %y = load float, ptr %q, align 4
  %z = load float, ptr %r, align 4
  %m = fmul float %x, %y
  %s1 = fadd float %s, %m
  %s2 = fadd float %s1, %z
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  %t = phi float [ 0.0, %entry ], [ %s2, %loop ]
  store float %t, ptr %out, align 4
  ret void
}
!nvvm.annotations = !{!0, !1}
!0 = !{ptr @dot, !"kernel", i32 1}
!1 = !{ptr @triad, !"kernel", i32 1}
