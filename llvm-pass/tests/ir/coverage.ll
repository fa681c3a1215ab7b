; Device edge coverage (coverage.rs, CUSAFE_PASS_COVERAGE): critical edges are split,
; then every block of the program's functions stores the byte 1 at
; RTPAGE_ADDR + COVERAGE_OFFSET + id = 0x480000100000 + id (79164838248448 + id), where
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
; RUN: %not grep -E '__cusafe|cusafe\.(start|limit|local)' %t.off.ll
; RUN: %llc %t.off.ll -o %t.off.ptx
; RUN: %ptxas %t.off.ptx -o %t.off.cubin
; RUN: env CUSAFE_PASS_COVERAGE=warp CUSAFE_PASS_CHECKS=0 %opt %s -o %t.offwarp.ll
; RUN: %llc %t.offwarp.ll -o %t.offwarp.ptx
; RUN: %ptxas %t.offwarp.ptx -o %t.offwarp.cubin
; Stable ids: a second run, the coverage-only build and the warp mode store the same
; bytes in the same order.
; RUN: env CUSAFE_PASS_COVERAGE=1 %opt %s -o %t.again.ll
; RUN: grep -oE 'inttoptr \(i64 79164838[23][0-9]{5} ' %t.ll > %t.ids
; RUN: grep -oE 'inttoptr \(i64 79164838[23][0-9]{5} ' %t.again.ll > %t.ids.again
; RUN: grep -oE 'inttoptr \(i64 79164838[23][0-9]{5} ' %t.off.ll > %t.ids.off
; RUN: grep -oE 'inttoptr \(i64 79164838[23][0-9]{5} ' %t.warp.ll > %t.ids.warp
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

; Block ordinals after the split: entry 0, entry.exit_crit_edge 1, body 2, exit 3.
; CHECK-LABEL: define void @k(
; CHECK: store i8 1, ptr addrspace(1) inttoptr (i64 79164838275929 to ptr addrspace(1)), align 1, !cusafe.nocheck
; CHECK-NEXT: %c = icmp sgt i32 %n, 0
; CHECK-NEXT: br i1 %c, label %body, label %entry.exit_crit_edge
; CHECK: entry.exit_crit_edge:
; CHECK-NEXT: store i8 1, ptr addrspace(1) inttoptr (i64 79164838259696 to ptr addrspace(1))
; CHECK-NEXT: br label %exit
; CHECK: body:
; CHECK-NEXT: store i8 1, ptr addrspace(1) inttoptr (i64 79164838254634 to ptr addrspace(1))
; The checks come after, and their blocks have no coverage.
; CHECK-NEXT: %p = getelementptr
; CHECK: call void %cusafe.trap
; CHECK-NOT: store i8 1, ptr addrspace(1) inttoptr
; CHECK: exit:
; CHECK-NEXT: %r = phi i32 [ 0, %entry.exit_crit_edge ],
; CHECK-NEXT: store i8 1, ptr addrspace(1) inttoptr (i64 79164838312099 to ptr addrspace(1))
; CHECK-LABEL: define void @fill(
; CHECK: store i8 1, ptr addrspace(1) inttoptr (i64 79164838263176 to ptr addrspace(1))
; CHECK-LABEL: define i32 @loop(
; CHECK: head.head_crit_edge:
; CHECK-NEXT: store i8 1, ptr addrspace(1) inttoptr (i64 79164838271441 to ptr addrspace(1))
; CHECK-NEXT: br label %head
; The device runtime, linked after, has none.
; CHECK-LABEL: define internal void @__cusafe_trap(
; CHECK-NOT: inttoptr (i64 79164838{{[23][0-9]+}} to ptr addrspace(1))
; CHECK: call void @llvm.trap()

; STATS: kernel k: 2 checks {{.*}}, 4 coverage points
; STATS: device function fill: 1 checks {{.*}}, 1 coverage points
; STATS: device function loop: 0 checks {{.*}}, 4 coverage points

; PTX: .entry k(
; PTX: st.global.u8 {{.*}}

; WARP-LABEL: define void @k(
; WARP: [[M:%[0-9]+]] = call i32 @llvm.nvvm.activemask()
; WARP-NEXT: [[L:%[0-9]+]] = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
; WARP-NEXT: [[F:%[0-9]+]] = call i32 @llvm.cttz.i32(i32 [[M]], i1 true)
; WARP-NEXT: [[LEAD:%[0-9]+]] = icmp eq i32 [[L]], [[F]]
; WARP-NEXT: br i1 [[LEAD]], label %[[STORE:[0-9]+]], label %[[REST:[0-9]+]]
; WARP: [[STORE]]:
; WARP-NEXT: store i8 1, ptr addrspace(1) inttoptr (i64 79164838275929 to ptr addrspace(1))
; WARP-NEXT: br label %[[REST]]
; WARP: [[REST]]:
; WARP-NEXT: %c = icmp sgt i32 %n, 0
; WARP: declare i32 @llvm.nvvm.activemask() #[[A:[0-9]+]]
; WARP: attributes #[[A]] = { convergent

; WARP-PTX: .entry k(
; WARP-PTX: activemask.b32
; WARP-PTX: %laneid
; WARP-PTX: st.global.u8

; OFF-LABEL: define void @k(ptr %a, i32 %n) {
; OFF-NEXT: entry:
; OFF-NEXT: %buf = alloca [4 x i32], align 4
; OFF-NEXT: store i8 1, ptr addrspace(1) inttoptr (i64 79164838275929 to ptr addrspace(1))
; OFF-NEXT: %c = icmp sgt i32 %n, 0
; OFF: body:
; OFF-NEXT: store i8 1, ptr addrspace(1) inttoptr (i64 79164838254634 to ptr addrspace(1))
; OFF-NEXT: %p = getelementptr inbounds i32, ptr %a, i32 %n
; OFF-NEXT: %v = load i32, ptr %p, align 4
; OFF-NEXT: call void @fill(ptr %buf)
; OFF-STATS: kernel k: 0 checks {{.*}}, 4 coverage points
; OFF-STATS: device function fill: 0 checks {{.*}}, 1 coverage points

; NONE-NOT: inttoptr (i64 79164838{{[23][0-9]+}} to ptr addrspace(1))

; BAD: cusafe: error: CUSAFE_PASS_COVERAGE=yes: accepted values are 1 (a store per edge) and warp (the warp's leader stores)
