; A local array whose address escapes (passed to an instrumented function) is
; re-laid-out as a block with a header and handed out as a pseudo-pointer carrying
; its class and the frame's stack epoch; the depth is restored on return, and kernels
; reset it on entry. Arrays that do not escape, or escape only into functions without
; a body (vprintf), stay as they are.
; RUN: %opt %s -o %t.ll
; RUN: %calls %opt %s -o %t.calls.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @fill(ptr %p, i64 %n) {
  %q = getelementptr inbounds i32, ptr %p, i64 %n
  store i32 7, ptr %q, align 4
  ret void
}

declare i32 @vprintf(ptr, ptr)

define void @k(i64 %n) {
  %arr = alloca [8 x i32], align 4
  %buf = alloca [2 x i64], align 8
  %quiet = alloca [4 x i32], align 4
  call void @llvm.lifetime.start.p0(i64 32, ptr %arr)
  call void @fill(ptr %arr, i64 %n)
  store ptr %arr, ptr %buf, align 8
  %r = call i32 @vprintf(ptr null, ptr %buf)
  %g = getelementptr inbounds [4 x i32], ptr %quiet, i64 0, i64 %n
  store i32 1, ptr %g, align 4
  call void @llvm.lifetime.end.p0(i64 32, ptr %arr)
  ret void
}
declare void @llvm.lifetime.start.p0(i64, ptr)
declare void @llvm.lifetime.end.p0(i64, ptr)
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; CHECK-LABEL: define void @fill(
; Accesses through the parameter: heap path (a pseudo root goes out of line), stripped.
; CHECK: icmp uge i64 {{%.*}}, 140737488355328
; CHECK: call i32 @__cusafe_slow(
; CHECK: store i32 7, ptr

; CHECK-LABEL: define void @k(
; CHECK: %cusafe.local = alloca [49 x i8], align 64
; CHECK-NOT: alloca [8 x i32]
; CHECK: %buf = alloca [2 x i64]
; CHECK: %quiet = alloca [4 x i32]
; Kernel entry: depth of this slot reset to 0.
; CHECK: call i32 @llvm.nvvm.read.ptx.sreg.smid()
; CHECK: store i8 0, ptr addrspace(1)
; Prologue: depth and generation bumped, header written, pointer tagged.
; CHECK: [[D:%.*]] = add i8 {{%.*}}, 1
; CHECK: store i8 [[D]], ptr addrspace(1) [[DP:%.*]], align 1
; CHECK: [[G:%.*]] = add i8 {{%.*}}, 1
; CHECK: store i8 [[G]]
; Depth (mod 16) at bit 54, generation (mod 32) at bit 58.
; CHECK: [[DM:%.*]] = and i64 {{%.*}}, 15
; CHECK: shl i64 [[DM]], 54
; CHECK: [[GM:%.*]] = and i64 {{%.*}}, 31
; CHECK: shl i64 [[GM]], 58
; CHECK: store i64 32, ptr %cusafe.local, align 8
; Class 3 (64-byte block) and the pseudo bit: 0x3 << 48 | 1 << 47.
; CHECK: or i64 {{%.*}}, 985162418487296
; CHECK: [[T:%cusafe.tagged.*]] = inttoptr i64
; CHECK-NOT: llvm.lifetime
; CHECK: call void @fill(ptr [[T]], i64 %n)
; vprintf's argument buffer is untouched; the tagged pointer stored into it (printf's
; %s argument) and the buffer pointer are stripped: vprintf dereferences both.
; CHECK: [[TI:%.*]] = ptrtoint ptr [[T]] to i64
; CHECK: [[TM:%.*]] = and i64 [[TI]], 140737488355327
; CHECK: [[TS:%.*]] = inttoptr i64 [[TM]] to ptr
; CHECK: store ptr [[TS]], ptr {{%.*}}, align 8
; CHECK: [[B:%.*]] = ptrtoint ptr %buf to i64
; CHECK: call i32 @vprintf(ptr null, ptr %cusafe.strip{{[0-9]*}})
; The non-escaping array keeps its static check.
; CHECK: call i32 @__cusafe_fail(i64 {{%.*}}, i64 {{%.*}}, i64 16, i32 4,
; Epilogue.
; CHECK: store i8 {{%.*}}, ptr addrspace(1) [[DP]], align 1
; CHECK-NEXT: ret void
