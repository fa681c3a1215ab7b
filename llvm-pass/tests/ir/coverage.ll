; Device edge coverage (coverage.rs, CUSAFE_PASS_COVERAGE): critical edges are split,
; then every block of the program's functions stores the byte 1 at
; page + COVERAGE_OFFSET + id = page + 0x100000 + id (1048576 + id), page being the
; runtime page's address, loaded once per function at its entry from the module's
; constant @__cusafe_rtpage (default RTPAGE_ADDR = 0x480000000000), where
; id = FNV-1a of ("coverage.cu", the source file name without its directories; the
; function's name; the block's ordinal) modulo 65536. Coverage comes before the checks:
; their cold paths and the device runtime get none. CUSAFE_PASS_CHECKS=0 builds the
; coverage alone (no checks, windows or re-laid-out locals), with the same ids.
; RUN: env CUSAFE_PASS_COVERAGE=1 %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; Warp mode: only the warp's leader (lowest active lane) stores.
; RUN: env CUSAFE_PASS_COVERAGE=warp %opt %s -o %t.warp.ll
; RUN: %verify %t.warp.ll
; RUN: FileCheck %s --check-prefix=WARP < %t.warp.ll
; RUN: %llc %t.warp.ll -o %t.warp.ptx
; RUN: %ptxas %t.warp.ptx -o %t.warp.cubin
; RUN: FileCheck %s --check-prefix=WARP-PTX < %t.warp.ptx
; Coverage only (the fuzz mode's baseline build).
; RUN: env CUSAFE_PASS_COVERAGE=1 CUSAFE_PASS_CHECKS=0 %opt %s -o %t.off.ll 2>%t.off.stats
; RUN: %verify %t.off.ll
; RUN: FileCheck %s --check-prefix=OFF < %t.off.ll
; RUN: FileCheck %s --check-prefix=OFF-STATS < %t.off.stats
; RUN: grep -v __cusafe_rtpage %t.off.ll | %not grep -E '__cusafe|cusafe\.(start|limit|local)'
; RUN: %llc %t.off.ll -o %t.off.ptx
; RUN: %ptxas %t.off.ptx -o %t.off.cubin
; RUN: env CUSAFE_PASS_COVERAGE=warp CUSAFE_PASS_CHECKS=0 %opt %s -o %t.offwarp.ll
; RUN: %llc %t.offwarp.ll -o %t.offwarp.ptx
; RUN: %ptxas %t.offwarp.ptx -o %t.offwarp.cubin
; Stable ids: a second run, the coverage-only build and the warp mode store the same
; bytes in the same order.
; RUN: env CUSAFE_PASS_COVERAGE=1 %opt %s -o %t.again.ll
; RUN: grep -oE 'cusafe\.cov, i64 [0-9]+$' %t.ll > %t.ids
; RUN: grep -oE 'cusafe\.cov, i64 [0-9]+$' %t.again.ll > %t.ids.again
; RUN: grep -oE 'cusafe\.cov, i64 [0-9]+$' %t.off.ll > %t.ids.off
; RUN: grep -oE 'cusafe\.cov, i64 [0-9]+$' %t.warp.ll > %t.ids.warp
; RUN: diff %t.ids %t.ids.again
; RUN: diff %t.ids %t.ids.off
; RUN: diff %t.ids %t.ids.warp
; RUN: test $(wc -l < %t.ids) -eq 9
; No coverage unless asked; a bad value stops the compile.
; RUN: %opt %s | FileCheck %s --check-prefix=NONE
; RUN: env CUSAFE_PASS_COVERAGE=0 %opt %s | FileCheck %s --check-prefix=NONE
; RUN: %not env CUSAFE_PASS_COVERAGE=yes %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
source_filename = "some/dir/coverage.cu"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; entry -> exit is a critical edge (entry has two successors, exit two predecessors).
; %buf escapes to @fill: re-laid-out when the checks are on.
define void @k(ptr %a, i32 %n) {
entry:
  %buf = alloca [4 x i32], align 4
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %body, label %exit
body:
  %p = getelementptr inbounds i32, ptr %a, i32 %n
  %v = load i32, ptr %p, align 4
  call void @fill(ptr %buf)
  br label %exit
exit:
  %r = phi i32 [ 0, %entry ], [ %v, %body ]
  store i32 %r, ptr %a, align 4
  ret void
}

define void @fill(ptr %q) {
  store i32 1, ptr %q, align 4
  ret void
}

; The back edge head -> head is critical.
define i32 @loop(i32 %n) {
entry:
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %head ]
  %i1 = add i32 %i, 1
  %c = icmp slt i32 %i1, %n
  br i1 %c, label %head, label %out
out:
  ret i32 %i1
}

