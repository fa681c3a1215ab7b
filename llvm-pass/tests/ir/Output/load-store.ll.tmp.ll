; ModuleID = '/work/main/llvm-pass/tests/ir/load-store.ll'
source_filename = "/work/main/llvm-pass/tests/ir/load-store.ll"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@__cusafe_no_header = internal addrspace(1) global i64 0
@__cusafe_loc.0 = private unnamed_addr addrspace(1) constant [56 x i8] c"k\1F<unknown: compile with -g or -gline-tables-only>\1F0\1F0\1F\00"
@__cusafe_site.0 = internal addrspace(1) global i32 0
@__cusafe_site.1 = internal addrspace(1) global i32 0

define void @k(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %1 = ptrtoint ptr %a to i64
  %2 = ptrtoint ptr %p to i64
  %3 = lshr i64 %1, 41
  %4 = and i64 %3, 63
  %5 = sub i64 %4, 1
  %6 = icmp ult i64 %5, 35
  %7 = add i64 %4, 3
  %8 = and i64 %7, 63
  %9 = shl i64 -1, %8
  %10 = and i64 %1, %9
  %11 = select i1 %6, i64 %10, i64 ptrtoint (ptr addrspace(1) @__cusafe_no_header to i64)
  %cusafe.hdr = inttoptr i64 %11 to ptr addrspace(1)
  %cusafe.size = load i64, ptr addrspace(1) %cusafe.hdr, align 8
  %12 = add i64 %10, 256
  %13 = sub i64 %2, %12
  %14 = add i64 %13, 4
  %15 = icmp ule i64 %14, %cusafe.size
  %16 = icmp uge i64 %14, 4
  %17 = and i1 %15, %16
  %18 = icmp slt i64 %1, 0
  %19 = xor i1 %17, true
  %20 = and i1 %6, %19
  %21 = or i1 %18, %20
  %22 = select i1 %18, i32 1, i32 2
  %23 = xor i1 %18, true
  %24 = and i1 %6, %23
  %25 = select i1 %24, i64 %cusafe.size, i64 -1
  br i1 %21, label %26, label %27, !prof !4

26:                                               ; preds = %0
  call void @__cusafe_report(i32 %22, i64 %2, i64 %1, i64 %25, i32 4, i32 0, ptr addrspacecast (ptr addrspace(1) @__cusafe_loc.0 to ptr), ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
  br label %28

27:                                               ; preds = %0
  %v = load float, ptr %p, align 4
  br label %28

28:                                               ; preds = %26, %27
  %cusafe.val = phi float [ %v, %27 ], [ 0.000000e+00, %26 ]
  %w = fadd float %cusafe.val, 1.000000e+00
  %29 = ptrtoint ptr %a to i64
  %30 = ptrtoint ptr %p to i64
  %31 = lshr i64 %29, 41
  %32 = and i64 %31, 63
  %33 = sub i64 %32, 1
  %34 = icmp ult i64 %33, 35
  %35 = add i64 %32, 3
  %36 = and i64 %35, 63
  %37 = shl i64 -1, %36
  %38 = and i64 %29, %37
  %39 = select i1 %34, i64 %38, i64 ptrtoint (ptr addrspace(1) @__cusafe_no_header to i64)
  %cusafe.hdr1 = inttoptr i64 %39 to ptr addrspace(1)
  %cusafe.size2 = load i64, ptr addrspace(1) %cusafe.hdr1, align 8
  %40 = add i64 %38, 256
  %41 = sub i64 %30, %40
  %42 = add i64 %41, 4
  %43 = icmp ule i64 %42, %cusafe.size2
  %44 = icmp uge i64 %42, 4
  %45 = and i1 %43, %44
  %46 = icmp slt i64 %29, 0
  %47 = xor i1 %45, true
  %48 = and i1 %34, %47
  %49 = or i1 %46, %48
  %50 = select i1 %46, i32 1, i32 2
  %51 = xor i1 %46, true
  %52 = and i1 %34, %51
  %53 = select i1 %52, i64 %cusafe.size2, i64 -1
  br i1 %49, label %54, label %55, !prof !4

54:                                               ; preds = %28
  call void @__cusafe_report(i32 %50, i64 %30, i64 %29, i64 %53, i32 4, i32 1, ptr addrspacecast (ptr addrspace(1) @__cusafe_loc.0 to ptr), ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
  br label %56

55:                                               ; preds = %28
  store float %w, ptr %p, align 4
  br label %56

56:                                               ; preds = %54, %55
  ret void
}

; Function Attrs: cold noinline nounwind optsize
define internal void @__cusafe_report(i32 noundef %0, i64 noundef %1, i64 noundef %2, i64 noundef %3, i32 noundef %4, i32 noundef %5, ptr nocapture noundef readonly %6, ptr nocapture noundef %7) #0 {
  %9 = cmpxchg ptr %7, i32 0, i32 1 monotonic monotonic, align 4
  %10 = extractvalue { i32, i1 } %9, 1
  br i1 %10, label %11, label %58

11:                                               ; preds = %8
  %12 = atomicrmw add ptr inttoptr (i64 79164837199888 to ptr), i32 1 monotonic, align 4
  %13 = icmp ugt i32 %12, 63
  br i1 %13, label %57, label %14

14:                                               ; preds = %11
  %15 = load volatile i64, ptr inttoptr (i64 79164837199872 to ptr), align 4294967296, !tbaa !5
  %16 = inttoptr i64 %15 to ptr
  %17 = getelementptr inbounds i8, ptr %16, i64 64
  %18 = shl nuw nsw i32 %12, 9
  %19 = zext nneg i32 %18 to i64
  %20 = getelementptr inbounds i8, ptr %17, i64 %19
  store volatile i32 1, ptr %20, align 4, !tbaa !9
  %21 = getelementptr inbounds i8, ptr %20, i64 4
  store volatile i32 %0, ptr %21, align 4, !tbaa !9
  %22 = getelementptr inbounds i8, ptr %20, i64 8
  store volatile i64 %1, ptr %22, align 8, !tbaa !5
  %23 = getelementptr inbounds i8, ptr %20, i64 16
  store volatile i64 %2, ptr %23, align 8, !tbaa !5
  %24 = getelementptr inbounds i8, ptr %20, i64 24
  store volatile i64 %3, ptr %24, align 8, !tbaa !5
  %25 = getelementptr inbounds i8, ptr %20, i64 32
  store volatile i32 %4, ptr %25, align 4, !tbaa !9
  %26 = getelementptr inbounds i8, ptr %20, i64 36
  store volatile i32 %5, ptr %26, align 4, !tbaa !9
  %27 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %28 = getelementptr inbounds i8, ptr %20, i64 40
  store volatile i32 %27, ptr %28, align 4, !tbaa !9
  %29 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %30 = getelementptr inbounds i8, ptr %20, i64 44
  store volatile i32 %29, ptr %30, align 4, !tbaa !9
  %31 = tail call range(i32 0, 64) i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %32 = getelementptr inbounds i8, ptr %20, i64 48
  store volatile i32 %31, ptr %32, align 4, !tbaa !9
  %33 = tail call range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %34 = getelementptr inbounds i8, ptr %20, i64 52
  store volatile i32 %33, ptr %34, align 4, !tbaa !9
  %35 = tail call range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %36 = getelementptr inbounds i8, ptr %20, i64 56
  store volatile i32 %35, ptr %36, align 4, !tbaa !9
  %37 = tail call range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %38 = getelementptr inbounds i8, ptr %20, i64 60
  store volatile i32 %37, ptr %38, align 4, !tbaa !9
  %39 = getelementptr inbounds i8, ptr %20, i64 64
  br label %40

40:                                               ; preds = %14, %47
  %41 = phi i32 [ 1, %14 ], [ %49, %47 ]
  %42 = phi i32 [ 0, %14 ], [ %41, %47 ]
  %43 = zext nneg i32 %42 to i64
  %44 = getelementptr inbounds i8, ptr %6, i64 %43
  %45 = load i8, ptr %44, align 1, !tbaa !11
  %46 = icmp eq i8 %45, 0
  br i1 %46, label %51, label %47

47:                                               ; preds = %40
  %48 = getelementptr inbounds i8, ptr %39, i64 %43
  store volatile i8 %45, ptr %48, align 1, !tbaa !11
  %49 = add nuw nsw i32 %41, 1
  %50 = icmp eq i32 %49, 448
  br i1 %50, label %53, label %40, !llvm.loop !12

51:                                               ; preds = %40
  %52 = zext nneg i32 %42 to i64
  br label %53

53:                                               ; preds = %47, %51
  %54 = phi i64 [ %52, %51 ], [ 447, %47 ]
  %55 = getelementptr inbounds i8, ptr %20, i64 %54
  %56 = getelementptr inbounds i8, ptr %55, i64 64
  store volatile i8 0, ptr %56, align 1, !tbaa !11
  tail call void @llvm.nvvm.membar.sys()
  store volatile i32 2, ptr %20, align 4, !tbaa !9
  tail call void @llvm.nvvm.membar.sys()
  br label %57

57:                                               ; preds = %11, %53
  store atomic i32 2, ptr %7 monotonic, align 4
  tail call void @llvm.nvvm.membar.sys()
  br label %58

58:                                               ; preds = %57, %8
  %59 = load volatile i32, ptr inttoptr (i64 79164837199880 to ptr), align 8, !tbaa !9
  %60 = and i32 %59, 1
  %61 = icmp eq i32 %60, 0
  br i1 %61, label %63, label %62

62:                                               ; preds = %58
  ret void

63:                                               ; preds = %58, %63
  %64 = phi i32 [ %67, %63 ], [ 0, %58 ]
  %65 = load atomic i32, ptr %7 monotonic, align 4
  %66 = icmp eq i32 %65, 2
  %67 = add nuw nsw i32 %64, 1
  %68 = icmp eq i32 %67, 16777216
  %69 = select i1 %66, i1 true, i1 %68
  br i1 %69, label %70, label %63, !llvm.loop !14

70:                                               ; preds = %63
  tail call void @llvm.trap()
  unreachable
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.y() #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.z() #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.y() #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ctaid.z() #1

; Function Attrs: nocallback nounwind
declare void @llvm.nvvm.membar.sys() #2

; Function Attrs: cold noreturn nounwind memory(inaccessiblemem: write)
declare void @llvm.trap() #3

attributes #0 = { cold noinline nounwind optsize "frame-pointer"="all" "no-builtins" "no-trapping-math"="true" "stack-protector-buffer-size"="8" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nounwind }
attributes #3 = { cold noreturn nounwind memory(inaccessiblemem: write) }

!nvvm.annotations = !{!0}
!llvm.ident = !{!1}
!llvm.module.flags = !{!2, !3}

!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!2 = !{i32 1, !"wchar_size", i32 4}
!3 = !{i32 7, !"frame-pointer", i32 2}
!4 = !{!"branch_weights", i32 1, i32 1048575}
!5 = !{!6, !6, i64 0}
!6 = !{!"long long", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C/C++ TBAA"}
!9 = !{!10, !10, i64 0}
!10 = !{!"int", !7, i64 0}
!11 = !{!7, !7, i64 0}
!12 = distinct !{!12, !13}
!13 = !{!"llvm.loop.mustprogress"}
!14 = distinct !{!14, !13}
