; The last-byte compare (docs/formats.md, "The check"): a load or store the IR says is
; aligned to its power-of-two length (up to 16 bytes), outside every loop, is in its
; window when its last byte is: `addr - (start - (len - 1)) <u limit`, with no
; saturated bound per length. Must not fire: an access aligned below its length, an
; 8-byte access aligned to 4, the same aligned access inside a loop (there the bound is
; built once outside the loop), a memory intrinsic.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; A 16-byte vector load aligned to 16: start - 15, one compare against the limit.
; CHECK-LABEL: define void @vec16(
; CHECK: [[SL:%cusafe.start.less[0-9]*]] = sub i64 %cusafe.start.0, 15
; CHECK: [[LAST:%.*]] = sub i64 {{%.*}}, [[SL]]
; CHECK: icmp ult i64 [[LAST]], %cusafe.limit.0
; CHECK-NOT: cusafe.bound
; CHECK: ret void
define void @vec16(ptr %a, i64 %i) {
  %p = getelementptr inbounds <4 x float>, ptr %a, i64 %i
  %v = load <4 x float>, ptr %p, align 16
  store <4 x float> %v, ptr %a, align 16
  ret void
}

; An 8-byte load aligned to 4 only (it may straddle the window's start): the first byte
; against limit - 7.
; CHECK-LABEL: define void @under_aligned(
; CHECK: %cusafe.bound = select i1 {{%.*}}, i64 {{%.*}}, i64 0
; CHECK: [[OFF:%.*]] = sub i64 {{%.*}}, %cusafe.start.0
; CHECK: icmp ult i64 [[OFF]], %cusafe.bound
; CHECK-NOT: cusafe.start.less
; CHECK: ret void
define void @under_aligned(ptr %a, i64 %i) {
  %p = getelementptr inbounds i32, ptr %a, i64 %i
  %v = load i64, ptr %p, align 4
  store i64 %v, ptr %p, align 4
  ret void
}

; The same aligned 4-byte load inside a loop: the bound form.
; CHECK-LABEL: define void @in_loop(
; CHECK: %cusafe.bound = select i1 {{%.*}}, i64 {{%.*}}, i64 0
; CHECK-NOT: cusafe.start.less
; CHECK: loop:
; CHECK: icmp ult i64 {{%.*}}, %cusafe.bound
; CHECK: ret void
define void @in_loop(ptr %a, ptr %idx, i64 %n) {
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]
  %q = getelementptr inbounds i64, ptr %idx, i64 %k
  %j = load volatile i64, ptr %q, align 8, !cusafe.nocheck !1
  %p = getelementptr inbounds float, ptr %a, i64 %j
  %v = load float, ptr %p, align 4
  %k1 = add i64 %k, 1
  %c = icmp slt i64 %k1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

!nvvm.annotations = !{!0, !2, !3}
!0 = !{ptr @vec16, !"kernel", i32 1}
!1 = !{}
!2 = !{ptr @under_aligned, !"kernel", i32 1}
!3 = !{ptr @in_loop, !"kernel", i32 1}