!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; The runtime page's address: one per module, weak, in the constant space, initialised
; to RTPAGE_ADDR, written by the host (never folded).
; CHECK: @__cusafe_rtpage = weak addrspace(4) externally_initialized global i64 79164837199872, align 8
; Block ordinals after the split: entry 0, entry.exit_crit_edge 1, body 2, exit 3.
; The page is loaded once, at the entry; each block stores at a constant offset from it.
; CHECK-LABEL: define void @k(
; CHECK: %cusafe.rtpage = load i64, ptr addrspace(4) @__cusafe_rtpage, align 8, !invariant.load
; CHECK-NOT: @__cusafe_rtpage
; CHECK: %cusafe.cov = inttoptr i64 %cusafe.rtpage to ptr addrspace(1)
; CHECK-NEXT: [[P0:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1076057
; CHECK-NEXT: store i8 1, ptr addrspace(1) [[P0]], align 1, !cusafe.nocheck
; CHECK-NEXT: %c = icmp sgt i32 %n, 0
; CHECK-NEXT: br i1 %c, label %body, label %entry.exit_crit_edge
; CHECK: entry.exit_crit_edge:
; CHECK-NEXT: [[P1:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1059824
; CHECK-NEXT: store i8 1, ptr addrspace(1) [[P1]]
; CHECK-NEXT: br label %exit
; CHECK: body:
; CHECK-NEXT: [[P2:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1054762
; CHECK-NEXT: store i8 1, ptr addrspace(1) [[P2]]
; The checks come after, and their blocks have no coverage.
; CHECK-NEXT: %p = getelementptr
; CHECK: call void %cusafe.trap
; CHECK-NOT: %cusafe.cov
; CHECK: exit:
; CHECK-NEXT: %r = phi i32 [ 0, %entry.exit_crit_edge ],
; CHECK-NEXT: [[P3:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1112227
; CHECK-NEXT: store i8 1, ptr addrspace(1) [[P3]]
; CHECK-LABEL: define void @fill(
; CHECK: %cusafe.rtpage = load i64, ptr addrspace(4) @__cusafe_rtpage
; CHECK-NEXT: %cusafe.cov = inttoptr i64 %cusafe.rtpage to ptr addrspace(1)
; CHECK-NEXT: [[P4:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1063304
; CHECK-NEXT: store i8 1, ptr addrspace(1) [[P4]]
; CHECK-LABEL: define i32 @loop(
; CHECK: head.head_crit_edge:
; CHECK-NEXT: [[P5:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1071569
; CHECK-NEXT: store i8 1, ptr addrspace(1) [[P5]]
; CHECK-NEXT: br label %head
; The device runtime, linked after, has none (it reads the page through the same global).
; CHECK-LABEL: define internal void @__cusafe_trap(
; CHECK-NOT: %cusafe.cov
; CHECK: call void @llvm.trap()

; STATS: kernel k: 2 checks {{.*}}, 4 coverage points
; STATS: device function fill: 1 checks {{.*}}, 1 coverage points
; STATS: device function loop: 0 checks {{.*}}, 4 coverage points

; PTX: .weak .const .align 8 .u64 __cusafe_rtpage = 79164837199872;
; PTX: .entry k(
; PTX: ld.const.u64 [[PAGE:%rd[0-9]+]], [__cusafe_rtpage];
; PTX: st.global.u8 [[[PAGE]]+1076057], {{%rs[0-9]+}};

; WARP-LABEL: define void @k(
; WARP: [[M:%[0-9]+]] = call i32 @llvm.nvvm.activemask()
; WARP-NEXT: [[L:%[0-9]+]] = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
; WARP-NEXT: [[F:%[0-9]+]] = call i32 @llvm.cttz.i32(i32 [[M]], i1 true)
; WARP-NEXT: [[LEAD:%[0-9]+]] = icmp eq i32 [[L]], [[F]]
; WARP-NEXT: br i1 [[LEAD]], label %[[STORE:[0-9]+]], label %[[REST:[0-9]+]]
; WARP: [[STORE]]:
; WARP-NEXT: [[WP:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1076057
; WARP-NEXT: store i8 1, ptr addrspace(1) [[WP]]
; WARP-NEXT: br label %[[REST]]
; WARP: [[REST]]:
; WARP-NEXT: %c = icmp sgt i32 %n, 0
; WARP: declare i32 @llvm.nvvm.activemask() #[[A:[0-9]+]]
; WARP: attributes #[[A]] = { convergent

; WARP-PTX: .entry k(
; WARP-PTX: activemask.b32
; WARP-PTX: %laneid
; WARP-PTX: st.global.u8

; OFF: @__cusafe_rtpage = weak addrspace(4) externally_initialized global i64 79164837199872, align 8
; OFF-LABEL: define void @k(ptr %a, i32 %n) {
; OFF-NEXT: entry:
; OFF-NEXT: %buf = alloca [4 x i32], align 4
; OFF-NEXT: %cusafe.rtpage = load i64, ptr addrspace(4) @__cusafe_rtpage, align 8, !invariant.load
; OFF-NEXT: %cusafe.cov = inttoptr i64 %cusafe.rtpage to ptr addrspace(1)
; OFF-NEXT: [[O0:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1076057
; OFF-NEXT: store i8 1, ptr addrspace(1) [[O0]]
; OFF-NEXT: %c = icmp sgt i32 %n, 0
; OFF: body:
; OFF-NEXT: [[O2:%[0-9]+]] = getelementptr i8, ptr addrspace(1) %cusafe.cov, i64 1054762
; OFF-NEXT: store i8 1, ptr addrspace(1) [[O2]]
; OFF-NEXT: %p = getelementptr inbounds i32, ptr %a, i32 %n
; OFF-NEXT: %v = load i32, ptr %p, align 4
; OFF-NEXT: call void @fill(ptr %buf)
; OFF-STATS: kernel k: 0 checks {{.*}}, 4 coverage points
; OFF-STATS: device function fill: 0 checks {{.*}}, 1 coverage points

; NONE-NOT: %cusafe.cov

; BAD: cusafe: error: CUSAFE_PASS_COVERAGE=yes: accepted values are 1 (a store per edge) and warp (the warp's leader stores)
