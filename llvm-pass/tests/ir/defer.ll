; Deferred branches (elim/defer.rs): a single check of a plain load or store does not
; branch at its access. The access goes through `select bad, sink, address`, and one
; branch later in the block (before a call that may stop the thread, before a check that
; branches, or before the terminator) takes the or of the pending verdicts; its cold
; path reports the first member that failed, in program order, at its own site.
; (Index groups off: loads through two parameters at one index would be one compare,
; index-group.ll. Sinks, CUSAFE_PASS_PREDICATE=0: which checks are deferred and where
; they flush; predicate.ll has the default, where a failed access is skipped instead.)
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 CUSAFE_PASS_PREDICATE=0 %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 CUSAFE_PASS_PREDICATE=0 CUSAFE_PASS_DEFER=0 %opt %s 2>&1 | FileCheck %s --check-prefix=OFF
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 CUSAFE_PASS_PREDICATE=0 %calls %opt %s 2>&1 | FileCheck %s --check-prefix=OFF
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [16 x float] undef, align 4

; Ends the thread.
define void @opaque() noinline {
  call void asm sideeffect "exit;", ""()
  ret void
}

; The second load's address needs the first load's value, so the two cannot be batched;
; both are deferred to one branch, whose cold path looks at the first load first. The
; store after them has no load after it: it keeps its own branch (nothing waits behind
; it), which comes after the flush.
; CHECK-LABEL: define void @dependent(
; CHECK: [[LI:%.*]] = icmp ult i64
; CHECK-NOT: xor
; CHECK: [[LP:%.*]] = select i1 [[LI]], ptr %p, ptr addrspacecast (ptr addrspace(1) @__cusafe_sink_load to ptr)
; CHECK: %j = load i32, ptr [[LP]]
; CHECK-NOT: !prof
; CHECK: [[MI:%.*]] = icmp ult i64
; CHECK-NOT: xor
; CHECK: [[MP:%.*]] = select i1 [[MI]], ptr %q, ptr addrspacecast (ptr addrspace(1) @__cusafe_sink_load to ptr)
; CHECK: %w = load float, ptr [[MP]]
; CHECK: [[AND:%.*]] = and i1 [[LI]], [[MI]]
; CHECK: [[ANY:%.*]] = xor i1 [[AND]], true
; CHECK: br i1 [[ANY]], {{.*}}!prof
; CHECK: [[LB:%.*]] = xor i1 [[LI]], true
; CHECK: br i1 [[LB]], {{.*}}!prof
; CHECK: @__cusafe_site.0
; CHECK: [[MB:%.*]] = xor i1 [[MI]], true
; CHECK: br i1 [[MB]], {{.*}}!prof
; CHECK: @__cusafe_site.1
; CHECK: br i1 {{.*}}!prof
; CHECK: store float {{.*}}, ptr %r
; CHECK: ret void
; STATS: kernel dependent: 3 checks {{.*}} 2 deferred (branch later in the block)
; OFF-LABEL: define void @dependent(
; OFF-NOT: cusafe.sunk
; OFF: ret void
define void @dependent(ptr %a, ptr %b, ptr %c, i64 %i) {
  %p = getelementptr inbounds i32, ptr %a, i64 %i
  %j = load i32, ptr %p, align 4
  %k = sext i32 %j to i64
  %q = getelementptr inbounds float, ptr %b, i64 %k
  %w = load float, ptr %q, align 4
  %r = getelementptr inbounds float, ptr %c, i64 %i
  store float %w, ptr %r, align 4
  ret void
}

; A call that may stop the thread flushes first: the loads' branch comes before it, the
; store's after it (a report never names an access the program would not reach). (The
; second load's address comes from the first's value, so the two do not batch.)
; CHECK-LABEL: define void @call_flushes(
; CHECK: %j = load i32, ptr %cusafe.sunk
; CHECK: %v = load float, ptr %cusafe.sunk
; CHECK: br i1 {{.*}}!prof
; CHECK: call void @opaque()
; CHECK: br i1 {{.*}}!prof
; CHECK: store float
; CHECK: ret void
; STATS: kernel call_flushes: 3 checks {{.*}} 2 deferred
define void @call_flushes(ptr %a, ptr %b, ptr %c, i64 %i) {
  %p = getelementptr inbounds i32, ptr %a, i64 %i
  %j = load i32, ptr %p, align 4
  %k = sext i32 %j to i64
  %r = getelementptr inbounds float, ptr %c, i64 %k
  %v = load float, ptr %r, align 4
  call void @opaque()
  %q = getelementptr inbounds float, ptr %b, i64 %i
  store float %v, ptr %q, align 4
  ret void
}

; A check that branches (here a loaded pointer's) flushes the pending ones before its
; own branch, so the first failing access in program order is the one reported.
; CHECK-LABEL: define void @before_branching(
; CHECK: %j = load i32, ptr %cusafe.sunk
; CHECK: %x = load i32, ptr %cusafe.sunk
; CHECK: br i1 {{.*}}!prof
; CHECK: @__cusafe_site
; CHECK: br i1 {{.*}}!prof
; CHECK: %q = load ptr
; CHECK: store i32
; STATS: kernel before_branching: 4 checks {{.*}} 2 deferred
define void @before_branching(ptr %a, ptr %b, ptr %pp, i64 %i) {
  %pa = getelementptr inbounds i32, ptr %a, i64 %i
  %j = load i32, ptr %pa, align 4
  %k = sext i32 %j to i64
  %p = getelementptr inbounds i32, ptr %b, i64 %k
  %x = load i32, ptr %p, align 4
  %r = getelementptr inbounds ptr, ptr %pp, i64 %i
  %q = load ptr, ptr %r, align 8
  store i32 %x, ptr %q, align 4
  ret void
}

; A lone load that no other load follows keeps its own branch (predicate.ll, `single`):
; deferred, its flush would come right after it.
; CHECK-LABEL: define void @lone_load(
; CHECK-NOT: cusafe.sunk
; CHECK: br i1 {{.*}}!prof
; CHECK: %v = load float, ptr
; CHECK: call void @opaque()
; STATS: kernel lone_load: 2 checks {{.*}} 0 deferred
define void @lone_load(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %v = load float, ptr %p, align 4
  call void @opaque()
  store float %v, ptr %q, align 4
  ret void
}

; Not deferred: a load of a pointer (its zero would be a later check's root), a
; volatile access, and a load through a `__restrict__` read-only kernel parameter (the
; sink would take it off `ld.global.nc`).
; STATS: kernel not_deferred: 3 checks {{.*}} 0 deferred
define void @not_deferred(ptr %pp, ptr noalias readonly %c, ptr %v, i64 %i) {
  %r = getelementptr inbounds ptr, ptr %pp, i64 %i
  %q = load ptr, ptr %r, align 8
  %ci = getelementptr inbounds float, ptr %c, i64 %i
  %x = load float, ptr %ci, align 4
  %vi = getelementptr inbounds float, ptr %v, i64 %i
  store volatile float %x, ptr %vi, align 4
  ret void
}

; A vector load aligned past its `__shared__` array's alignment is not deferred: the
; array's start, its sink, could be misaligned for it (a fault before the report). The
; global load after it (whose address needs its value, so no batch) is then a lone load
; and keeps its own branch too; with the array's own alignment both are deferred.
; STATS: kernel over_aligned: 2 checks {{.*}} 0 deferred
; STATS: kernel aligned: 2 checks {{.*}} 2 deferred
define void @over_aligned(ptr %a, i64 %x) {
  %e = getelementptr inbounds [16 x float], ptr addrspace(3) @tile, i64 0, i64 %x
  %v = load <4 x float>, ptr addrspace(3) %e, align 16
  %f = extractelement <4 x float> %v, i32 0
  %i = fptosi float %f to i64
  %ai = getelementptr inbounds float, ptr %a, i64 %i
  %g = load float, ptr %ai, align 4
  ret void
}
define void @aligned(ptr %a, i64 %x) {
  %e = getelementptr inbounds [16 x float], ptr addrspace(3) @tile, i64 0, i64 %x
  %v = load <4 x float>, ptr addrspace(3) %e, align 4
  %f = extractelement <4 x float> %v, i32 0
  %i = fptosi float %f to i64
  %ai = getelementptr inbounds float, ptr %a, i64 %i
  %g = load float, ptr %ai, align 4
  ret void
}

; A `__shared__` array's own start is its sink (the store is deferred: a global load
; follows); no verdict is pending across a loop's back edge (the flush is before the
; body's branch to the latch).
; CHECK-LABEL: define void @shared_loop(
; CHECK: body:
; CHECK: select i1 {{%.*}}, ptr addrspace(3) {{%.*}}, ptr addrspace(3) @tile
; CHECK: store float 0.000000e+00
; CHECK: load float, ptr %cusafe.sunk
; CHECK: br i1 {{.*}}!prof
; CHECK: latch:
; CHECK: br i1 %more, label %loop, label %done
; STATS: kernel shared_loop: 2 checks {{.*}} 2 deferred
define void @shared_loop(ptr %a, i64 %n, i64 %s, i64 %m) {
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %latch ]
  %odd = icmp ult i64 %k, %m
  br i1 %odd, label %body, label %latch
body:
  %x = mul i64 %k, %s
  %e = getelementptr inbounds [16 x float], ptr addrspace(3) @tile, i64 0, i64 %x
  store float 0.0, ptr addrspace(3) %e, align 4
  %ak = getelementptr inbounds float, ptr %a, i64 %x
  %v = load float, ptr %ak, align 4
  store float %v, ptr addrspace(3) @tile, align 4
  br label %latch
latch:
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; An update in place (srad's j[i] = j[i] + d): the store has no check of its own, the
; load's covers it (same root and address). It rides on the load's verdict to the store
; sink, with no flush before it: a failed load never lets the store write outside the
; block, and the one flush stays before the terminator. (The second load's address is
; computed after the first load, so that the two make no batch.)
; CHECK-LABEL: define void @update(
; CHECK: [[UI:%.*]] = icmp ult i64
; CHECK: [[UP:%.*]] = select i1 [[UI]], ptr %p, ptr addrspacecast (ptr addrspace(1) @__cusafe_sink_load to ptr)
; CHECK: %v = load float, ptr [[UP]]
; CHECK: %w = load float
; CHECK-NOT: br i1
; CHECK: [[US:%.*]] = select i1 [[UI]], ptr %p, ptr addrspacecast (ptr addrspace(1) @__cusafe_sink_store to ptr)
; CHECK-NEXT: store float %s, ptr [[US]]
; CHECK: br i1 {{.*}}!prof
; CHECK: @__cusafe_site
; CHECK: ret void
; STATS: kernel update: 2 checks {{.*}} 1 removed (dominated){{.*}} 2 deferred (branch later in the block)
define void @update(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %w = load float, ptr %q, align 4
  %s = fadd float %v, %w
  store float %s, ptr %p, align 4
  ret void
}

; An update in place whose load is lone (no other load follows it): the load keeps its
; own branch, which traps before the store, so the store that it covers needs no sink.
; CHECK-LABEL: define void @lone_update(
; CHECK-NOT: @__cusafe_sink
; CHECK: br i1 {{.*}}!prof
; CHECK: %v = load float, ptr
; CHECK: store float %s, ptr
; CHECK: ret void
; STATS: kernel lone_update: 1 checks {{.*}} 1 removed (dominated){{.*}} 0 deferred (branch later in the block)
define void @lone_update(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %s = fadd float %v, 1.0
  store float %s, ptr %p, align 4
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6, !7, !8, !9}
!0 = !{ptr @dependent, !"kernel", i32 1}
!1 = !{ptr @call_flushes, !"kernel", i32 1}
!2 = !{ptr @before_branching, !"kernel", i32 1}
!3 = !{ptr @not_deferred, !"kernel", i32 1}
!4 = !{ptr @shared_loop, !"kernel", i32 1}
!5 = !{ptr @over_aligned, !"kernel", i32 1}
!6 = !{ptr @aligned, !"kernel", i32 1}
!7 = !{ptr @update, !"kernel", i32 1}
!8 = !{ptr @lone_load, !"kernel", i32 1}
!9 = !{ptr @lone_update, !"kernel", i32 1}
