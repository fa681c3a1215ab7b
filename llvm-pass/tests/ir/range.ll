; Value intervals (intervals.rs, elim/mod.rs): an access of a statically sized object
; whose offset, over the values its indices can take at the access, stays inside the
; object is not checked. The values come from loop trip counts (ScalarEvolution), range attributes,
; arithmetic, and the branch conditions every path to the access passes; `m - tx` under
; `tx <= m` is bounded by the relation itself. Must not fire: the other edge of the
; condition, an access after the condition's region joins, a trip count one too many,
; an index whose arithmetic can wrap, an unsigned bound that may be negative.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %opt_noelim %s -o %t.noopt.ll 2>%t.noopt.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: FileCheck %s --check-prefix=NOOPT < %t.noopt.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@temp = internal addrspace(3) global [17 x [17 x i32]] undef, align 4
@row = internal addrspace(3) global [16 x i32] undef, align 4
@bytes = internal addrspace(3) global [256 x i8] undef, align 1

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

; nw's anti-diagonal sweep: for m in 0..16, if (tx <= m) temp[m - tx + 1][tx + 1] =
; temp[m - tx][tx] + temp[m - tx + 1][tx] + temp[m - tx][tx + 1]. The row index is in
; 0..=15 (+1) only through the relation; tx <= m bounds tx by 15. Then the lower-right
; half: for m from 14 down to 0, if (tx <= m) temp[16 - tx][tx + 16 - m]. No check.
; CHECK-LABEL: define void @sweep(
; CHECK-NOT: cusafe.trap
; CHECK-LABEL: define void @wrong_edge(
; STATS: function sweep: 0 checks {{.*}} 6 proven in bounds
; NOOPT: function sweep: {{[1-9][0-9]*}} checks {{.*}} 0 proven in bounds
define void @sweep() {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %head
head:
  %m = phi i32 [ 0, %entry ], [ %m1, %latch ]
  %out = icmp ugt i32 %tx, %m
  br i1 %out, label %latch, label %cell
cell:
  %d = sub nsw i32 %m, %tx
  %d1 = add nsw i32 %d, 1
  %x1 = add nuw nsw i32 %tx, 1
  %ds = sext i32 %d to i64
  %d1s = sext i32 %d1 to i64
  %xs = zext i32 %tx to i64
  %x1s = zext i32 %x1 to i64
  %nw = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %ds, i64 %xs
  %w = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %d1s, i64 %xs
  %n = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %ds, i64 %x1s
  %a = load i32, ptr addrspace(3) %nw, align 4
  %b = load i32, ptr addrspace(3) %w, align 4
  %c = load i32, ptr addrspace(3) %n, align 4
  %s1 = add i32 %a, %b
  %s2 = add i32 %s1, %c
  %here = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %d1s, i64 %x1s
  store i32 %s2, ptr addrspace(3) %here, align 4
  br label %latch
latch:
  call void @llvm.nvvm.barrier0()
  %m1 = add nuw nsw i32 %m, 1
  %done = icmp eq i32 %m1, 16
  br i1 %done, label %lower, label %head
lower:
  %tx16 = add nuw nsw i32 %tx, 16
  %y = sub nsw i32 16, %tx
  %ys = sext i32 %y to i64
  br label %lhead
lhead:
  %k = phi i32 [ 14, %lower ], [ %k1, %llatch ]
  %lout = icmp ugt i32 %tx, %k
  br i1 %lout, label %llatch, label %lcell
lcell:
  %x = sub nuw nsw i32 %tx16, %k
  %xm1 = add nsw i32 %x, -1
  %xx = sext i32 %xm1 to i64
  %xz = zext i32 %x to i64
  %l = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %ys, i64 %xx
  %lv = load i32, ptr addrspace(3) %l, align 4
  %h = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %ys, i64 %xz
  store i32 %lv, ptr addrspace(3) %h, align 4
  br label %llatch
llatch:
  call void @llvm.nvvm.barrier0()
  %k1 = add nsw i32 %k, -1
  %ldone = icmp eq i32 %k, 0
  br i1 %ldone, label %exit, label %lhead
exit:
  ret void
}

; The access on the edge where tx > m: m - tx is negative there. Checked.
; CHECK: call void %cusafe.trap
; STATS: function wrong_edge: 1 checks {{.*}} 0 proven in bounds
define void @wrong_edge() {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %head
head:
  %m = phi i32 [ 0, %entry ], [ %m1, %latch ]
  %out = icmp ugt i32 %tx, %m
  br i1 %out, label %cell, label %latch
cell:
  %d = sub nsw i32 %m, %tx
  %ds = sext i32 %d to i64
  %xs = zext i32 %tx to i64
  %p = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %ds, i64 %xs
  store i32 0, ptr addrspace(3) %p, align 4
  br label %latch
latch:
  %m1 = add nuw nsw i32 %m, 1
  %done = icmp eq i32 %m1, 16
  br i1 %done, label %exit, label %head
exit:
  ret void
}

; The condition's region has joined before the access: tx is any thread index. Checked.
; STATS: function after_join: 1 checks {{.*}} 0 proven in bounds
define void @after_join(i32 %m) {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %small = icmp ult i32 %tx, 16
  br i1 %small, label %then, label %join
then:
  call void @llvm.nvvm.barrier0()
  br label %join
join:
  %xs = zext i32 %tx to i64
  %p = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %xs
  store i32 0, ptr addrspace(3) %p, align 4
  ret void
}

; A loop of 16 trips over row[16] needs no check; one of 17 trips does.
; STATS: function trips16: 0 checks {{.*}} 1 proven in bounds
; STATS: function trips17: 1 checks {{.*}} 0 proven in bounds
define void @trips16() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %p = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %i
  store i32 0, ptr addrspace(3) %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i1, 16
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

define void @trips17() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %p = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %i
  store i32 0, ptr addrspace(3) %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i1, 17
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; An 8-bit index x + 100 with x in 0..=100: in exact integers 100..=200, inside the 256
; bytes, but the i8 add wraps to negative values, which the GEP sign-extends. Checked.
; With x in 0..=27 it cannot wrap: proven.
; STATS: function wraps: 1 checks {{.*}} 0 proven in bounds
; STATS: function no_wrap: 0 checks {{.*}} 1 proven in bounds
define void @wraps(i8 %v) {
  %x = and i8 %v, 100
  %i = add i8 %x, 100
  %p = getelementptr inbounds [256 x i8], ptr addrspace(3) @bytes, i64 0, i8 %i
  store i8 0, ptr addrspace(3) %p, align 1
  ret void
}

define void @no_wrap(i8 %v) {
  %x = and i8 %v, 27
  %i = add i8 %x, 100
  %p = getelementptr inbounds [256 x i8], ptr addrspace(3) @bytes, i64 0, i8 %i
  store i8 0, ptr addrspace(3) %p, align 1
  ret void
}

; i <u n bounds i only by a non-negative n: an argument n may be negative (huge
; unsigned), so row[i] is checked; n & 15 is in 0..=15, so row[i] is proven.
; STATS: function any_bound: 1 checks {{.*}} 0 proven in bounds
; STATS: function masked_bound: 0 checks {{.*}} 1 proven in bounds
define void @any_bound(i32 %i, i32 %n) {
entry:
  %in = icmp ult i32 %i, %n
  br i1 %in, label %then, label %exit
then:
  %xs = sext i32 %i to i64
  %p = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %xs
  store i32 0, ptr addrspace(3) %p, align 4
  br label %exit
exit:
  ret void
}

define void @masked_bound(i32 %i, i32 %n0) {
entry:
  %n = and i32 %n0, 15
  %in = icmp ult i32 %i, %n
  br i1 %in, label %then, label %exit
then:
  %xs = sext i32 %i to i64
  %p = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %xs
  store i32 0, ptr addrspace(3) %p, align 4
  br label %exit
exit:
  ret void
}

; hotspot's shape: the neighbours n = max(ty - 1, lo) and s = min(ty + 1, hi), read
; where `lo <= ty <= hi` and `i < ty <= 14 - i` hold, the conditions or-ed by
; `select a, true, b` and `or` on the false edge. lo and hi are bounded only by ty,
; ty by the loop's i and by them (a cycle: the second round settles it). No check.
; The same read where ty's upper bound is missing (`ty > i` only) is checked.
; STATS: function clamped: 0 checks {{.*}} 3 proven in bounds
; STATS: function clamped_open: 3 checks {{.*}} 0 proven in bounds
define void @clamped(i32 %iters, i32 %lo0, i32 %hi0) {
entry:
  %ty = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tym = add nsw i32 %ty, -1
  %typ = add nuw nsw i32 %ty, 1
  %n = call i32 @llvm.smax.i32(i32 %tym, i32 %lo0)
  %s = call i32 @llvm.smin.i32(i32 %typ, i32 %hi0)
  %below = icmp slt i32 %ty, %lo0
  %above = icmp sgt i32 %ty, %hi0
  %outside = or i1 %below, %above
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %top = sub nsw i32 14, %i
  %after = icmp ugt i32 %ty, %i
  %before = icmp sle i32 %ty, %top
  %inner = and i1 %after, %before
  br i1 %inner, label %test, label %latch
test:
  %skip = select i1 %outside, i1 true, i1 false
  br i1 %skip, label %latch, label %cell
cell:
  %ns = sext i32 %n to i64
  %ss = sext i32 %s to i64
  %ts = zext i32 %ty to i64
  %pn = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %ns
  %ps = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %ss
  %pt = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %ts
  %a = load i32, ptr addrspace(3) %pn, align 4
  %b = load i32, ptr addrspace(3) %ps, align 4
  %c = add i32 %a, %b
  store i32 %c, ptr addrspace(3) %pt, align 4
  br label %latch
latch:
  call void @llvm.nvvm.barrier0()
  %i1 = add nuw nsw i32 %i, 1
  %done = icmp eq i32 %i1, %iters
  br i1 %done, label %exit, label %head
exit:
  ret void
}

define void @clamped_open(i32 %iters, i32 %lo0, i32 %hi0) {
entry:
  %ty = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tym = add nsw i32 %ty, -1
  %typ = add nuw nsw i32 %ty, 1
  %n = call i32 @llvm.smax.i32(i32 %tym, i32 %lo0)
  %s = call i32 @llvm.smin.i32(i32 %typ, i32 %hi0)
  %below = icmp slt i32 %ty, %lo0
  %above = icmp sgt i32 %ty, %hi0
  %outside = or i1 %below, %above
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %after = icmp ugt i32 %ty, %i
  br i1 %after, label %test, label %latch
test:
  %skip = select i1 %outside, i1 true, i1 false
  br i1 %skip, label %latch, label %cell
cell:
  %ns = sext i32 %n to i64
  %ss = sext i32 %s to i64
  %ts = zext i32 %ty to i64
  %pn = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %ns
  %ps = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %ss
  %pt = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %ts
  %a = load i32, ptr addrspace(3) %pn, align 4
  %b = load i32, ptr addrspace(3) %ps, align 4
  %c = add i32 %a, %b
  store i32 %c, ptr addrspace(3) %pt, align 4
  br label %latch
latch:
  call void @llvm.nvvm.barrier0()
  %i1 = add nuw nsw i32 %i, 1
  %done = icmp eq i32 %i1, %iters
  br i1 %done, label %exit, label %head
exit:
  ret void
}

declare i32 @llvm.smax.i32(i32, i32)
declare i32 @llvm.smin.i32(i32, i32)

; The sweep as loop unrolling leaves its second copy: m steps by 2 and the copy works on
; m | 1 (a disjoint or: m + 1), under tx <= m | 1. The fact's constant is peeled like the
; difference's: tx <= m + 1 makes (m | 1) - tx >= 0. No check.
; CHECK-LABEL: define void @sweep_unrolled(
; CHECK-NOT: cusafe.trap
; CHECK-LABEL: define void @unrolled_off_by_one(
; STATS: function sweep_unrolled: 0 checks {{.*}} 2 proven in bounds
define void @sweep_unrolled() {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %head
head:
  %m = phi i32 [ 0, %entry ], [ %m2, %latch ]
  %m1 = or disjoint i32 %m, 1
  %out = icmp ugt i32 %tx, %m1
  br i1 %out, label %latch, label %cell
cell:
  %d = sub nsw i32 %m1, %tx
  %d1 = add nsw i32 %d, 1
  %x1 = add nuw nsw i32 %tx, 1
  %ds = sext i32 %d to i64
  %d1s = sext i32 %d1 to i64
  %xs = zext i32 %tx to i64
  %x1s = zext i32 %x1 to i64
  %nw = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %ds, i64 %xs
  %a = load i32, ptr addrspace(3) %nw, align 4
  %here = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %d1s, i64 %x1s
  store i32 %a, ptr addrspace(3) %here, align 4
  br label %latch
latch:
  call void @llvm.nvvm.barrier0()
  %m2 = add nuw nsw i32 %m, 2
  %done = icmp eq i32 %m2, 16
  br i1 %done, label %exit, label %head
exit:
  ret void
}

; Under tx <= m | 1 (m + 1), m - tx can be -1 (tx = m + 1): the row before temp. Checked.
; CHECK: call void %cusafe.trap
; STATS: function unrolled_off_by_one: 1 checks {{.*}} 0 proven in bounds
define void @unrolled_off_by_one() {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %head
head:
  %m = phi i32 [ 0, %entry ], [ %m2, %latch ]
  %m1 = or disjoint i32 %m, 1
  %out = icmp ugt i32 %tx, %m1
  br i1 %out, label %latch, label %cell
cell:
  %d = sub nsw i32 %m, %tx
  %ds = sext i32 %d to i64
  %xs = zext i32 %tx to i64
  %p = getelementptr inbounds [17 x [17 x i32]], ptr addrspace(3) @temp, i64 0, i64 %ds, i64 %xs
  store i32 0, ptr addrspace(3) %p, align 4
  br label %latch
latch:
  %m2 = add nuw nsw i32 %m, 2
  %done = icmp eq i32 %m2, 16
  br i1 %done, label %exit, label %head
exit:
  ret void
}

; hotspot's `computed`: a flag that is true only from the block where tx < 16 held, and
; the access under `if (flag)` later in the trip. The flag's phi brings that block's
; facts along. No check.
; CHECK-LABEL: define void @flag_phi(
; CHECK-NOT: cusafe.trap
; CHECK-LABEL: define void @flag_from_last_trip(
; STATS: function flag_phi: 0 checks {{.*}} 1 proven in bounds
define void @flag_phi() {
entry:
  %tx = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %ok = icmp ult i32 %tx, 16
  br i1 %ok, label %then, label %join
then:
  call void @llvm.nvvm.barrier0()
  br label %join
join:
  %flag = phi i1 [ true, %then ], [ false, %head ]
  br i1 %flag, label %use, label %latch
use:
  %xs = zext i32 %tx to i64
  %p = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %xs
  store i32 0, ptr addrspace(3) %p, align 4
  br label %latch
latch:
  %i1 = add nuw nsw i32 %i, 1
  %done = icmp eq i32 %i1, 4
  br i1 %done, label %exit, label %head
exit:
  ret void
}

; A flag carried from the last trip (true over the back edge, after i < 16 held there):
; in this trip i is one more, so row[i] can be row[16]. Checked.
; CHECK: call void %cusafe.trap
; STATS: function flag_from_last_trip: 1 checks {{.*}} 0 proven in bounds
define void @flag_from_last_trip() {
entry:
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %flag = phi i1 [ false, %entry ], [ true, %latch ]
  br i1 %flag, label %use, label %test
use:
  %is = zext i32 %i to i64
  %p = getelementptr inbounds [16 x i32], ptr addrspace(3) @row, i64 0, i64 %is
  store i32 0, ptr addrspace(3) %p, align 4
  br label %test
test:
  %ok = icmp ult i32 %i, 16
  br i1 %ok, label %latch, label %exit
latch:
  %i1 = add nuw nsw i32 %i, 1
  br label %head
exit:
  ret void
}
