; Lifted checks (lift.rs; elim/defer.rs, `liftable`; check.rs, `lift_branch`): the
; check of a load that one side of an `if` makes is built at the `if`'s branch. The
; pure arithmetic of the load's block (its address) moves before the branch, the branch
; goes to the load only where its old condition held and the check did, and the failed
; verdict, and-ed with the old condition by a `select` (the speculated address may be
; poison where the load would not run), waits for one flush after the triangles. The
; load's block is left with the load alone, the shape ptxas predicates: gemm's two tile
; loads issue back to back again. The block may also store the loaded value to a
; `__shared__` tile that needs no check (a halo load, @halo). Default on
; (`CUSAFE_PASS_LIFT`), trap-mode builds with predicated deferred branches only.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: env CUSAFE_PASS_LIFT=0 %opt %s | FileCheck %s --check-prefix=OFF
; RUN: env CUSAFE_PASS_PREDICATE=0 %opt %s | FileCheck %s --check-prefix=OFF
; RUN: %calls %opt %s | FileCheck %s --check-prefix=OFF
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Two tile loads (gemm's shape), the first on the branch's true side, the second on
; its false side, then a barrier and a store (not lifted: no triangle; it keeps its
; branch). The flush of both loads goes before the barrier: a lifted region flushes
; before any call, so its values are not live across what follows (syrk's unrolled tile
; product). The first load's index is an `add nsw` that moves up with the address.
; CHECK-LABEL: define void @tiles(
; CHECK: entry:
; CHECK: %ci = icmp slt i32 %i, %n
; CHECK-NEXT: [[IA:%.*]] = add nsw i32 %i, %k
; CHECK-NEXT: [[XA:%.*]] = sext i32 [[IA]] to i64
; CHECK-NEXT: [[PA:%.*]] = getelementptr inbounds float, ptr %a, i64 [[XA]]
; CHECK: [[IN_A:%.*]] = icmp ult i64 %{{[0-9]+}}, %cusafe.limit.0
; CHECK-NEXT: [[FAIL_A:%.*]] = xor i1 [[IN_A]], true
; CHECK-NEXT: [[BAD_A:%.*]] = select i1 %ci, i1 [[FAIL_A]], i1 false
; CHECK-NEXT: [[RUN_A:%.*]] = xor i1 %ci, [[BAD_A]]
; CHECK-NEXT: br i1 [[RUN_A]], label %loada, label %joina
; CHECK: loada:
; CHECK-NEXT: %va = load float, ptr [[PA]], align 4
; CHECK-NEXT: br label
; CHECK: joina:
; CHECK: %ck = icmp slt i32 %k, %n
; CHECK: [[IN_B:%.*]] = icmp ult i64 %{{[0-9]+}}, %cusafe.limit.1
; CHECK-NEXT: [[FAIL_B:%.*]] = xor i1 [[IN_B]], true
; CHECK-NEXT: [[BAD_B:%.*]] = select i1 %ck, i1 false, i1 [[FAIL_B]]
; CHECK-NEXT: [[SKIP_B:%.*]] = or i1 %ck, [[BAD_B]]
; CHECK-NEXT: br i1 [[SKIP_B]], label %joinb, label %loadb
; CHECK: loadb:
; CHECK-NEXT: %vb = load float, ptr
; CHECK-NEXT: br label
; CHECK: joinb:
; CHECK: [[ANY:%.*]] = or i1 [[BAD_A]], [[BAD_B]]
; CHECK-NEXT: br i1 [[ANY]], {{.*}}!prof
; CHECK: br i1 [[BAD_A]], {{.*}}!prof
; CHECK: call void %cusafe.trap{{[0-9]*}}(i64 %{{[0-9]+}}, i64 %cusafe.start.0, i64 %cusafe.limit.0, i32 4,
; CHECK: br i1 [[BAD_B]], {{.*}}!prof
; CHECK: call void %cusafe.trap{{[0-9]*}}(i64 %{{[0-9]+}}, i64 %cusafe.start.1, i64 %cusafe.limit.1, i32 4,
; CHECK: call void @llvm.nvvm.barrier0()
; CHECK: icmp ult i64 %{{[0-9]+}}, %cusafe.limit.2
; CHECK: call void %cusafe.trap{{[0-9]*}}(i64 %{{[0-9]+}}, i64 %cusafe.start.2, i64 %cusafe.limit.2, i32 4,
; CHECK: store float %s, ptr %po
; CHECK: ret void
; STATS: kernel tiles: 3 checks {{.*}} 2 deferred (branch later in the block), 2 of them lifted (checked at their if's branch)
; OFF-LABEL: define void @tiles(
; OFF: loada:
; OFF: icmp ult i64 %{{[0-9]+}}, %cusafe.limit.0
; OFF: %va = load float
; OFF-LABEL: define float @heap_arg(
; OFF: if.then:
; OFF: load i64, ptr addrspace(1)
; OFF: %v = load float
define void @tiles(ptr %a, ptr %b, ptr %out, i32 %n, i32 %i, i32 %k) {
entry:
  %ci = icmp slt i32 %i, %n
  br i1 %ci, label %loada, label %joina
loada:
  %ia = add nsw i32 %i, %k
  %xa = sext i32 %ia to i64
  %pa = getelementptr inbounds float, ptr %a, i64 %xa
  %va = load float, ptr %pa, align 4
  br label %joina
joina:
  %ta = phi float [ %va, %loada ], [ 0.0, %entry ]
  %ck = icmp slt i32 %k, %n
  br i1 %ck, label %joinb, label %loadb
loadb:
  %xb = sext i32 %k to i64
  %pb = getelementptr inbounds float, ptr %b, i64 %xb
  %vb = load float, ptr %pb, align 4
  br label %joinb
joinb:
  %tb = phi float [ %vb, %loadb ], [ 1.0, %joina ]
  %s = fadd float %ta, %tb
  call void @llvm.nvvm.barrier0()
  %xo = sext i32 %i to i64
  %po = getelementptr inbounds float, ptr %out, i64 %xo
  store float %s, ptr %po, align 4
  ret void
}

; A device function's heap argument: its root half (the header load) moves to before
; the branch with the check, like a root half hoisted out of a loop that runs its check
; on some trips only.
; CHECK-LABEL: define float @heap_arg(
; CHECK: entry:
; CHECK: %cusafe.size = load i64
; CHECK: br i1 %{{[0-9]+}}, label %if.then, label %join
; CHECK: if.then:
; CHECK-NOT: load i64
; CHECK: %v = load float, ptr
; CHECK-NEXT: br label
; STATS: device function heap_arg: 1 checks {{.*}} 1 of them lifted
define float @heap_arg(ptr %a, i64 %i, i1 %c) {
entry:
  br i1 %c, label %if.then, label %join
if.then:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  br label %join
join:
  %r = phi float [ %v, %if.then ], [ 0.0, %entry ]
  ret float %r
}

; Not lifted: a root loaded before the branch (its header load could not move above
; the test that guards it); two loads in the block; arithmetic on the loaded value in
; the block; a join that a third edge enters; a load of a pointer.
; CHECK-LABEL: define float @loaded_root(
; CHECK: if.then:
; CHECK: load i64, ptr addrspace(1)
; CHECK: %v = load float
; STATS: device function loaded_root: {{.*}} 0 of them lifted
define float @loaded_root(ptr %pp, i64 %i, i1 %c) {
entry:
  %a = load ptr, ptr %pp, align 8
  br i1 %c, label %if.then, label %join
if.then:
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  br label %join
join:
  %r = phi float [ %v, %if.then ], [ 0.0, %entry ]
  ret float %r
}

; STATS: kernel negatives: {{.*}} 0 of them lifted
define void @negatives(ptr %a, ptr %pp, ptr %out, i64 %i, i1 %c, i1 %d) {
entry:
  br i1 %c, label %two, label %j1
two:
  %p1 = getelementptr inbounds float, ptr %a, i64 %i
  %v1 = load float, ptr %p1, align 4
  %p2 = getelementptr inbounds float, ptr %p1, i64 1
  %v2 = load float, ptr %p2, align 4
  %s12 = fadd float %v1, %v2
  br label %j1
j1:
  %t1 = phi float [ %s12, %two ], [ 0.0, %entry ]
  br i1 %c, label %after, label %j2
after:
  %p3 = getelementptr inbounds float, ptr %a, i64 %i
  %v3 = load float, ptr %p3, align 4
  %v3x = fmul float %v3, 2.0
  br label %j2
j2:
  %t2 = phi float [ %v3x, %after ], [ %t1, %j1 ]
  br i1 %c, label %three, label %j3
three:
  %p4 = getelementptr inbounds float, ptr %a, i64 %i
  %v4 = load float, ptr %p4, align 4
  br label %j3
other:
  br label %j3
j3:
  %t3 = phi float [ %v4, %three ], [ %t2, %j2 ], [ 0.0, %other ]
  br i1 %d, label %ptr, label %j4
ptr:
  %q = getelementptr inbounds ptr, ptr %pp, i64 %i
  %loaded = load ptr, ptr %q, align 8
  br label %j4
j4:
  %t4 = phi ptr [ %loaded, %ptr ], [ %out, %j3 ]
  store float %t3, ptr %t4, align 4
  ret void
}

; Halo loads (srad_2's `if (ty == 15) ctile[16][tx] = coef[...]`): the load block also
; stores the loaded value to a `__shared__` tile, through a generic pointer that can
; only be shared, at an index proven in bounds; its address arithmetic stays after the
; load. Lifted, store and all: the branch runs the block only where the check held, and
; one flush goes before the barrier. The same block storing to a tile index the pass
; cannot bound (the store has a check of its own) is not lifted, nor one whose store is
; to global memory.
@tile = internal addrspace(3) global [17 x [17 x float]] undef, align 4
; CHECK-LABEL: define void @halo(
; CHECK: br i1 {{%.*}}, label %row, label %join
; CHECK: row:
; CHECK-NEXT: getelementptr inbounds float, ptr %cusafe.strip, i64 %i
; CHECK-NEXT: %v = load float
; CHECK-NOT: cusafe.trap
; CHECK: store float %v, ptr %s
; CHECK-NOT: cusafe.trap
; CHECK: join:
; CHECK: call void %cusafe.trap
; CHECK: call void @llvm.nvvm.barrier0()
; STATS: device function halo: 1 checks {{.*}} 1 of them lifted
; STATS: device function halo_checked_store: {{.*}} 0 of them lifted
; STATS: device function halo_global_store: {{.*}} 0 of them lifted
define void @halo(ptr %j, i64 %i, i32 %ty, i32 %tx) {
entry:
  %c = icmp eq i32 %ty, 15
  %t = and i32 %tx, 15
  %x = zext nneg i32 %t to i64
  br i1 %c, label %row, label %join
row:
  %p = getelementptr inbounds float, ptr %j, i64 %i
  %v = load float, ptr %p, align 4
  %s = getelementptr inbounds [17 x float], ptr getelementptr inbounds (i8, ptr addrspacecast (ptr addrspace(3) @tile to ptr), i64 1088), i64 0, i64 %x
  store float %v, ptr %s, align 4
  br label %join
join:
  call void @llvm.nvvm.barrier0()
  ret void
}

define void @halo_checked_store(ptr %j, i64 %i, i32 %ty, i64 %x) {
entry:
  %c = icmp eq i32 %ty, 15
  br i1 %c, label %row, label %join
row:
  %p = getelementptr inbounds float, ptr %j, i64 %i
  %v = load float, ptr %p, align 4
  %s = getelementptr inbounds [17 x float], ptr getelementptr inbounds (i8, ptr addrspacecast (ptr addrspace(3) @tile to ptr), i64 1088), i64 0, i64 %x
  store float %v, ptr %s, align 4
  br label %join
join:
  call void @llvm.nvvm.barrier0()
  ret void
}

define void @halo_global_store(ptr %j, ptr addrspace(1) %out, i64 %i, i32 %ty) {
entry:
  %c = icmp eq i32 %ty, 15
  br i1 %c, label %row, label %join
row:
  %p = getelementptr inbounds float, ptr %j, i64 %i
  %v = load float, ptr %p, align 4
  store float %v, ptr addrspace(1) %out, align 4
  br label %join
join:
  call void @llvm.nvvm.barrier0()
  ret void
}

declare void @llvm.nvvm.barrier0()

!nvvm.annotations = !{!0, !1}
!0 = !{ptr @tiles, !"kernel", i32 1}
!1 = !{ptr @negatives, !"kernel", i32 1}
