; Check elimination (elim/mod.rs), each rule with the cases where it must not fire:
; recurring checks are dropped only when dominated by a covering check; the header
; load of a root is shared by the checks it dominates; it moves to a loop preheader
; only when the check runs on every trip (never out of a branch, past an early exit,
; or for a root the loop redefines). Functions that mark local scopes keep every check.
; Launch-time windows are off here (they replace the root half of kernel parameters,
; launch-bounds.ll): these kernels stand for any root whose header is loaded.
; RUN: env CUSAFE_PASS_LAUNCH_BOUNDS=0 %opt %s -o %t.ll 2>%t.stats
; RUN: env CUSAFE_PASS_LAUNCH_BOUNDS=0 %calls %opt %s -o %t.calls.ll
; RUN: %verify %t.ll
; RUN: %verify %t.calls.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: %opt_noelim %s -o %t.noelim.ll 2>%t.noelim.stats
; RUN: FileCheck %s --check-prefix=NOELIM < %t.noelim.stats
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: define void @recurring(
; The load's check covers the store of the same 4 bytes; the wider load after it joins
; the load in one neighbouring group: one check of [0, 8), and a cold path that checks
; the two members (4 and 8 bytes) one by one, each at its own site.
; The union's bound (8 bytes: limit - 7) and the 4-byte member's (limit - 3), both
; built once, right after the root half:
; CHECK-DAG: sub i64 {{%.*}}, 7
; CHECK-DAG: sub i64 {{%.*}}, 3
; CHECK: br i1
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 8, ptr
; CHECK-NOT: call i32 @__cusafe_fail(
; CHECK: store float
; CHECK: load double
; STATS: kernel recurring: 1 checks {{.*}} 1 removed (dominated), 1 merged (neighbouring), 0 of them by index (one compare for several parameters), 0 loop ranges (one check per loop, in the preheader), 0 batched (sharing a branch), 0 hoisted (loop header loads), 1 header loads shared
; NOELIM: kernel recurring: 3 checks {{.*}} 0 removed (dominated), 0 merged (neighbouring), 0 of them by index (one compare for several parameters), 0 loop ranges (one check per loop, in the preheader), 0 batched (sharing a branch), 0 hoisted (loop header loads), 0 header loads shared
define void @recurring(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %w = fadd float %v, 1.0
  store float %w, ptr %p, align 4
  %d = load double, ptr %p, align 8
  ret void
}

; Sibling branches do not dominate each other: both checks stay.
; STATS: kernel siblings: 2 checks {{.*}} 0 removed (dominated)
define void @siblings(ptr %a, i64 %i, i1 %c) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  br i1 %c, label %l, label %r
l:
  store float 1.0, ptr %p, align 4
  ret void
r:
  store float 2.0, ptr %p, align 4
  ret void
}

; CHECK-LABEL: define void @shared(
; One header load for two checks on the same root (the runtime page's address, loaded
; for the kernel's epoch reset, is no header load).
; CHECK: %cusafe.size = load i64
; CHECK-NOT: load i64, ptr addrspace(1)
; CHECK: ret void
define void @shared(ptr %a, i64 %i, i64 %j) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %a, i64 %j
  %v = load float, ptr %p, align 4
  store float %v, ptr %q, align 4
  ret void
}

; Header loads: loops whose trip count is unknown (bounded by the clock), so that the
; whole check cannot leave them (loop-range.ll): the root half still does.
; CHECK-LABEL: define void @hoist(
; CHECK-LABEL: ph:
; CHECK: %cusafe.size = load i64
; CHECK-NOT: label
; CHECK: br label %loop
; CHECK-LABEL: loop:
; CHECK-NOT: load i64
; CHECK: call i32 @__cusafe_fail(
; CHECK: load float
; STATS: kernel hoist: 1 checks {{.*}} 1 hoisted (loop header loads)
define void @hoist(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %i1 = add i64 %i, 1
  %t = call i64 @llvm.nvvm.read.ptx.sreg.clock64()
  %d = icmp slt i64 %i1, %t
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; Nested loops: the header load leaves both when the inner loop runs on every outer trip.
; CHECK-LABEL: define void @nested(
; CHECK-LABEL: outer.ph:
; CHECK: %cusafe.size = load i64
; CHECK-LABEL: inner.ph:
; CHECK-NOT: load i64
; CHECK: ret void
define void @nested(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %outer.ph, label %exit
outer.ph:
  br label %outer
outer:
  %j = phi i64 [ 0, %outer.ph ], [ %j1, %outer.latch ]
  br label %inner.ph
inner.ph:
  br label %inner
inner:
  %i = phi i64 [ 0, %inner.ph ], [ %i1, %inner ]
  %k = add i64 %i, %j
  %p = getelementptr inbounds float, ptr %a, i64 %k
  store float 0.0, ptr %p, align 4
  %i1 = add i64 %i, 1
  %t = call i64 @llvm.nvvm.read.ptx.sreg.clock64()
  %d = icmp slt i64 %i1, %t
  br i1 %d, label %inner, label %outer.latch
outer.latch:
  %j1 = add i64 %j, 1
  %e = icmp slt i64 %j1, %n
  br i1 %e, label %outer, label %exit
exit:
  ret void
}

; The access runs only on some trips and its root is loaded (it may be garbage where the
; access does not run): its header load stays in the loop.
; CHECK-LABEL: define void @conditional(
; CHECK-LABEL: ph:
; CHECK-NOT: load i64
; CHECK-LABEL: body:
; CHECK: %cusafe.size = load i64
; STATS: kernel conditional: 1 checks {{.*}} 0 hoisted (loop header loads)
define void @conditional(ptr %m, i64 %n) {
entry:
  %a = load ptr, ptr addrspace(1) @slot, align 8
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %latch ]
  %mp = getelementptr inbounds i8, ptr addrspace(1) null, i64 %i
  %t = icmp eq i64 %i, 7
  br i1 %t, label %body, label %latch
body:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  br label %latch
latch:
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; The same with the root a function argument: its header load moves to the preheader
; (it runs whenever the loop is entered; see elim/mod.rs on why that load is safe), the
; compare stays in the body.
; CHECK-LABEL: define void @conditional_arg(
; CHECK-LABEL: ph:
; CHECK: %cusafe.size = load i64
; CHECK-LABEL: body:
; CHECK: icmp ult i64
; STATS: kernel conditional_arg: 1 checks {{.*}} 1 hoisted (loop header loads)
define void @conditional_arg(ptr %a, ptr %m, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %latch ]
  %mp = getelementptr inbounds i8, ptr addrspace(1) null, i64 %i
  %t = icmp eq i64 %i, 7
  br i1 %t, label %body, label %latch
body:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  br label %latch
latch:
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; A loop not rotated (the trip test at the top, zero trips possible): the body does not
; dominate the exiting header, so nothing moves out of the loop (a loaded root).
; CHECK-LABEL: define void @top_tested(
; CHECK-LABEL: body:
; CHECK: %cusafe.size = load i64
; STATS: kernel top_tested: 1 checks {{.*}} 0 hoisted (loop header loads)
define void @top_tested(i64 %n) {
entry:
  %a = load ptr, ptr addrspace(1) @slot, align 8
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i1, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add i64 %i, 1
  br label %head
exit:
  ret void
}

; An early exit before the access (through a loaded root): the last trip may leave
; without making it. The load of b (an argument) at the top of the loop runs on every trip: only its header load moves.
; CHECK-LABEL: define void @early_exit(
; CHECK-LABEL: ph:
; CHECK: %cusafe.size = load i64
; CHECK-LABEL: latch:
; CHECK: %cusafe.size{{[0-9]+}} = load i64
; STATS: kernel early_exit: 2 checks {{.*}} 1 hoisted (loop header loads)
define void @early_exit(ptr %b, i64 %n) {
entry:
  %a = load ptr, ptr addrspace(1) @slot, align 8
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %latch ]
  %q = getelementptr inbounds float, ptr %b, i64 %i
  %s = load float, ptr %q, align 4
  %stop = fcmp olt float %s, 0.0
  br i1 %stop, label %exit, label %latch
latch:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float %s, ptr %p, align 4
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; The row pointer changes every trip (loaded in the loop): its header load stays
; there; the table's (rows) moves out.
; STATS: kernel variant_root: 2 checks {{.*}} 1 loop ranges (one check per loop, in the preheader), 0 batched (sharing a branch), 0 hoisted (loop header loads)
define void @variant_root(ptr %rows, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %rp = getelementptr inbounds ptr, ptr %rows, i64 %i
  %row = load ptr, ptr %rp, align 8
  store float 0.0, ptr %row, align 4
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; Neighbours: a 3-point stencil on int indices (sext of add nsw) is one check of
; [a + 4(i-1), a + 4(i+1) + 4); the store through another root stays on its own.
; CHECK-LABEL: define void @stencil(
; The union is 12 bytes: it fits at offsets below limit - 11. It starts where the
; first load reads, so that load's own address is its start (nothing rebuilt).
; CHECK: %cusafe.bound{{[0-9]*}} = select i1 {{%.*}}, i64 {{%.*}}, i64 0
; CHECK: [[LOI:%.*]] = ptrtoint ptr %pm to i64
; CHECK-NEXT: [[OFF:%.*]] = sub i64 [[LOI]], {{%.*}}
; CHECK-NEXT: icmp ult i64 [[OFF]], %cusafe.bound
; STATS: kernel stencil: 2 checks {{.*}} 2 merged (neighbouring)
define void @stencil(ptr %a, ptr %out, i32 %i) {
  %im = add nsw i32 %i, -1
  %ip = add nsw i32 %i, 1
  %xm = sext i32 %im to i64
  %x = sext i32 %i to i64
  %xp = sext i32 %ip to i64
  %pm = getelementptr inbounds float, ptr %a, i64 %xm
  %p = getelementptr inbounds float, ptr %a, i64 %x
  %pp = getelementptr inbounds float, ptr %a, i64 %xp
  %vm = load float, ptr %pm, align 4
  %v = load float, ptr %p, align 4
  %vp = load float, ptr %pp, align 4
  %s1 = fadd float %vm, %v
  %s2 = fadd float %s1, %vp
  %o = getelementptr inbounds float, ptr %out, i64 %x
  store float %s2, ptr %o, align 4
  ret void
}

; Neighbours in a 2-D stencil row: `sext (row + (j - 1))`, `sext (row + j)` and
; `sext (row + (j + 1))` with no-wrap adds are the terms row and j plus -1, 0, 1: one
; check of [a + 4(row + j - 1), + 12). The first load is the middle one, so the
; union's start is rebuilt: its base as sext row + sext j (no i32 sum that could wrap
; where the program's did not).
; CHECK-LABEL: define void @stencil2d(
; CHECK: [[R:%.*]] = sext i32 %row to i64
; CHECK: [[J:%.*]] = sext i32 %j to i64
; CHECK: [[S:%.*]] = add i64 {{%[0-9]+}}, {{%[0-9]+}}
; CHECK: [[B:%.*]] = getelementptr float, ptr %a, i64 [[S]]
; CHECK: getelementptr i8, ptr [[B]], i64 -4
; STATS: kernel stencil2d: 1 checks {{.*}} 2 merged (neighbouring)
define void @stencil2d(ptr %a, i32 %row, i32 %j) {
  %jm = add nsw i32 %j, -1
  %jp = add nuw nsw i32 %j, 1
  %im = add nsw i32 %row, %jm
  %i = add nsw i32 %row, %j
  %ip = add nsw i32 %row, %jp
  %xm = sext i32 %im to i64
  %x = sext i32 %i to i64
  %xp = sext i32 %ip to i64
  %pm = getelementptr inbounds float, ptr %a, i64 %xm
  %p = getelementptr inbounds float, ptr %a, i64 %x
  %pp = getelementptr inbounds float, ptr %a, i64 %xp
  %v = load float, ptr %p, align 4
  %vm = load float, ptr %pm, align 4
  %vp = load float, ptr %pp, align 4
  ret void
}

; Without nsw on the inner add, `sext (row + (j - 1))` may differ from sext row +
; sext j - 1 (the i32 sum can wrap): the first load is no neighbour of the second.
; STATS: kernel wrapping2d: 2 checks {{.*}} 0 merged (neighbouring)
define void @wrapping2d(ptr %a, i32 %row, i32 %j) {
  %jm = add nsw i32 %j, -1
  %im = add i32 %row, %jm
  %i = add nsw i32 %row, %j
  %xm = sext i32 %im to i64
  %x = sext i32 %i to i64
  %pm = getelementptr inbounds float, ptr %a, i64 %xm
  %p = getelementptr inbounds float, ptr %a, i64 %x
  %vm = load float, ptr %pm, align 4
  %v = load float, ptr %p, align 4
  ret void
}

; A call between two neighbours (it may not return): no merging across it.
; STATS: kernel barrier: 2 checks {{.*}} 0 merged (neighbouring)
define void @barrier(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %p, i64 1
  %v = load float, ptr %p, align 4
  call void @sink(ptr null)
  %w = load float, ptr %q, align 4
  ret void
}

; A root half is built early in its block, but never between a check that can skip its
; access (recover mode here) and that access: b's header load comes after the load of a
; (the skip edge from a's cold path would bypass it; the verifier run on the recover-mode
; output above catches that). b's address depends on x, so the two do not form a batch.
; CHECK-LABEL: define void @skip_order(
; CHECK: %x = load float
; CHECK: %cusafe.size{{[0-9]*}} = load i64
; CHECK: %y = load float
define void @skip_order(ptr %a, ptr %b) {
  call void @sink(ptr null)
  %x = load float, ptr %a, align 4
  %xi = fptosi float %x to i64
  %q = getelementptr inbounds float, ptr %b, i64 %xi
  %y = load float, ptr %q, align 4
  ret void
}

; A function that marks the scope of an escaping local keeps recurring checks.
; STATS: device function scoped: 2 checks {{.*}} 0 removed (dominated)
define void @scoped(ptr %a, i64 %i) {
  %buf = alloca [4 x float], align 4
  call void @llvm.lifetime.start.p0(i64 16, ptr %buf)
  call void @sink(ptr %buf)
  call void @llvm.lifetime.end.p0(i64 16, ptr %buf)
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  store float %v, ptr %p, align 4
  ret void
}
define void @sink(ptr %p) {
  ret void
}
declare void @llvm.lifetime.start.p0(i64, ptr)
declare void @llvm.lifetime.end.p0(i64, ptr)
!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6, !7, !8, !9, !10, !11, !12, !13, !14}
!11 = !{ptr @stencil2d, !"kernel", i32 1}
!12 = !{ptr @wrapping2d, !"kernel", i32 1}
!8 = !{ptr @stencil, !"kernel", i32 1}
!9 = !{ptr @barrier, !"kernel", i32 1}
!10 = !{ptr @top_tested, !"kernel", i32 1}
!0 = !{ptr @recurring, !"kernel", i32 1}
!1 = !{ptr @siblings, !"kernel", i32 1}
!2 = !{ptr @shared, !"kernel", i32 1}
!3 = !{ptr @hoist, !"kernel", i32 1}
!4 = !{ptr @nested, !"kernel", i32 1}
!5 = !{ptr @conditional, !"kernel", i32 1}
!6 = !{ptr @early_exit, !"kernel", i32 1}
!7 = !{ptr @variant_root, !"kernel", i32 1}

declare i64 @llvm.nvvm.read.ptx.sreg.clock64()
!13 = !{ptr @conditional_arg, !"kernel", i32 1}
@slot = external addrspace(1) global ptr
!14 = !{ptr @skip_order, !"kernel", i32 1}
