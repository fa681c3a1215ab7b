; An access through a chain of GEPs is checked against the block of the chain's root,
; not of the final address: a jump straight into another live block is caught.
; RUN: %calls %opt_noelim %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, i64 %i, i64 %j) {
  %p = getelementptr inbounds i32, ptr %a, i64 %i
  %q = getelementptr inbounds i8, ptr %p, i64 %j
  %r = addrspacecast ptr %q to ptr addrspace(1)
  store i32 0, ptr addrspace(1) %r, align 4
  ret void
}
; CHECK: %cusafe.strip = getelementptr i8, ptr %a
; CHECK: [[RI:%.*]] = ptrtoint ptr %a to i64
; CHECK: lshr i64 [[RI]], 41
; CHECK: select i1 {{%.*}}, i64 2097152, i64 256
; CHECK: %cusafe.size = load
; CHECK: [[START:%.*]] = select i1 {{%.*}}, i64 {{%.*}}, i64 {{%.*}}
; CHECK: [[AI:%.*]] = ptrtoint ptr addrspace(1) %r to i64
; CHECK: [[OFF:%.*]] = sub i64 [[AI]], [[START]]
; CHECK: [[ADDR:%.*]] = add i64 [[START]], [[OFF]]
; CHECK: call i32 @__cusafe_fail(i64 [[ADDR]], i64 [[START]],
; The access goes through the chain rebuilt on the stripped root.
; CHECK: [[G1:%.*]] = getelementptr inbounds i32, ptr %cusafe.strip, i64 %i
; CHECK: [[G2:%.*]] = getelementptr inbounds i8, ptr [[G1]], i64 %j
; CHECK: [[C:%.*]] = addrspacecast ptr [[G2]] to ptr addrspace(1)
; CHECK: store i32 0, ptr addrspace(1) [[C]]
; CHECK-NOT: cusafe.arith
