; Copies for blocks of a bounded shape (box_copy.rs): a kernel whose __shared__ accesses
; are in bounds only for blocks smaller than CUDA allows gets a second copy of its
; body; a new entry block tests blockDim against the shape, blocks that fit run the
; copy (its threadIdx/blockDim reads carry the shape's !range, so the accesses are
; proven there), every other block runs the original, still checked.
; The shape: the one proving the most, then keeping every array index inside its
; dimension (tile: 16x16 keeps `tx + 2` in a row of 18; 128x8 proves as much but runs
; off the row), then the most threads.
; A copy must save a check in a loop or at least four outside loops (its blockDim test
; runs in every thread).
; Must not fire: a device function (no blockDim to test), an access no shape proves
; (an index loaded from memory), an access proven without a shape (`tx & 15`), two
; accesses outside loops (hotspot's tile stores), the switch off, coverage builds,
; check elimination off.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: env CUSAFE_PASS_BOX_COPY=0 %opt %s 2>&1 | FileCheck %s --check-prefix=OFF
; RUN: env CUSAFE_PASS_OPT=0 %opt %s 2>&1 | FileCheck %s --check-prefix=OFF
; RUN: env CUSAFE_PASS_COVERAGE=1 %opt %s 2>&1 | FileCheck %s --check-prefix=OFF
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [18 x [18 x float]] undef, align 4
@line = internal addrspace(3) global [256 x float] undef, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()

; srad's stencil: tile[ty + 1][tx + 2] and its three other neighbours.
; STATS: kernel stencil: a copy for blockDim x <= 16, y <= 16 proves 4 more accesses in bounds
; STATS: kernel stencil: 1 checks {{.*}} 6 proven in bounds
; CHECK-LABEL: define void @stencil(
; CHECK-NEXT: cusafe.box:
; CHECK: [[NX:%.*]] = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; CHECK: icmp ule i32 [[NX]], 16
; CHECK: [[NY:%.*]] = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
; CHECK: icmp ule i32 [[NY]], 16
; CHECK: br i1 {{%.*}}, label %entry.box, label %entry
; The original keeps its check (and its cold path).
; CHECK: entry:
; CHECK: call {{.*}}@llvm.nvvm.read.ptx.sreg.tid.x(){{$}}
; CHECK: cusafe.trap
; CHECK: ret void
; The copy: ranges of the shape, no check.
; CHECK: entry.box:
; CHECK: call {{.*}}@llvm.nvvm.read.ptx.sreg.tid.x(), !range [[R16:![0-9]+]]
; CHECK: call {{.*}}@llvm.nvvm.read.ptx.sreg.tid.y(), !range [[R16]]
; CHECK-NOT: cusafe.trap
; CHECK: load float
; CHECK-NOT: cusafe.trap
; CHECK: ret void
define void @stencil() {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %r = add nuw nsw i32 %ty, 1
  %c = add nuw nsw i32 %tx, 2
  %rs = zext i32 %r to i64
  %cs = zext i32 %c to i64
  %p = getelementptr inbounds [18 x [18 x float]], ptr addrspace(3) @tile, i64 0, i64 %rs, i64 %cs
  %v = load float, ptr addrspace(3) %p, align 4
  %c1 = add nuw nsw i32 %tx, 1
  %c1s = zext i32 %c1 to i64
  %r2 = add nuw nsw i32 %ty, 2
  %r2s = zext i32 %r2 to i64
  %tys = zext i32 %ty to i64
  %txs = zext i32 %tx to i64
  %pn = getelementptr inbounds [18 x [18 x float]], ptr addrspace(3) @tile, i64 0, i64 %tys, i64 %c1s
  %vn = load float, ptr addrspace(3) %pn, align 4
  %ps = getelementptr inbounds [18 x [18 x float]], ptr addrspace(3) @tile, i64 0, i64 %r2s, i64 %c1s
  %vs = load float, ptr addrspace(3) %ps, align 4
  %pw = getelementptr inbounds [18 x [18 x float]], ptr addrspace(3) @tile, i64 0, i64 %rs, i64 %txs
  %vw = load float, ptr addrspace(3) %pw, align 4
  %a = fadd float %v, %vn
  %b = fadd float %vs, %vw
  %sum = fadd float %a, %b
  store float %sum, ptr addrspace(3) @line, align 4
  ret void
}

; A 1-D line[tx * (k & 1)] in a loop (no loop range: not a recurrence): one dimension,
; 256 threads; one check saved on every trip is worth the test.
; STATS: kernel reduce: a copy for blockDim x <= 256 proves 1 more accesses in bounds
; CHECK-LABEL: define void @reduce(
; CHECK: [[N:%.*]] = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; CHECK: icmp ule i32 [[N]], 256
; CHECK-NOT: ntid.y
; CHECK: ret void
define void @reduce(float %v, i32 %n) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %loop

loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %odd = and i32 %k, 1
  %j = mul nuw nsw i32 %tx, %odd
  %i = zext i32 %j to i64
  %p = getelementptr inbounds [256 x float], ptr addrspace(3) @line, i64 0, i64 %i
  store float %v, ptr addrspace(3) %p, align 4
  %k1 = add nuw nsw i32 %k, 1
  %more = icmp slt i32 %k1, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; Must not fire: two tile stores outside loops (hotspot's) save less than the test costs.
; STATS-NOT: kernel pair: a copy
; CHECK-LABEL: define void @pair(
; CHECK-NOT: cusafe.box
; CHECK: ret void
define void @pair(float %v, float %w) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tys = zext i32 %ty to i64
  %txs = zext i32 %tx to i64
  %p = getelementptr inbounds [18 x [18 x float]], ptr addrspace(3) @tile, i64 0, i64 %tys, i64 %txs
  store float %v, ptr addrspace(3) %p, align 4
  %i = zext i32 %tx to i64
  %q = getelementptr inbounds [256 x float], ptr addrspace(3) @line, i64 0, i64 %i
  store float %w, ptr addrspace(3) %q, align 4
  ret void
}

; Must not fire: no shape proves an index loaded from memory.
; STATS-NOT: kernel loaded: a copy
; CHECK-LABEL: define void @loaded(
; CHECK-NOT: cusafe.box
; CHECK: ret void
define void @loaded(ptr %idx, float %v) {
entry:
  %k = load i32, ptr %idx, align 4
  %i = zext i32 %k to i64
  %p = getelementptr inbounds [256 x float], ptr addrspace(3) @line, i64 0, i64 %i
  store float %v, ptr addrspace(3) %p, align 4
  ret void
}

; Must not fire: proven without a shape.
; STATS-NOT: kernel masked: a copy
; CHECK-LABEL: define void @masked(
; CHECK-NOT: cusafe.box
; CHECK: ret void
define void @masked(float %v) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = and i32 %tx, 15
  %i = zext i32 %m to i64
  %p = getelementptr inbounds [256 x float], ptr addrspace(3) @line, i64 0, i64 %i
  store float %v, ptr addrspace(3) %p, align 4
  ret void
}

; Must not fire: a device function.
; STATS-NOT: device_fn: a copy
; CHECK-LABEL: define void @device_fn(
; CHECK-NOT: cusafe.box
; CHECK: ret void
define void @device_fn(float %v) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %tx to i64
  %p = getelementptr inbounds [256 x float], ptr addrspace(3) @line, i64 0, i64 %i
  store float %v, ptr addrspace(3) %p, align 4
  ret void
}

; CHECK: [[R16]] = !{i32 0, i32 16}
; OFF-NOT: cusafe.box
; OFF-NOT: a copy for

!nvvm.annotations = !{!0, !1, !2, !3, !4}
!0 = !{ptr @stencil, !"kernel", i32 1}
!1 = !{ptr @reduce, !"kernel", i32 1}
!2 = !{ptr @loaded, !"kernel", i32 1}
!3 = !{ptr @masked, !"kernel", i32 1}
!4 = !{ptr @pair, !"kernel", i32 1}
