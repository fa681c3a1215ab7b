; Loop ranges' verdicts, evaluated as in verdicts.ll: the instrumented kernels, their
; walk's opaque base copy (an inline-asm `mov.b64`, docs/pass.md "Loop ranges") replaced
; by the pointer itself so that folding sees through it, are linked with calls on
; constant pointers, windows and trip counts (verdicts-loops-driver.ll.in), inlined and
; folded. Each call's preheader check must trap exactly where some trip's access does
; not fit, reporting the range's lowest address and its length. A 16-byte window at
; 4096: `a[i]` for i = s .. n - 1 (none, all four, one past the end, one before the
; start) and `a[j + k * m]` for k = 0 .. n - 1, a 32-bit index walk of run-time step
; (m = -1 and 2, fitting and one trip too many).
; RUN: %opt %s -o %t.ll
; RUN: sed 's/call ptr asm "mov.b64 $0, $1;", "=l,l"(ptr \([^)]*\))/getelementptr i8, ptr \1, i64 0/' %t.ll > %t.open.ll
; RUN: %llvm_link -S %t.open.ll %S/verdicts-loops-driver.ll.in -o %t.linked.ll
; RUN: %fold %t.linked.ll | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @walk(ptr %a, ptr %b, i32 %s, i32 %n) {
entry:
  %any = icmp slt i32 %s, %n
  br i1 %any, label %loop, label %done
loop:
  %i = phi i32 [ %s, %entry ], [ %i1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %si = sext i32 %i to i64
  %p = getelementptr inbounds float, ptr %a, i64 %si
  %v = load float, ptr %p, align 4
  %acc1 = fadd float %acc, %v
  %i1 = add nsw i32 %i, 1
  %more = icmp slt i32 %i1, %n
  br i1 %more, label %loop, label %done
done:
  %r = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  store float %r, ptr %b, align 4
  ret void
}

define void @stride(ptr %a, ptr %b, i32 %j, i32 %m, i32 %n) {
entry:
  %any = icmp sgt i32 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %km = mul nsw i32 %k, %m
  %x = add nsw i32 %km, %j
  %sx = sext i32 %x to i64
  %p = getelementptr inbounds float, ptr %a, i64 %sx
  %v = load float, ptr %p, align 4
  %acc1 = fadd float %acc, %v
  %k1 = add nsw i32 %k, 1
  %more = icmp slt i32 %k1, %n
  br i1 %more, label %loop, label %done
done:
  %r = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  store float %r, ptr %b, align 4
  ret void
}

!nvvm.annotations = !{!0, !1}
!0 = !{ptr @walk, !"kernel", i32 1}
!1 = !{ptr @stride, !"kernel", i32 1}
; CHECK-LABEL: define void @walk_whole(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @walk_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4096, i64 4096, i64 16, i32 20,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @walk_before(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 16,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @walk_none(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @stride_down(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @stride_down_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4092, i64 4096, i64 16, i32 20,
; CHECK-NEXT: unreachable
; CHECK-LABEL: define void @stride_two(
; CHECK-NOT: cusafe.trap
; CHECK: ret void
; CHECK-LABEL: define void @stride_two_past(
; CHECK: call void %cusafe.trap{{[0-9]*}}.i(i64 4100, i64 4096, i64 16, i32 20,
; CHECK-NEXT: unreachable
