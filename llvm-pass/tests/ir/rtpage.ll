; The runtime page's address (rtpage.rs): device code reads it from the per-module
; constant @__cusafe_rtpage (format::rtpage::RTPAGE_SYMBOL), a weak, externally
; initialised i64 in the constant space whose initialiser is RTPAGE_ADDR
; (0x480000000000 = 79164837199872); the runtime writes another device's page into it
; (cuModuleGetGlobal) before a kernel's first launch there. Each function that needs
; the page loads it once, at its entry (after the allocas, !invariant.load); the epoch
; bookkeeping of an escaping local and the coverage stores add constant offsets to it,
; and device-rt reads it through the same global. Nothing may fold the loads to the
; initialiser: not llc (PTX), not a later -O3. A module that reads no runtime page
; gets no global; two modules linked together keep one.
; RUN: env CUSAFE_PASS_COVERAGE=1 %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; No immediate address of the page is left in the code (only the initialiser).
; RUN: grep -c 79164837199872 %t.ptx | grep -qx 1
; A full optimisation after the pass folds no load of it.
; RUN: %llvm_o3 %t.ll | FileCheck %s --check-prefix=O3
; Checks on, no coverage: device-rt's report path reads the page, so the global is there.
; RUN: %opt %s | FileCheck %s --check-prefix=GLOBAL
; Coverage only (checks off): the coverage stores read it.
; RUN: env CUSAFE_PASS_COVERAGE=1 CUSAFE_PASS_CHECKS=0 %opt %s | FileCheck %s --check-prefix=GLOBAL
; Nothing instrumented (checks off, no coverage), or nothing that reads the page: none.
; RUN: env CUSAFE_PASS_CHECKS=0 %opt %s | %not grep __cusafe_rtpage
; RUN: %opt %S/rtpage-none.ll.in | %not grep __cusafe_rtpage
; Two instrumented modules linked together (what -fgpu-rdc would do) have one
; definition, and ptxas takes the linked module.
; RUN: %opt %S/rtpage-other.ll.in -o %t.other.ll
; RUN: %llvm_link %t.ll %t.other.ll -S -o %t.linked.ll
; RUN: grep -c '^@__cusafe_rtpage = weak addrspace(4) externally_initialized global i64 79164837199872' %t.linked.ll | grep -qx 1
; RUN: %llc %t.linked.ll -o %t.linked.ptx
; RUN: %ptxas %t.linked.ptx -o %t.linked.cubin
; Separately compiled (ptxas -c, relocatable), each module keeps its weak definition.
; RUN: %llc %t.other.ll -o %t.other.ptx
; RUN: %ptxas -c %t.ptx -o %t.o
; RUN: %ptxas -c %t.other.ptx -o %t.other.o
; RUN: FileCheck %s --check-prefix=PTX-OTHER < %t.other.ptx
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; A function with a body: a local passed to it escapes.
define void @sink(ptr %p) {
  store i32 0, ptr %p, align 4
  ret void
}

; An escaping local: the frame's epoch is bumped in the prologue, restored on return.
define void @frame(ptr %out) {
  %arr = alloca [8 x i32], align 4
  call void @sink(ptr %arr)
  store i32 1, ptr %out, align 4
  ret void
}

