; Check elimination (elim.rs), each rule with the cases where it must not fire:
; recurring checks are dropped only when dominated by a covering check; the header
; load of a root is shared by the checks it dominates; it moves to a loop preheader
; only when the check runs on every trip (never out of a branch, past an early exit,
; or for a root the loop redefines). Functions that mark local scopes keep every check.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: %opt_noelim %s -o %t.noelim.ll 2>%t.noelim.stats
; RUN: FileCheck %s --check-prefix=NOELIM < %t.noelim.stats
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: define void @recurring(
; The load's check covers the store of the same 4 bytes, not the wider load after it.
; CHECK: call i32 @__cusafe_slow({{.*}}, i32 4, ptr
; CHECK-NOT: call i32 @__cusafe_slow(
; CHECK: store float
; CHECK: call i32 @__cusafe_slow({{.*}}, i32 8, ptr
; CHECK: load double
; STATS: kernel recurring: 2 checks {{.*}} 1 removed (dominated), 0 hoisted (loop header loads), 1 header loads shared
; NOELIM: kernel recurring: 3 checks {{.*}} 0 removed (dominated), 0 hoisted (loop header loads), 0 header loads shared
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
; One header load for two checks on the same root.
; CHECK: %cusafe.size = load i64
; CHECK-NOT: load i64
; CHECK: ret void
define void @shared(ptr %a, i64 %i, i64 %j) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %a, i64 %j
  %v = load float, ptr %p, align 4
  store float %v, ptr %q, align 4
  ret void
}

; CHECK-LABEL: define void @hoist(
; CHECK-LABEL: ph:
; CHECK: %cusafe.size = load i64
; CHECK-NOT: label
; CHECK: br label %loop
; CHECK-LABEL: loop:
; CHECK-NOT: load i64
; CHECK: call i32 @__cusafe_slow(
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
  %d = icmp slt i64 %i1, %n
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
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %inner, label %outer.latch
outer.latch:
  %j1 = add i64 %j, 1
  %e = icmp slt i64 %j1, %n
  br i1 %e, label %outer, label %exit
exit:
  ret void
}

; The access runs only on some trips: its header load stays in the loop.
; CHECK-LABEL: define void @conditional(
; CHECK-LABEL: ph:
; CHECK-NOT: load i64
; CHECK-LABEL: body:
; CHECK: %cusafe.size = load i64
; STATS: kernel conditional: 1 checks {{.*}} 0 hoisted (loop header loads)
define void @conditional(ptr %a, ptr %m, i64 %n) {
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

; An early exit before the access: the last trip may leave without making it. The
; load of b at the top of the loop runs on every trip: only its header load moves.
; CHECK-LABEL: define void @early_exit(
; CHECK-LABEL: ph:
; CHECK: %cusafe.size = load i64
; CHECK-LABEL: latch:
; CHECK: %cusafe.size{{[0-9]+}} = load i64
; STATS: kernel early_exit: 2 checks {{.*}} 1 hoisted (loop header loads)
define void @early_exit(ptr %a, ptr %b, i64 %n) {
entry:
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
; STATS: kernel variant_root: 2 checks {{.*}} 1 hoisted (loop header loads)
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
!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6, !7}
!0 = !{ptr @recurring, !"kernel", i32 1}
!1 = !{ptr @siblings, !"kernel", i32 1}
!2 = !{ptr @shared, !"kernel", i32 1}
!3 = !{ptr @hoist, !"kernel", i32 1}
!4 = !{ptr @nested, !"kernel", i32 1}
!5 = !{ptr @conditional, !"kernel", i32 1}
!6 = !{ptr @early_exit, !"kernel", i32 1}
!7 = !{ptr @variant_root, !"kernel", i32 1}
