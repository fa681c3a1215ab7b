; Checks off a dominating check's offset (elim/offset.rs): bptree's level step
; `keys[t] <= k && keys[t + 1] > k ? indices[t] : -1`. The conditional keys[t + 1]
; (4 bytes past keys[t]) and indices[t] (1028 bytes past it, through a constant GEP
; under the base's GEP) compare keys[t]'s offset `addr - start` against the bounds for
; 8 and 1032 bytes, built once beside the window, instead of building their own
; offsets; their cold paths report their own addresses (offset plus 4 and 1028). Only
; inside a loop (bptree's level loop). Must not fire: an access the check does not
; dominate, one below it, another root, the step outside a loop, a recover-mode build
; (a failed check goes on there), the switch off.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %calls %opt %s -o %t.calls.ll 2>%t.calls.stats
; RUN: env CUSAFE_PASS_OFFSETS=0 %opt %s -o %t.off.ll 2>%t.off.stats
; RUN: %verify %t.ll
; RUN: %verify %t.calls.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: FileCheck %s --check-prefix=RECOVER < %t.calls.stats
; RUN: FileCheck %s --check-prefix=OFF < %t.off.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%Node = type { [257 x i32], [257 x i32], i32, i32 }

@cur = internal addrspace(3) global i64 0

; CHECK-LABEL: define void @level(
; The bounds for 8 and 1032 bytes, built once beside the window's size.
; CHECK: [[B1032:%cusafe.bound[0-9]*]] = select i1 {{%.*}}, i64 {{%.*}}, i64 0
; CHECK: [[B8:%cusafe.bound[0-9]*]] = select i1 {{%.*}}, i64 {{%.*}}, i64 0
; keys[t]: its own check; its offset from the window's start.
; CHECK: [[OFS:%[0-9]+]] = sub i64 {{%.*}}, [[START:%[0-9]+]]
; CHECK: call void %cusafe.trap(i64 {{%.*}}, i64 [[START]],
; CHECK: load i32
; keys[t + 1]: keys[t]'s offset against the bound for 8 bytes (4 past, 4 long); the
; report's address is start + offset + 4.
; CHECK: icmp ult i64 [[OFS]], [[B8]]
; CHECK: [[AT:%.*]] = add i64 [[START]], [[OFS]]
; CHECK-NEXT: [[B:%.*]] = add i64 [[AT]], 4
; CHECK-NEXT: %cusafe.trap{{[0-9]+}} = load ptr
; CHECK-NEXT: call void %cusafe.trap{{[0-9]+}}(i64 [[B]], i64 [[START]], i64 {{%.*}}, i32 4,
; CHECK: load i32
; indices[t]: the bound for 1032 bytes.
; CHECK: icmp ult i64 [[OFS]], [[B1032]]
; CHECK: [[AT2:%.*]] = add i64 [[START]], [[OFS]]
; CHECK-NEXT: [[C:%.*]] = add i64 [[AT2]], 1028
; CHECK-NEXT: %cusafe.trap{{[0-9]+}} = load ptr
; CHECK-NEXT: call void %cusafe.trap{{[0-9]+}}(i64 [[C]], i64 [[START]], i64 {{%.*}}, i32 4,
; CHECK: load i32
; CHECK-LABEL: define void @step_outside_loop(
; STATS: function level: 3 checks {{.*}}, 2 off a dominating check's offset,
; RECOVER: function level: 3 checks {{.*}}, 0 off a dominating check's offset,
; OFF: function level: 3 checks {{.*}}, 0 off a dominating check's offset,
define void @level(ptr addrspace(1) %nodes, i32 %height, i64 %t, i32 %key) {
entry:
  br label %loop

loop:
  %lv = phi i32 [ 0, %entry ], [ %lv.next, %done ]
  %n = load i64, ptr addrspace(3) @cur, align 8
  %nd = getelementptr inbounds %Node, ptr addrspace(1) %nodes, i64 %n
  %pa = getelementptr inbounds [257 x i32], ptr addrspace(1) %nd, i64 0, i64 %t
  %a = load i32, ptr addrspace(1) %pa, align 4
  %c1 = icmp sle i32 %a, %key
  br i1 %c1, label %second, label %done

second:
  %t1 = add nuw nsw i64 %t, 1
  %pb = getelementptr inbounds [257 x i32], ptr addrspace(1) %nd, i64 0, i64 %t1
  %b = load i32, ptr addrspace(1) %pb, align 4
  %c2 = icmp sgt i32 %b, %key
  br i1 %c2, label %third, label %done

third:
  %ind = getelementptr inbounds i8, ptr addrspace(1) %nd, i64 1028
  %pc = getelementptr inbounds [257 x i32], ptr addrspace(1) %ind, i64 0, i64 %t
  %c = load i32, ptr addrspace(1) %pc, align 4
  br label %done

done:
  %r = phi i32 [ -1, %loop ], [ -1, %second ], [ %c, %third ]
  %next = sext i32 %r to i64
  store i64 %next, ptr addrspace(3) @cur, align 8
  %lv.next = add nuw nsw i32 %lv, 1
  %more = icmp slt i32 %lv.next, %height
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

; The same step outside a loop: every check builds its own offset.
; STATS: function step_outside_loop: {{.*}}, 0 off a dominating check's offset,
define void @step_outside_loop(ptr addrspace(1) %nodes, i64 %n, i64 %t, i32 %key, ptr addrspace(1) %out) {
entry:
  %nd = getelementptr inbounds %Node, ptr addrspace(1) %nodes, i64 %n
  %pa = getelementptr inbounds [257 x i32], ptr addrspace(1) %nd, i64 0, i64 %t
  %a = load i32, ptr addrspace(1) %pa, align 4
  %c1 = icmp sle i32 %a, %key
  br i1 %c1, label %second, label %done

second:
  %t1 = add nuw nsw i64 %t, 1
  %pb = getelementptr inbounds [257 x i32], ptr addrspace(1) %nd, i64 0, i64 %t1
  %b = load i32, ptr addrspace(1) %pb, align 4
  %c2 = icmp sgt i32 %b, %key
  br i1 %c2, label %third, label %done

third:
  %ind = getelementptr inbounds i8, ptr addrspace(1) %nd, i64 1028
  %pc = getelementptr inbounds [257 x i32], ptr addrspace(1) %ind, i64 0, i64 %t
  %c = load i32, ptr addrspace(1) %pc, align 4
  br label %done

done:
  %r = phi i32 [ -1, %entry ], [ -1, %second ], [ %c, %third ]
  store i32 %r, ptr addrspace(1) %out, align 4
  ret void
}

; keys[t + 1] after a join that keys[t]'s side does not dominate: its own offset.
; STATS: function not_dominated: {{.*}}, 0 off a dominating check's offset,
define void @not_dominated(ptr addrspace(1) %keys, i32 %height, i1 %first, ptr addrspace(1) %out) {
entry:
  br label %loop

loop:
  %lv = phi i32 [ 0, %entry ], [ %lv.next, %join ]
  %t = load i64, ptr addrspace(3) @cur, align 8
  br i1 %first, label %read, label %join

read:
  %pa = getelementptr inbounds i32, ptr addrspace(1) %keys, i64 %t
  %a = load i32, ptr addrspace(1) %pa, align 4
  store i32 %a, ptr addrspace(1) %out, align 4
  br label %join

join:
  %t1 = add nuw nsw i64 %t, 1
  %pb = getelementptr inbounds i32, ptr addrspace(1) %keys, i64 %t1
  %b = load i32, ptr addrspace(1) %pb, align 4
  %next = sext i32 %b to i64
  store i64 %next, ptr addrspace(3) @cur, align 8
  %lv.next = add nuw nsw i32 %lv, 1
  %more = icmp slt i32 %lv.next, %height
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

; keys[t - 1] under keys[t]'s check (below it: an offset that could wrap), and
; other[t + 1] (another root): their own offsets.
; STATS: function below_and_other: {{.*}}, 0 off a dominating check's offset,
define void @below_and_other(ptr addrspace(1) %keys, ptr addrspace(1) %other, i32 %height, i32 %key) {
entry:
  br label %loop

loop:
  %lv = phi i32 [ 0, %entry ], [ %lv.next, %done ]
  %t = load i64, ptr addrspace(3) @cur, align 8
  %pa = getelementptr inbounds i32, ptr addrspace(1) %keys, i64 %t
  %a = load i32, ptr addrspace(1) %pa, align 4
  %c1 = icmp sle i32 %a, %key
  br i1 %c1, label %more, label %done

more:
  %pb = getelementptr inbounds i32, ptr addrspace(1) %pa, i64 -1
  %b = load i32, ptr addrspace(1) %pb, align 4
  %t1 = add nuw nsw i64 %t, 1
  %po = getelementptr inbounds i32, ptr addrspace(1) %other, i64 %t1
  %o = load i32, ptr addrspace(1) %po, align 4
  %s = add i32 %b, %o
  %next = sext i32 %s to i64
  store i64 %next, ptr addrspace(3) @cur, align 8
  br label %done

done:
  %lv.next = add nuw nsw i32 %lv, 1
  %again = icmp slt i32 %lv.next, %height
  br i1 %again, label %loop, label %exit

exit:
  ret void
}