define void @k(ptr %a) {
  call void @frame(ptr %a)
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; CHECK: @__cusafe_rtpage = weak addrspace(4) externally_initialized global i64 79164837199872, align 8
; GLOBAL: @__cusafe_rtpage = weak addrspace(4) externally_initialized global i64 79164837199872, align 8

; CHECK-LABEL: define void @frame(
; CHECK: %cusafe.local = alloca
; CHECK-NEXT: %cusafe.rtpage = load i64, ptr addrspace(4) @__cusafe_rtpage, align 8, !invariant.load ![[EMPTY:[0-9]+]], !cusafe.nocheck
; One load per function: the depth, the generation, the restore and the coverage use it.
; CHECK-NOT: @__cusafe_rtpage
; Depth: page + slot + 2 MiB.
; CHECK: [[DS:%[0-9]+]] = add i64 %cusafe.rtpage, [[SLOT:%[0-9]+]]
; CHECK-NEXT: [[DA:%[0-9]+]] = add i64 [[DS]], 2097152
; CHECK-NEXT: [[DP:%[0-9]+]] = inttoptr i64 [[DA]] to ptr addrspace(1)
; CHECK-NEXT: [[D0:%[0-9]+]] = load i8, ptr addrspace(1) [[DP]], align 1, !cusafe.nocheck
; CHECK-NEXT: [[D:%[0-9]+]] = add i8 [[D0]], 1
; CHECK-NEXT: store i8 [[D]], ptr addrspace(1) [[DP]], align 1, !cusafe.nocheck
; Generation: page + slot * 16 + depth % 16 + 4 MiB.
; CHECK: [[GS:%[0-9]+]] = add i64 %cusafe.rtpage, {{%[0-9]+}}
; CHECK-NEXT: [[GA:%[0-9]+]] = add i64 [[GS]], 4194304
; CHECK-NEXT: [[GP:%[0-9]+]] = inttoptr i64 [[GA]] to ptr addrspace(1)
; CHECK-NEXT: load i8, ptr addrspace(1) [[GP]]
; Coverage: page + 1 MiB + id.
; CHECK: %cusafe.cov = inttoptr i64 %cusafe.rtpage to ptr addrspace(1)
; CHECK-NEXT: [[CP:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 {{1[01][0-9][0-9][0-9][0-9][0-9]}}
; CHECK-NEXT: store i8 1, ptr addrspace(1) [[CP]], align 1, !cusafe.nocheck
; CHECK-NOT: @__cusafe_rtpage
; Epilogue: the depth restored through the same pointer.
; CHECK: store i8 {{%[0-9]+}}, ptr addrspace(1) [[DP]], align 1, !cusafe.nocheck
; CHECK-NEXT: ret void

; The kernel resets its slot's depth on entry, through its own one load.
; CHECK-LABEL: define void @k(
; CHECK: %cusafe.rtpage = load i64, ptr addrspace(4) @__cusafe_rtpage, align 8, !invariant.load
; CHECK-NOT: @__cusafe_rtpage
; CHECK: [[KS:%[0-9]+]] = add i64 %cusafe.rtpage, {{%[0-9]+}}
; CHECK-NEXT: [[KA:%[0-9]+]] = add i64 [[KS]], 2097152
; CHECK-NEXT: [[KP:%[0-9]+]] = inttoptr i64 [[KA]] to ptr addrspace(1)
; CHECK-NEXT: store i8 0, ptr addrspace(1) [[KP]], align 1, !cusafe.nocheck
; CHECK-NOT: @__cusafe_rtpage
; CHECK: ret void

; device-rt reads the same global (no immediate address of the page).
; CHECK: define internal {{.*}}@__cusafe_slow(
; CHECK: load i64, ptr addrspace(4) @__cusafe_rtpage
; CHECK-NOT: 79164837199872
; CHECK: ![[EMPTY]] = !{}

; PTX: .weak .const .align 8 .u64 __cusafe_rtpage = 79164837199872;
; PTX-LABEL: .func frame(
; PTX: ld.const.u64 [[PAGE:%rd[0-9]+]], [__cusafe_rtpage];
; PTX-NOT: [__cusafe_rtpage]
; PTX: st.global.u8 [{{%rd[0-9]+}}+2097152]
; PTX: st.global.u8 [[[PAGE]]+{{[0-9]+}}], {{%rs[0-9]+}};
; PTX-NOT: [__cusafe_rtpage]
; PTX: ret;
; PTX-LABEL: .entry k(
; PTX: ld.const.u64 {{%rd[0-9]+}}, [__cusafe_rtpage];
; PTX-NOT: [__cusafe_rtpage]
; PTX: st.global.u8 [{{%rd[0-9]+}}+2097152]

; O3: @__cusafe_rtpage = weak {{(local_unnamed_addr )?}}addrspace(4) externally_initialized global i64 79164837199872
; O3-LABEL: define void @frame(
; O3: load i64, ptr addrspace(4) @__cusafe_rtpage, align 8, !invariant.load
; O3-LABEL: define void @k(
; O3: load i64, ptr addrspace(4) @__cusafe_rtpage, align 8, !invariant.load
; O3-NOT: inttoptr (i64 7916483

; PTX-OTHER: .weak .const .align 8 .u64 __cusafe_rtpage = 79164837199872;
; PTX-OTHER: .entry other(
; PTX-OTHER: ld.const.u64 {{%rd[0-9]+}}, [__cusafe_rtpage];
