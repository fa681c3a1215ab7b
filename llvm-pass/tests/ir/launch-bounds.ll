; Launch-time windows (launch.rs): a kernel that uses a pointer parameter takes two
; hidden i64 parameters per 8-byte parameter (the runtime tells them by size alone), and
; checks rooted at a pointer parameter compare against them instead of decoding the
; pointer and loading its header. The marker global says the kernel takes windows.
; Roots that are no kernel parameter (a device function's, a loaded pointer) still
; load their header; a kernel whose parameters would overflow 4 KiB keeps decoding.
; (Index groups off: @k reaches %a and %b at one index; index-group.ll.)
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: env CUSAFE_PASS_LAUNCH_BOUNDS=0 %opt %s | FileCheck %s --check-prefix=OFF
; RUN: env CUSAFE_PASS_OPT=0 %opt %s | FileCheck %s --check-prefix=OFF
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%struct.S = type { ptr, i32 }

; One byte per source parameter: windows for the 8-byte ones (0, 3, 4); the 16-byte
; aggregate and the i32 have none.
; CHECK: @__cusafe_windows_k = addrspace(1) constant [5 x i8] c"\01\00\00\01\01"
; CHECK-NOT: @__cusafe_windows_big
; CHECK-NOT: @__cusafe_windows_dev

; CHECK-LABEL: define void @k(ptr %a, i32 %n, ptr byval(%struct.S) align 8 %s, ptr %unused, ptr %b, i64 %cusafe.start.0, i64 %cusafe.limit.0, i64 %cusafe.start.3, i64 %cusafe.limit.3, i64 %cusafe.start.4, i64 %cusafe.limit.4)
; Parameter roots compare against their window, and (trap mode: a failed check never
; returns, and a poisoned parameter's window is empty) access through the parameter
; itself (or, the check deferred, the sink when the check failed: defer.ll; this
; load, which no other load follows, is not deferred). The byval aggregate %s and the
; pointer %q loaded from it have no window.
; CHECK: sub i64 {{.*}}, %cusafe.start.0
; CHECK: br i1 {{%.*}}, label {{%.*}}, label {{%.*}}, !prof
; CHECK: load float, ptr %p, align 4
; CHECK: load ptr, ptr
; CHECK: %cusafe.size{{[0-9]*}} = load i64
; CHECK: sub i64 {{.*}}, %cusafe.start.4
; CHECK: store float {{.*}}, ptr %bi, align 4
; CHECK: ret void
define void @k(ptr %a, i32 %n, ptr byval(%struct.S) align 8 %s, ptr %unused, ptr %b) {
  %i = sext i32 %n to i64
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %sp = getelementptr inbounds %struct.S, ptr %s, i64 0, i32 0
  %q = load ptr, ptr %sp, align 8
  %qi = getelementptr inbounds float, ptr %q, i64 %i
  store float %v, ptr %qi, align 4
  %bi = getelementptr inbounds float, ptr %b, i64 %i
  store float %v, ptr %bi, align 4
  ret void
}

; A device function's parameter has no window: its header is loaded.
; CHECK-LABEL: define void @dev(ptr %a, i64 %i)
; CHECK: %cusafe.size = load i64
define void @dev(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  ret void
}

; 4088 bytes by value + 8 for the pointer + 16 for its window would pass 4 KiB.
; CHECK-LABEL: define void @big(ptr byval([4088 x i8]) align 8 %blob, ptr %a, i64 %i)
; CHECK: %cusafe.size = load i64
define void @big(ptr byval([4088 x i8]) align 8 %blob, ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  ret void
}

; The annotations name the rewritten kernel.
; CHECK: !{ptr @k, !"kernel", i32 1}
!nvvm.annotations = !{!0, !1}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{ptr @big, !"kernel", i32 1}

; PTX: .visible .global .align 1 .b8 __cusafe_windows_k[5] = {1, 0, 0, 1, 1};
; PTX-LABEL: .entry k(
; PTX: .param .u64 k_param_10
; PTX-NEXT: )

; OFF-NOT: __cusafe_windows
; OFF-NOT: %cusafe.start
; OFF: define void @k(ptr %a, i32 %n, ptr byval(%struct.S) align 8 %s, ptr %unused, ptr %b)
