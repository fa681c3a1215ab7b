; Sunk tile stores (sink.rs): the `__shared__` store of a triangle whose run block makes
; one load moves down the join to its first call (the barrier), under the triangle's
; condition, when the join loads global memory first and nothing there can touch the
; stored bytes (nw's `if (tx == 0) temp[0][0] = matrix[...]` before its tile loads).
; When nothing before the barrier may write global memory and the run block's values
; are used in it only, the whole block moves, load included: the corner's load then
; joins the halo's in one flush (lifted, with the halo's check). Otherwise the run block
; keeps the load alone, which is then lifted; value and address reach the store
; through phis of the join. Default on with lifted checks (`CUSAFE_PASS_LIFT`).
; Must not fire: a store not proven inside its object (its check would report later),
; the join reads the stored object where it may meet the store, no load before the
; barrier, a device function (its pointer parameters may be shared), lifts off; the
; whole block stays (only the store moves) when the join stores to global memory.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: env CUSAFE_PASS_LIFT=0 %opt %s | FileCheck %s --check-prefix=OFF
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@temp = internal addrspace(3) global [17 x [17 x i32]] undef, align 4
@ref = internal addrspace(3) global [16 x i32] undef, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

; nw's shape: the corner's run block, load and store, moves past the row loads, the
; store to another object and the halo store at temp[0][tx + 1] (offsets 4 and up:
; apart from 0..4), to the barrier; its check is lifted there and flushed with the
; halo store's.
; CHECK-LABEL: define {{.*}}@corner(
; The old run block is empty.
; CHECK: then:
; CHECK-NEXT: br label %join
; CHECK: join:
; CHECK-NOT: phi
; CHECK: load i32, ptr addrspace(1) %pr
; CHECK: store i32 {{.*}}, ptr addrspace(3) %pref
; CHECK: load i32, ptr addrspace(1) %pn
; CHECK: store i32 {{.*}}, ptr addrspace(3) %ph
; The moved block: its check's verdict selected on the old condition, the load and
; the store under it, then one flush for both checks before the barrier.
; CHECK: [[BAD:%.*]] = select i1 %first, i1 {{%.*}}, i1 false
; CHECK: br i1 {{%.*}}, label %[[SUNK:[0-9]+]], label %[[AFTER:[0-9]+]]
; CHECK: [[SUNK]]:
; CHECK-NEXT: [[V:%.*]] = load i32, ptr addrspace(1) %m
; CHECK: store i32 [[V]], ptr addrspace(3) @temp
; CHECK: [[AFTER]]:
; CHECK-NEXT: or i1 {{%.*}}, [[BAD]]
; CHECK: call void @llvm.nvvm.barrier0()
; OFF-LABEL: define {{.*}}@corner(
; OFF: store i32 {{%.*}}, ptr addrspace(3) @temp
; OFF: load i32, ptr addrspace(1) %pr
define void @corner(ptr addrspace(1) %m, ptr addrspace(1) %r) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tx, 0
  br i1 %first, label %then, label %join

then:
  %v = load i32, ptr addrspace(1) %m, align 4
  store i32 %v, ptr addrspace(3) @temp, align 4
  br label %join

join:
  %i = zext i32 %tx to i64
  %pr = getelementptr inbounds i32, ptr addrspace(1) %r, i64 %i
  %a = load i32, ptr addrspace(1) %pr, align 4
  %pref = getelementptr inbounds [16 x i32], ptr addrspace(3) @ref, i64 0, i64 0
  store i32 %a, ptr addrspace(3) %pref, align 4
  %pn = getelementptr inbounds i32, ptr addrspace(1) %m, i64 %i
  %b = load i32, ptr addrspace(1) %pn, align 4
  %c = add nuw nsw i32 %tx, 1
  %ci = zext i32 %c to i64
  %ph = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 0, i64 %ci
  store i32 %b, ptr addrspace(3) %ph, align 4
  call void @llvm.nvvm.barrier0()
  ret void
}

; The same with a store to global memory before the barrier: the corner's load may
; not move past it, so only the store sinks, its value through a phi of the join.
; CHECK-LABEL: define {{.*}}@corner_global_store(
; CHECK: then:
; CHECK-NEXT: %v = load i32, ptr addrspace(1) %m
; CHECK-NOT: store i32 %v
; CHECK: join:
; CHECK-NEXT: [[P:%.*]] = phi i32 [ %v, %{{.*}} ], [ poison, %entry ]
; CHECK: store i32 {{.*}}, ptr addrspace(1) %po
; CHECK: br i1 %first, label %[[SUNK:[0-9]+]], label %[[REST:[0-9]+]]
; CHECK: [[SUNK]]:
; CHECK-NEXT: store i32 [[P]], ptr addrspace(3) @temp
; CHECK: [[REST]]:
; CHECK: call void @llvm.nvvm.barrier0()
define void @corner_global_store(ptr addrspace(1) %m, ptr addrspace(1) %r, ptr addrspace(1) %o) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tx, 0
  br i1 %first, label %then, label %join

then:
  %v = load i32, ptr addrspace(1) %m, align 4
  store i32 %v, ptr addrspace(3) @temp, align 4
  br label %join

join:
  %i = zext i32 %tx to i64
  %pr = getelementptr inbounds i32, ptr addrspace(1) %r, i64 %i
  %a = load i32, ptr addrspace(1) %pr, align 4
  %po = getelementptr inbounds i32, ptr addrspace(1) %o, i64 %i
  store i32 %a, ptr addrspace(1) %po, align 4
  call void @llvm.nvvm.barrier0()
  ret void
}

; Must not fire: the join stores temp[0][tx], which is the corner for thread 0.
; CHECK-LABEL: define {{.*}}@overlap(
; CHECK: store i32 %v, ptr addrspace(3) @temp
define void @overlap(ptr addrspace(1) %m, ptr addrspace(1) %r) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tx, 0
  br i1 %first, label %then, label %join

then:
  %v = load i32, ptr addrspace(1) %m, align 4
  store i32 %v, ptr addrspace(3) @temp, align 4
  br label %join

join:
  %i = zext i32 %tx to i64
  %pr = getelementptr inbounds i32, ptr addrspace(1) %r, i64 %i
  %a = load i32, ptr addrspace(1) %pr, align 4
  %ph = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 0, i64 %i
  store i32 %a, ptr addrspace(3) %ph, align 4
  call void @llvm.nvvm.barrier0()
  ret void
}

; Must not fire: nothing to wait for, no load between the triangle and the barrier.
; CHECK-LABEL: define {{.*}}@no_load(
; CHECK: store i32 %v, ptr addrspace(3) @temp
define void @no_load(ptr addrspace(1) %m) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tx, 0
  br i1 %first, label %then, label %join

then:
  %v = load i32, ptr addrspace(1) %m, align 4
  store i32 %v, ptr addrspace(3) @temp, align 4
  br label %join

join:
  call void @llvm.nvvm.barrier0()
  ret void
}

; Must not fire: a device function's generic pointer parameter may point to the tile.
; CHECK-LABEL: define {{.*}}@device_fn(
; CHECK: store i32 %v, ptr addrspace(3) @temp
define void @device_fn(ptr addrspace(1) %m, ptr %q) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tx, 0
  br i1 %first, label %then, label %join

then:
  %v = load i32, ptr addrspace(1) %m, align 4
  store i32 %v, ptr addrspace(3) @temp, align 4
  br label %join

join:
  %a = load i32, ptr %q, align 4
  store i32 %a, ptr addrspace(1) %m, align 4
  call void @llvm.nvvm.barrier0()
  ret void
}

; Must not fire: temp[0][k] for any k may leave the tile; it keeps its check, in order.
; CHECK-LABEL: define {{.*}}@unproven(
; CHECK: store i32 {{%.*}}, ptr addrspace(3) %pk
; CHECK: load i32, ptr addrspace(1) %pr
define void @unproven(ptr addrspace(1) %m, ptr addrspace(1) %r, i64 %k) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %tx, 0
  br i1 %first, label %then, label %join

then:
  %v = load i32, ptr addrspace(1) %m, align 4
  %pk = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 0, i64 %k
  store i32 %v, ptr addrspace(3) %pk, align 4
  br label %join

join:
  %i = zext i32 %tx to i64
  %pr = getelementptr inbounds i32, ptr addrspace(1) %r, i64 %i
  %a = load i32, ptr addrspace(1) %pr, align 4
  store i32 %a, ptr addrspace(1) %m, align 4
  call void @llvm.nvvm.barrier0()
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4}
!4 = !{ptr @corner_global_store, !"kernel", i32 1}
!0 = !{ptr @corner, !"kernel", i32 1}
!1 = !{ptr @overlap, !"kernel", i32 1}
!2 = !{ptr @no_load, !"kernel", i32 1}
!3 = !{ptr @unproven, !"kernel", i32 1}
