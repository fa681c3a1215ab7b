; Batches: the checks of one block share one branch; the cold path looks at them one
; by one, in program order. A call that may stop the thread (or a trap) ends a batch,
; and so does a check whose values are not computed yet at the batch's first access
; (nothing moves up to make them so).
; (Index groups off: two roots at one index would be one compare, index-group.ll.)
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 %calls %opt %s | FileCheck %s --check-prefix=RECOVER
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Ends the thread: a check after a call of it must not be reported before the call.
define void @opaque() noinline {
  call void asm sideeffect "exit;", ""()
  ret void
}

; Two roots, addresses ready before the first access: one branch, two compares; the
; cold path checks the load's range, then the store's, each at its own site. The or is
; exact (two plain ranges), so once the load's range passes there, the store's is the
; one that failed: its report takes no compare, and the chain never goes back.
; CHECK-LABEL: define void @two_roots(
; CHECK: [[A:%.*]] = icmp ult i64 {{%.*}}, %cusafe.limit.0
; CHECK: [[B:%.*]] = icmp ult i64 {{%.*}}, %cusafe.limit.1
; CHECK: [[OR:%.*]] = or i1
; CHECK: br i1 [[OR]]
; CHECK: br i1 {{%.*}}, label {{%.*}}, label %[[STORE:.*]], !prof
; CHECK: @__cusafe_site.0
; CHECK-NEXT: unreachable
; CHECK: [[STORE]]:
; CHECK-NOT: br
; CHECK: @__cusafe_site.1
; CHECK-NEXT: unreachable
; CHECK: load float
; CHECK-NOT: br i1 {{.*}}!prof
; CHECK: store float
; Recover mode: a report returns, so the store's range is compared too and the chain
; goes back to the access.
; RECOVER-LABEL: define void @two_roots(
; RECOVER: call i32 @__cusafe_fail({{.*}}@__cusafe_site.0
; RECOVER: [[SC:%.*]] = icmp ult i64 {{%.*}}, %cusafe.limit.1
; RECOVER: br i1 {{%.*}}, label {{%.*}}, label {{%.*}}, !prof
; RECOVER: call i32 @__cusafe_fail({{.*}}@__cusafe_site.1
; RECOVER: load float
; STATS: kernel two_roots: 2 checks {{.*}} 1 batched (sharing a branch)
define void @two_roots(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %v = load float, ptr %p, align 4
  store float %v, ptr %q, align 4
  ret void
}

; A call between two checks: it may not return, so the store keeps its own branch
; (reporting it before the call would report an access the program may never make).
; The load, which no other load follows, keeps its own branch (defer.ll): it comes
; before the load, and the call.
; CHECK-LABEL: define void @call_between(
; CHECK: br i1 {{.*}}!prof
; CHECK: load float
; CHECK: call void @opaque()
; CHECK: store float
; CHECK: br i1 {{.*}}!prof
; STATS: kernel call_between: 2 checks {{.*}} 0 batched (sharing a branch)
define void @call_between(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %v = load float, ptr %p, align 4
  call void @opaque()
  store float %v, ptr %q, align 4
  ret void
}

; A trap between: the same.
; STATS: kernel trap_between: 2 checks {{.*}} 0 batched (sharing a branch)
define void @trap_between(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %v = load float, ptr %p, align 4
  call void @llvm.trap()
  store float %v, ptr %q, align 4
  ret void
}
declare void @llvm.trap()

; The second address depends on the first load's value: it cannot be computed before
; the first access, so it gets its own branch.
; STATS: kernel dependent: 2 checks {{.*}} 0 batched (sharing a branch)
define void @dependent(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds i64, ptr %a, i64 %i
  %j = load i64, ptr %p, align 8
  %q = getelementptr inbounds float, ptr %b, i64 %j
  store float 1.0, ptr %q, align 4
  ret void
}

; Addresses computed one by one between the accesses (a stencil): no batch, since
; nothing moves up (moving them made more batches but kept every address live, at a
; cost in registers).
; STATS: kernel stencil: 3 checks {{.*}} 0 batched (sharing a branch)
define void @stencil(ptr %a, i32 %n, i32 %i) {
  %r0 = mul nsw i32 %i, %n
  %x0 = sext i32 %r0 to i64
  %p0 = getelementptr inbounds float, ptr %a, i64 %x0
  %v0 = load float, ptr %p0, align 4
  %r1 = add nsw i32 %r0, %n
  %x1 = sext i32 %r1 to i64
  %p1 = getelementptr inbounds float, ptr %a, i64 %x1
  %v1 = load float, ptr %p1, align 4
  %r2 = add nsw i32 %r1, %n
  %x2 = sext i32 %r2 to i64
  %p2 = getelementptr inbounds float, ptr %a, i64 %x2
  %v2 = load float, ptr %p2, align 4
  ret void
}
!nvvm.annotations = !{!0, !1, !2, !3, !4}
!0 = !{ptr @two_roots, !"kernel", i32 1}
!1 = !{ptr @call_between, !"kernel", i32 1}
!2 = !{ptr @trap_between, !"kernel", i32 1}
!3 = !{ptr @dependent, !"kernel", i32 1}
!4 = !{ptr @stencil, !"kernel", i32 1}
