; atomicrmw and cmpxchg are checked as atomic writes (flags 3 = write|atomic).
; RUN: %opt %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, ptr addrspace(1) %g) {
  %old = atomicrmw add ptr %a, i32 1 monotonic, align 4
  %pair = cmpxchg ptr addrspace(1) %g, i64 0, i64 1 monotonic monotonic, align 8
  %x = extractvalue { i64, i1 } %pair, 0
  %y = add i32 %old, 1
  ret void
}
; CHECK: call i32 @__cusafe_slow({{.*}}, i32 4, i32 3,
; CHECK: atomicrmw add ptr %cusafe.strip,
; CHECK: phi i32
; CHECK: ptrtoint ptr addrspace(1) %g to i64
; CHECK: call i32 @__cusafe_slow({{.*}}, i32 8, i32 3,
; CHECK: cmpxchg ptr addrspace(1) %cusafe.strip
; CHECK: phi { i64, i1 } [ %pair, {{.*}} ], [ zeroinitializer,
