; The pointer-arithmetic rule applies where a GEP result escapes the checks' view
; (stored, passed to a call, merged in a phi, cast to an integer) and nowhere else.
; RUN: %opt %s 2>%t.stats | FileCheck %s
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @use(ptr %p) {
  ret void
}

define void @k(ptr %a, ptr %out, i64 %i, i1 %c) {
entry:
  %only_loaded = getelementptr inbounds i32, ptr %a, i64 1
  %x = load i32, ptr %only_loaded, align 4
  %cmp = icmp eq ptr %only_loaded, %out
  %stored = getelementptr inbounds i32, ptr %a, i64 %i
  store ptr %stored, ptr %out, align 8
  %passed = getelementptr inbounds i8, ptr %a, i64 4096
  call void @use(ptr %passed)
  br i1 %c, label %l, label %m
l:
  %merged = getelementptr inbounds i32, ptr %a, i64 2
  br label %m
m:
  %p = phi ptr [ %a, %entry ], [ %merged, %l ]
  ret void
}
; CHECK-LABEL: entry:
; The root's side of the rule, once per root, after its definition (here the entry):
; its power-of-two block or packed tile (from 255 below the payload).
; CHECK: [[TS:%.*]] = sub i64 {{%.*}}, 255
; CHECK-NEXT: [[LO:%.*]] = select i1 [[PACKED:%.*]], i64 [[TS]], i64 {{%.*}}
; CHECK-NEXT: [[LEN:%.*]] = select i1 [[PACKED]], i64 {{%.*}}, i64 {{%.*}}
; CHECK-NOT: cusafe.arith
; CHECK: icmp eq ptr %only_loaded, %out
; CHECK: %stored = getelementptr
; Leaving the block or tile: one subtraction and one unsigned compare per GEP.
; CHECK: [[GI:%.*]] = ptrtoint ptr %stored to i64
; CHECK-NEXT: [[M:%.*]] = and i64 [[GI]], 9223372036854775807
; CHECK-NEXT: [[D:%.*]] = sub i64 [[M]], [[LO]]
; CHECK-NEXT: icmp uge i64 [[D]], [[LEN]]
; CHECK: [[SEL:%.*]] = select i1 {{%.*}}, i64 -9223372036854775808, i64 0
; CHECK: [[P:%.*]] = getelementptr i8, ptr %stored, i64 [[SEL]]
; CHECK: store ptr [[P]], ptr %cusafe.strip
; CHECK: [[P2:%cusafe.arith.*]] = getelementptr i8, ptr %passed
; CHECK: call void @use(ptr [[P2]])
; CHECK: [[P3:%cusafe.arith.*]] = getelementptr i8, ptr %merged
; CHECK: phi ptr [ %a, %{{.*}} ], [ [[P3]], %l ]

; A pointer that can only step through a __shared__ array (a phi of its generic view
; and of itself) never carries a tag: no rule, even where it escapes.
@tile = internal addrspace(3) global [64 x float] undef

define void @walk(ptr %out, i64 %n) {
entry:
  br label %loop
loop:
  %p = phi ptr [ addrspacecast (ptr addrspace(3) @tile to ptr), %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %next = getelementptr inbounds float, ptr %p, i64 1
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  store ptr %next, ptr %out, align 8
  ret void
}
; CHECK-LABEL: define void @walk(
; CHECK-NOT: cusafe.arith
; CHECK: ret void
; STATS-DAG: 3 arithmetic rules

; A pointer stepping through a buffer in a loop (a phi of the argument and of its own
; GEP, stored every trip): its block or tile is the argument's, carried by phis, so the
; loop computes no block (no division) per trip.
define void @bump(ptr %a, ptr %out, i64 %n) {
entry:
  br label %loop
loop:
  %p = phi ptr [ %a, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %next = getelementptr inbounds float, ptr %p, i64 1
  store ptr %next, ptr %out, align 8
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
; CHECK-LABEL: define void @bump(
; CHECK: entry:
; CHECK: [[LO0:%.*]] = select i1 {{%.*}}, i64 {{%.*}}, i64 {{%.*}}
; CHECK: [[LEN0:%.*]] = select i1 {{%.*}}, i64 {{%.*}}, i64 {{%.*}}
; CHECK: loop:
; CHECK: %cusafe.tile.in = phi i1 [ {{%.*}}, %{{.*}} ], [ %cusafe.tile.in, %{{.*}} ]
; CHECK-NEXT: %cusafe.tile.lo = phi i64 [ [[LO0]], %{{.*}} ], [ %cusafe.tile.lo, %{{.*}} ]
; CHECK-NEXT: %cusafe.tile.len = phi i64 [ [[LEN0]], %{{.*}} ], [ %cusafe.tile.len, %{{.*}} ]
; CHECK-NOT: div.approx
; CHECK: [[D:%.*]] = sub i64 {{%.*}}, %cusafe.tile.lo
; CHECK-NEXT: icmp uge i64 [[D]], %cusafe.tile.len
; CHECK: ret void
