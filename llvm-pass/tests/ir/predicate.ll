; Predicated deferred accesses (check.rs, FnEmit::predicate; the default,
; CUSAFE_PASS_PREDICATE=1, for the members of a flush with two or more; a flush's only
; member keeps its sink): a deferred check's access is made only where its verdict
; held. Its block branches on the failed verdict around the access (ptxas turns the
; branch and the one access behind it into a predicated load or store), a skipped
; load's value is zero, and the flush branches on the or of the same failed verdicts
; (one compare each: the access's branch and the flush take the same value). Which
; checks are deferred and where they flush: defer.ll (with sinks,
; CUSAFE_PASS_PREDICATE=0, which this file checks against too).
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 CUSAFE_PASS_PREDICATE=0 %opt %s | FileCheck %s --check-prefix=SINKS
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Two dependent loads, both deferred: each behind its own branch, the second load's
; index the first's value or zero; one flush before the store (which keeps its own
; branch), whose cold path looks at the first load first.
; CHECK-LABEL: define void @dependent(
; CHECK: [[LI:%.*]] = icmp ult i64 %{{[0-9]+}}, %{{[0-9]+}}{{$}}
; CHECK-NEXT: [[LB:%.*]] = xor i1 [[LI]], true
; CHECK: br i1 [[LB]], label %[[LJ:[0-9]+]], label %[[LL:[0-9]+]]{{$}}
; CHECK: [[LL]]:
; CHECK-NEXT: %j = load i32, ptr
; CHECK-NEXT: br label %[[LJ]]
; CHECK: [[LJ]]:
; CHECK-NEXT: [[J:%.*]] = phi i32 [ %j, %[[LL]] ], [ 0, %{{[0-9]+}} ]
; CHECK-NEXT: %k = sext i32 [[J]] to i64
; CHECK: [[MI:%.*]] = icmp ult i64 %{{[0-9]+}}, %{{[0-9]+}}{{$}}
; CHECK-NEXT: [[MB:%.*]] = xor i1 [[MI]], true
; CHECK: br i1 [[MB]], label %[[MJ:[0-9]+]], label %[[ML:[0-9]+]]{{$}}
; CHECK: [[ML]]:
; CHECK-NEXT: %w = load float, ptr
; CHECK: [[MJ]]:
; CHECK-NEXT: [[W:%.*]] = phi float [ %w, %[[ML]] ], [ 0.000000e+00, %[[LJ]] ]
; CHECK: [[ANY:%.*]] = or i1 [[LB]], [[MB]]
; CHECK-NEXT: br i1 [[ANY]], {{.*}}!prof
; CHECK: br i1 [[LB]], {{.*}}!prof
; CHECK: @__cusafe_site.0
; CHECK: br i1 [[MB]], {{.*}}!prof
; CHECK: @__cusafe_site.1
; CHECK: br i1 {{.*}}!prof
; CHECK: store float [[W]], ptr
; CHECK: ret void
; CHECK-NOT: cusafe.sunk
; STATS: function dependent: 3 checks {{.*}} 2 deferred (branch later in the block)
; The branch around a load is a forward branch over that one load.
; PTX-LABEL: .func dependent(
; PTX: @%p{{[0-9]+}} bra [[SKIP:\$L__BB[0-9_]+]];
; PTX: ld.u32
; PTX-NEXT: [[SKIP]]:
; SINKS-LABEL: define void @dependent(
; SINKS: select i1 {{%.*}}, ptr {{%.*}}, ptr addrspacecast (ptr addrspace(1) @__cusafe_sink_load to ptr)
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

; An update in place (srad's j[i] = j[i] + d): the store rides on the load's verdict,
; behind a branch on the same failed verdict, with no flush before it.
; CHECK-LABEL: define void @update(
; CHECK: [[UI:%.*]] = icmp ult i64 %{{[0-9]+}}, %{{[0-9]+}}{{$}}
; CHECK-NEXT: [[UB:%.*]] = xor i1 [[UI]], true
; CHECK: br i1 [[UB]], label %{{[0-9]+}}, label %{{[0-9]+}}{{$}}
; CHECK: %v = load float, ptr
; CHECK: %w = load float, ptr
; CHECK: br i1 [[UB]], label %[[SJ:[0-9]+]], label %[[SL:[0-9]+]]{{$}}
; CHECK: [[SL]]:
; CHECK-NEXT: store float %s, ptr
; CHECK-NEXT: br label %[[SJ]]
; CHECK: [[SJ]]:
; CHECK-NEXT: or i1 [[UB]],
; CHECK-NEXT: br i1 {{.*}}!prof
; CHECK: ret void
; STATS: function update: 2 checks {{.*}} 1 removed (dominated){{.*}} 2 deferred
; SINKS-LABEL: define void @update(
; SINKS: @__cusafe_sink_store
define void @update(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %w = load float, ptr %q, align 4
  %s = fadd float %v, %w
  store float %s, ptr %p, align 4
  ret void
}

; A vector load: skipped, it reads a zero vector.
; CHECK-LABEL: define void @vector(
; CHECK: %v = load <4 x float>, ptr {{.*}}, align 16
; CHECK: phi <4 x float> [ %v, %{{[0-9]+}} ], [ zeroinitializer, %{{[0-9]+}} ]
; CHECK: ret void
define void @vector(ptr %a, ptr %b, i64 %i) {
  %p = getelementptr inbounds <4 x float>, ptr %a, i64 %i
  %v = load <4 x float>, ptr %p, align 16
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %w = load float, ptr %q, align 4
  %e = extractelement <4 x float> %v, i32 0
  %s = fadd float %e, %w
  store float %s, ptr %q, align 4
  ret void
}

; One load that no other load follows (its flush would come right after it, before the
; terminator, which branches on the loaded value) is not deferred: codegen would put the
; flush's branch before the load anyway, and a sink's selects would stay on the load's
; address. Its own branch comes before it, with no sink.
; CHECK-LABEL: define void @single(
; CHECK-NOT: @__cusafe_sink_load
; CHECK: br i1 {{%.*}}, label {{%.*}}, label {{%.*}}, !prof
; CHECK: call void %cusafe.trap(
; CHECK: %v = load i32, ptr {{%.*}}, align 4
; CHECK: ret void
; STATS: function single: 1 checks {{.*}} 0 deferred
define void @single(ptr %a, i64 %i, i32 %k) {
  %p = getelementptr inbounds i32, ptr %a, i64 %i
  %v = load i32, ptr %p, align 4
  %c = icmp sgt i32 %v, %k
  br i1 %c, label %yes, label %no
yes:
  call void asm sideeffect "exit;", ""()
  br label %no
no:
  ret void
}

; In a loop (the index loads and the store leave it as loop ranges): the two loads
; through a loaded index, each behind its own branch inside the loop's body, share one
; flush before the back edge; the store, checked before the loop, stores their sum
; (zero for a skipped load) before it.
; CHECK-LABEL: define void @loop(
; CHECK: loop:
; CHECK: br i1 {{%[0-9]+}}, label %{{[0-9]+}}, label %{{[0-9]+}}{{$}}
; CHECK: %x = load float
; CHECK: phi float [ %x, %{{[0-9]+}} ], [ 0.000000e+00, %{{[0-9]+}} ]
; CHECK: br i1 {{%[0-9]+}}, label %{{[0-9]+}}, label %{{[0-9]+}}{{$}}
; CHECK: %y = load float
; CHECK: store float
; CHECK: br i1 {{.*}}!prof
; CHECK: br i1 %more, label %loop, label %done
; STATS: function loop: {{.*}} 2 loop ranges {{.*}} 2 deferred
define void @loop(ptr %idx, ptr %a, ptr %b, ptr %c, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %pi = getelementptr inbounds i64, ptr %idx, i64 %i
  %k = load i64, ptr %pi, align 8
  %pa = getelementptr inbounds float, ptr %a, i64 %k
  %x = load float, ptr %pa, align 4
  %pb = getelementptr inbounds float, ptr %b, i64 %k
  %y = load float, ptr %pb, align 4
  %s = fadd float %x, %y
  %pc = getelementptr inbounds float, ptr %c, i64 %i
  store float %s, ptr %pc, align 4
  %next = add nuw i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
