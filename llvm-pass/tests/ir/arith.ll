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
; CHECK-NOT: cusafe.arith
; CHECK: icmp eq ptr %only_loaded, %out
; CHECK: %stored = getelementptr
; CHECK: [[RI:%.*]] = ptrtoint ptr %a to i64
; CHECK: [[GI:%.*]] = ptrtoint ptr %stored to i64
; Leaving the root's block (power of two) or tile (packed): one unsigned compare.
; CHECK: [[LO:%.*]] = select i1 [[PACKED:%.*]], i64 {{%.*}}, i64 {{%.*}}
; CHECK: [[LEN:%.*]] = select i1 [[PACKED]], i64 {{%.*}}, i64 {{%.*}}
; CHECK: [[M:%.*]] = and i64 [[GI]], 9223372036854775807
; CHECK: [[D:%.*]] = sub i64 [[M]], [[LO]]
; CHECK: icmp uge i64 [[D]], [[LEN]]
; CHECK: [[SEL:%.*]] = select i1 {{%.*}}, i64 -9223372036854775808, i64 0
; CHECK: [[P:%.*]] = getelementptr i8, ptr %stored, i64 [[SEL]]
; CHECK: store ptr [[P]], ptr %cusafe.strip
; CHECK: [[P2:%cusafe.arith.*]] = getelementptr i8, ptr %passed
; CHECK: call void @use(ptr [[P2]])
; CHECK: [[P3:%cusafe.arith.*]] = getelementptr i8, ptr %merged
; CHECK: phi ptr [ %a, %{{.*}} ], [ [[P3]], %l ]
; STATS: 3 arithmetic rules
