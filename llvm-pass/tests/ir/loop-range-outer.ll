; A loop range whose values are invariant in an enclosing loop (gemm's tile loop: the
; inner loops' __shared__ rows depend on the thread only) has them built once in the
; outermost such loop's preheader, and a verdict that loads nothing (a known object,
; a window) is computed there too; the branch and the cold path stay at the inner
; loop's preheader, so the check runs only where the inner loop is reached. A heap
; root without a window keeps its header load and verdict at the inner preheader.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: env CUSAFE_PASS_LAUNCH_BOUNDS=0 %opt %s | FileCheck %s --check-prefix=NOWIN
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin

; CHECK-LABEL: define void @tiles(
; CHECK-LABEL: outer.ph:
; CHECK: [[OK:%[0-9]+]] = icmp ult i64 {{%[0-9]+}}, 3969
; CHECK-LABEL: outer:
; CHECK-NOT: icmp
; CHECK: [[BAD:%[0-9]+]] = xor i1 [[OK]], true
; CHECK-NEXT: br i1 [[BAD]]
; CHECK: call void %cusafe.trap
; CHECK-LABEL: inner:
; CHECK-NOT: cusafe.trap
; CHECK-LABEL: outer.latch:
; NOWIN-LABEL: define void @tiles(
; NOWIN-LABEL: outer.ph:
; NOWIN: icmp ult i64 {{%[0-9]+}}, 3969

; CHECK-LABEL: define void @rows(
; CHECK-LABEL: outer.ph:
; CHECK: [[OK2:%[0-9]+]] = icmp ult i64 {{%[0-9]+}}, %cusafe.bound
; CHECK-LABEL: outer:
; CHECK-NOT: icmp
; CHECK: xor i1 [[OK2]], true
; NOWIN-LABEL: define void @rows(
; NOWIN-LABEL: outer.ph:
; NOWIN-NOT: cusafe.size
; NOWIN-LABEL: outer:
; NOWIN: %cusafe.size{{[0-9]*}} = load i64
; NOWIN: br i1
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [32 x [32 x float]] undef, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()

define void @tiles(ptr %out, i32 %n) {
entry:
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tyw = zext i32 %ty to i64
  %go = icmp sgt i32 %n, 0
  br i1 %go, label %outer.ph, label %exit

outer.ph:
  br label %outer

outer:
  %k0 = phi i32 [ 0, %outer.ph ], [ %k0.next, %outer.latch ]
  %acc = phi float [ 0.0, %outer.ph ], [ %a.next, %outer.latch ]
  br label %inner

inner:
  %k = phi i64 [ 0, %outer ], [ %k.next, %inner ]
  %a = phi float [ %acc, %outer ], [ %a.next, %inner ]
  %p = getelementptr inbounds [32 x [32 x float]], ptr addrspace(3) @tile, i64 0, i64 %tyw, i64 %k
  %v = load float, ptr addrspace(3) %p, align 4
  %a.next = fadd float %a, %v
  %k.next = add nuw nsw i64 %k, 1
  %more = icmp ult i64 %k.next, 32
  br i1 %more, label %inner, label %outer.latch

outer.latch:
  %k0.next = add nsw i32 %k0, 32
  %again = icmp slt i32 %k0.next, %n
  br i1 %again, label %outer, label %done

done:
  store float %a.next, ptr %out, align 4
  br label %exit

exit:
  ret void
}



define void @rows(ptr %a, ptr %out, i32 %n, i64 %row) {
entry:
  %base = shl i64 %row, 5
  %go = icmp sgt i32 %n, 0
  br i1 %go, label %outer.ph, label %exit

outer.ph:
  br label %outer

outer:
  %k0 = phi i32 [ 0, %outer.ph ], [ %k0.next, %outer.latch ]
  %acc = phi float [ 0.0, %outer.ph ], [ %a.next, %outer.latch ]
  br label %inner

inner:
  %k = phi i64 [ 0, %outer ], [ %k.next, %inner ]
  %s = phi float [ %acc, %outer ], [ %a.next, %inner ]
  %idx = add i64 %base, %k
  %p = getelementptr inbounds float, ptr %a, i64 %idx
  %v = load float, ptr %p, align 4
  %a.next = fadd float %s, %v
  %k.next = add nuw nsw i64 %k, 1
  %more = icmp ult i64 %k.next, 32
  br i1 %more, label %inner, label %outer.latch

outer.latch:
  %k0.next = add nsw i32 %k0, 32
  %again = icmp slt i32 %k0.next, %n
  br i1 %again, label %outer, label %done

done:
  store float %a.next, ptr %out, align 4
  br label %exit

exit:
  ret void
}
!nvvm.annotations = !{!0, !1}
!0 = !{ptr @tiles, !"kernel", i32 1}
!1 = !{ptr @rows, !"kernel", i32 1}
