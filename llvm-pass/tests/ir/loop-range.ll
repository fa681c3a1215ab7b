; Loop ranges: an access that runs on every trip of a loop with a known trip count,
; through an address affine in the loop, is checked once in the preheader for the whole
; range its trips cover; a group of neighbours for their union; an access on the
; leading trips only (`k < X`, a 32-bit induction variable) for those trips. Must not
; fire: an access on some other trips only, a top-tested loop (zero trips possible after the
; preheader), a trip count that is not computable, a loop calling a function, a root
; defined in the loop.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %calls %opt %s 2>/dev/null | FileCheck %s
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; A fuzz build (CUSAFE_PASS_RECOVER=skip) skips each failing access: nothing is hoisted,
; the store in @counted keeps its own check in the loop.
; RUN: env CUSAFE_PASS_INLINE_COLD=0 CUSAFE_PASS_RECOVER=skip %opt %s 2>%t.skip.stats | FileCheck %s --check-prefix=SKIP
; RUN: FileCheck %s --check-prefix=SKIPSTATS < %t.skip.stats
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; n trips over a[0..n): one check of 4*n bytes from a in the preheader, none in the loop.
; CHECK-LABEL: define void @counted(
; CHECK-LABEL: ph:
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 {{%.*}}, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; SKIP-LABEL: define void @counted(
; SKIP-LABEL: ph:
; SKIP-NOT: call i32 @__cusafe_fail
; SKIP-LABEL: loop:
; SKIP: call i32 @__cusafe_fail
; SKIPSTATS: kernel counted: 1 checks {{.*}} 0 loop ranges
; STATS: kernel counted: 1 checks (0 loads, 0 stores, 0 atomics, 0 ranges; 0 against known objects), {{.*}} 1 loop ranges
define void @counted(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; The same loop with no preheader (entry branches straight to the loop or past it, as
; the optimizer's last clean-ups leave `for (k = lane; k < n; k += 32)`): the pass
; makes one on the edge into the loop, so the check runs only when the loop does.
; CHECK-LABEL: define void @no_preheader(
; CHECK-LABEL: entry:
; CHECK-NOT: call i32 @__cusafe_fail
; CHECK: br i1 %c, label %loop.preheader, label %exit
; CHECK-LABEL: loop.preheader:
; CHECK: call i32 @__cusafe_fail(
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; STATS: kernel no_preheader: 1 checks {{.*}} 1 loop ranges
define void @no_preheader(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; Downwards, and a neighbouring group (a[i], a[i+1]) of one trip: one preheader check.
; STATS: kernel down_pairs: 1 checks {{.*}} 1 merged (neighbouring), 0 of them by index (one compare for several parameters), 1 loop ranges
define void @down_pairs(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ %n, %ph ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %q = getelementptr inbounds float, ptr %p, i64 1
  store float 0.0, ptr %p, align 4
  store float 1.0, ptr %q, align 4
  %i1 = add nsw i64 %i, -1
  %d = icmp sgt i64 %i1, 0
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; Conditional access: checked in the loop.
; STATS: kernel conditional: 1 checks {{.*}} 0 loop ranges
define void @conditional(ptr %a, i64 %n, i64 %m) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %latch ]
  %odd = icmp slt i64 %i, %m
  br i1 %odd, label %body, label %latch
body:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  br label %latch
latch:
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; Top-tested: the header exits before the access, so entering the preheader does not
; mean the access runs (n may be 0).
; STATS: kernel top_tested: 1 checks {{.*}} 0 loop ranges
define void @top_tested(ptr %a, i64 %n) {
entry:
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i1, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  br label %head
exit:
  ret void
}

; Trip count unknown (a data-dependent exit): checked in the loop.
; STATS: kernel until_zero: 1 checks {{.*}} 0 loop ranges
define void @until_zero(ptr %a) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %z = fcmp oeq float %v, 0.0
  br i1 %z, label %exit, label %loop
exit:
  ret void
}

; A call in the loop could stop the thread before later trips: checked in the loop.
; STATS: kernel with_call: 1 checks {{.*}} 0 loop ranges
define void @external() noinline {
  ret void
}
define void @with_call(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  call void @external()
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; The root is loaded on every trip (from a table checked once per loop): the access
; through it stays in the loop.
; STATS: kernel loop_root: 2 checks {{.*}} 1 loop ranges
define void @loop_root(ptr %t, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %s = getelementptr inbounds ptr, ptr %t, i64 %i
  %row = load ptr, ptr %s, align 8
  %p = getelementptr inbounds float, ptr %row, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}
; A run-time stride (a column walk a[i * m + j], m of either sign): one check of
; [min(first, last), max(first, last) + 4) in the preheader, with the walk's length
; |m| * 4 * (n - 1) guarded (a product of 2^63 or more makes the span all ones, a
; failing check, never a fitting one), none in the loop. The range is built on an
; opaque copy of a (an inline-asm move at the entry): codegen's strength reduction
; must not find the loop's first address among the check's values and build the
; loop's addresses from it (mvt's column walk: two more 64-bit registers live across
; the loop, its loads issued in two rounds).
; CHECK-LABEL: define void @column(
; CHECK-LABEL: entry:
; CHECK: %cusafe.opaque = call ptr asm "mov.b64 $0, $1;", "=l,l"(ptr %a)
; CHECK-LABEL: ph:
; CHECK: getelementptr i8, ptr %cusafe.opaque,
; CHECK: call i64 @llvm.abs.i64(
; CHECK: call { i64, i1 } @llvm.umul.with.overflow.i64(
; CHECK: call i64 @llvm.umin.i64(
; CHECK: call i64 @llvm.umax.i64(
; CHECK: select i1 {{%.*}}, i64 -1, i64
; CHECK: call i32 @__cusafe_fail(
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; STATS: kernel column: 1 checks {{.*}} 1 loop ranges
define void @column(ptr %a, i32 %n, i32 %m, i32 %j) {
entry:
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i32 [ 0, %ph ], [ %i1, %loop ]
  %im = mul nsw i32 %i, %m
  %x = add nsw i32 %im, %j
  %xe = sext i32 %x to i64
  %p = getelementptr inbounds float, ptr %a, i64 %xe
  %v = load float, ptr %p, align 4
  %i1 = add nuw nsw i32 %i, 1
  %d = icmp slt i32 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}
; The same walk with an index that may wrap in 32 bits (its start j is not known not
; to overflow, as for blockIdx.x * blockDim.x + threadIdx.x): the sign-extended index's
; last value is computed in 64 bits, and a value that is no longer an i32 (the index
; would have wrapped) makes the span all ones. No product test: a 32-bit step over a
; 32-bit trip count cannot overflow 64 bits, and the index's own range bounds the walk.
; CHECK-LABEL: define void @column_wrapping(
; CHECK-LABEL: ph:
; CHECK-NOT: @llvm.umul.with.overflow
; CHECK: [[LAST:%.*]] = add i64 {{%.*}}, {{%.*}}
; CHECK: [[NARROW:%.*]] = trunc i64 [[LAST]] to i32
; CHECK: [[BACK:%.*]] = sext i32 [[NARROW]] to i64
; CHECK: icmp ne i64 [[BACK]], [[LAST]]
; CHECK: call i32 @__cusafe_fail(
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; STATS: kernel column_wrapping: 1 checks {{.*}} 1 loop ranges
define void @column_wrapping(ptr %a, i32 %n, i32 %m, i32 %b, i32 %t) {
entry:
  %j = add i32 %b, %t
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i32 [ 0, %ph ], [ %i1, %loop ]
  %im = mul nsw i32 %i, %m
  %x = add nsw i32 %im, %j
  %xe = sext i32 %x to i64
  %p = getelementptr inbounds float, ptr %a, i64 %xe
  %v = load float, ptr %p, align 4
  %i1 = add nuw nsw i32 %i, 1
  %d = icmp slt i32 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; An unsigned index (zero-extended): the same, against the u32 range.
; CHECK-LABEL: define void @column_unsigned(
; CHECK-LABEL: ph:
; CHECK: zext i32 {{%.*}} to i64
; CHECK: call i32 @__cusafe_fail(
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; STATS: kernel column_unsigned: 1 checks {{.*}} 1 loop ranges
define void @column_unsigned(ptr %a, i32 %n, i32 %m, i32 %j) {
entry:
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i32 [ 0, %ph ], [ %i1, %loop ]
  %im = mul i32 %i, %m
  %x = add i32 %im, %j
  %xe = zext i32 %x to i64
  %p = getelementptr inbounds float, ptr %a, i64 %xe
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i32 %i, 1
  %d = icmp slt i32 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; A narrow index, (j + i) % 256: it wraps inside the buffer (255 then 0), so the first
; and last trips do not bound the others; no loop range, the check stays in the loop.
; (Found by `cusafe gen`, seed 241: the hoisted range check reported a correct program.)
; CHECK-LABEL: define void @narrow_wrapping(
; CHECK-LABEL: loop:
; CHECK: call i32 @__cusafe_fail(
; STATS: kernel narrow_wrapping: 1 checks {{.*}} 0 loop ranges
define void @narrow_wrapping(ptr %a, i32 %n, i32 %j) {
entry:
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i32 [ 0, %ph ], [ %i1, %loop ]
  %x = add i32 %i, %j
  %xm = and i32 %x, 255
  %xe = zext i32 %xm to i64
  %p = getelementptr inbounds float, ptr %a, i64 %xe
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i32 %i, 1
  %d = icmp slt i32 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}
!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6, !7, !8, !9, !10, !11, !12, !13, !14, !15, !16, !17}
!0 = !{ptr @counted, !"kernel", i32 1}
!1 = !{ptr @down_pairs, !"kernel", i32 1}
!2 = !{ptr @conditional, !"kernel", i32 1}
!3 = !{ptr @top_tested, !"kernel", i32 1}
!4 = !{ptr @until_zero, !"kernel", i32 1}
!5 = !{ptr @with_call, !"kernel", i32 1}
!6 = !{ptr @loop_root, !"kernel", i32 1}

; The range starts at a pointer loaded (and checked) before the loop: the preheader
; check must read it through its recover-mode phi (security-suite ok_pointer_table).
; STATS: kernel loaded_row: 2 checks {{.*}} 1 loop ranges
define void @loaded_row(ptr %rows, i64 %r, i64 %n) {
entry:
  %s = getelementptr inbounds ptr, ptr %rows, i64 %r
  %row = load ptr, ptr %s, align 8
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %row, i64 %i
  %v = load float, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}
!7 = !{ptr @loaded_row, !"kernel", i32 1}
!8 = !{ptr @no_preheader, !"kernel", i32 1}
!9 = !{ptr @column, !"kernel", i32 1}
!10 = !{ptr @column_wrapping, !"kernel", i32 1}
!11 = !{ptr @column_unsigned, !"kernel", i32 1}
!12 = !{ptr @narrow_wrapping, !"kernel", i32 1}

; The same address on every trip (gemm's `As[ty][tx] = ...` in its tile loop, an
; accumulator that stays in memory): one check of that one slot in the preheader, none
; in the loop. The slot written on some trips only keeps its check in the loop.
; CHECK-LABEL: define void @same_slot(
; CHECK-LABEL: ph:
; CHECK: call i32 @__cusafe_fail(
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; STATS: kernel same_slot: 1 checks {{.*}} 1 loop ranges
define void @same_slot(ptr %acc, i64 %k, i64 %n) {
entry:
  %slot = getelementptr inbounds float, ptr %acc, i64 %k
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %f = sitofp i64 %i to float
  store float %f, ptr %slot, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; The same with a trip count scalar evolution cannot compute (while i * i < n): the
; first trip still writes the slot. One check in the preheader, none in the loop.
; CHECK-LABEL: define void @same_slot_squares(
; CHECK-LABEL: entry:
; CHECK: call i32 @__cusafe_fail(
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; STATS: kernel same_slot_squares: 1 checks {{.*}} 1 loop ranges
define void @same_slot_squares(ptr %acc, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %f = sitofp i64 %i to float
  store float %f, ptr %acc, align 4
  %i1 = add nuw nsw i64 %i, 1
  %sq = mul nuw nsw i64 %i1, %i1
  %more = icmp ult i64 %sq, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: define void @same_slot_some_trips(
; CHECK-LABEL: odd:
; CHECK: call i32 @__cusafe_fail(
; STATS: kernel same_slot_some_trips: 1 checks {{.*}} 0 loop ranges
define void @same_slot_some_trips(ptr %acc, i64 %k, i64 %n) {
entry:
  %slot = getelementptr inbounds float, ptr %acc, i64 %k
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %latch ]
  %bit = and i64 %i, 1
  %isodd = icmp ne i64 %bit, 0
  br i1 %isodd, label %odd, label %latch
odd:
  %f = sitofp i64 %i to float
  store float %f, ptr %slot, align 4
  br label %latch
latch:
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}
!13 = !{ptr @same_slot, !"kernel", i32 1}
!14 = !{ptr @same_slot_some_trips, !"kernel", i32 1}
!15 = !{ptr @same_slot_squares, !"kernel", i32 1}
!16 = !{ptr @leading, !"kernel", i32 1}
!17 = !{ptr @trailing, !"kernel", i32 1}

; The access on the leading trips only (hotspot3d's layer above, `k < n - 1 ? a[k + 1] :
; x`, on every trip but the last): trips k = 1 .. n - 2 of 1 .. n - 1 make it, so one
; check in the preheader of [a + 8, a + 4n), its length a select that is 0 (which fits
; any window) when no trip makes the access, and none in the loop.
; CHECK-LABEL: define void @leading(
; CHECK-LABEL: ph:
; CHECK: [[RUNS:%.*]] = call i64 @llvm.smin.i64(
; CHECK: [[NONE:%.*]] = icmp eq i64 {{%.*}}, 0
; CHECK: select i1 [[NONE]], i64 0,
; CHECK: call i32 @__cusafe_fail(
; CHECK-LABEL: loop:
; CHECK-NOT: call i32 @__cusafe_
; CHECK: ret void
; STATS: kernel leading: 1 checks {{.*}} 1 loop ranges
define void @leading(ptr %a, ptr addrspace(3) %out, i32 %n) {
entry:
  %c = icmp sgt i32 %n, 1
  br i1 %c, label %ph, label %exit
ph:
  %last = add nsw i32 %n, -1
  br label %loop
loop:
  %k = phi i32 [ 1, %ph ], [ %k1, %latch ]
  %acc = phi float [ 0.0, %ph ], [ %acc1, %latch ]
  %more = icmp slt i32 %k, %last
  br i1 %more, label %above, label %latch
above:
  %up = add nsw i32 %k, 1
  %i = sext i32 %up to i64
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  br label %latch
latch:
  %acc1 = phi float [ %v, %above ], [ %acc, %loop ]
  %k1 = add nsw i32 %k, 1
  %d = icmp slt i32 %k1, %n
  br i1 %d, label %loop, label %exit
exit:
  %r = phi float [ 0.0, %entry ], [ %acc1, %latch ]
  store float %r, ptr addrspace(3) %out, align 4
  ret void
}

; The access on the trailing trips (`k > m`): not a leading run, checked in the loop.
; CHECK-LABEL: define void @trailing(
; CHECK-LABEL: above:
; CHECK: call i32 @__cusafe_fail(
; STATS: kernel trailing: 1 checks {{.*}} 0 loop ranges
define void @trailing(ptr %a, ptr addrspace(3) %out, i32 %n, i32 %m) {
entry:
  %c = icmp sgt i32 %n, 1
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %k = phi i32 [ 1, %ph ], [ %k1, %latch ]
  %acc = phi float [ 0.0, %ph ], [ %acc1, %latch ]
  %late = icmp sgt i32 %k, %m
  br i1 %late, label %above, label %latch
above:
  %up = add nsw i32 %k, 1
  %i = sext i32 %up to i64
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  br label %latch
latch:
  %acc1 = phi float [ %v, %above ], [ %acc, %loop ]
  %k1 = add nsw i32 %k, 1
  %d = icmp slt i32 %k1, %n
  br i1 %d, label %loop, label %exit
exit:
  %r = phi float [ 0.0, %entry ], [ %acc1, %latch ]
  store float %r, ptr addrspace(3) %out, align 4
  ret void
}
