// The thin C++ part of the cusafe pass plugin: what LLVM's C API cannot do.
// It registers a module pass at OptimizerLast (and as "cusafe" for opt -passes=)
// that hands the module to Rust (cusafe_run_on_module).
#include "llvm-c/Types.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"

extern "C" bool cusafe_run_on_module(LLVMModuleRef M);

namespace {
struct CusafePass : llvm::PassInfoMixin<CusafePass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    return cusafe_run_on_module(llvm::wrap(&M)) ? llvm::PreservedAnalyses::none()
                                                 : llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

void registerCallbacks(llvm::PassBuilder &PB) {
  PB.registerOptimizerLastEPCallback(
      [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) { MPM.addPass(CusafePass()); });
  PB.registerPipelineParsingCallback(
      [](llvm::StringRef Name, llvm::ModulePassManager &MPM,
         llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
        if (Name != "cusafe")
          return false;
        MPM.addPass(CusafePass());
        return true;
      });
}
} // namespace

// Called by the Rust-exported llvmGetPassPluginInfo (the entry point must live in Rust
// so that it is exported from the cdylib).
extern "C" llvm::PassPluginLibraryInfo cusafe_plugin_info() {
  return {LLVM_PLUGIN_API_VERSION, "cusafe", "0.1", registerCallbacks};
}

// ---- IR surgery the C API lacks ---------------------------------------------------

// Splits the block before `Before` and inserts `if (Cond) { <new block> }` there, the
// branch weighted as very unlikely (the cold report path). Returns the new block's
// terminator (a branch to the block that now starts with `Before`).
extern "C" LLVMValueRef cusafe_split_if_then(LLVMValueRef Cond, LLVMValueRef Before) {
  auto *I = llvm::unwrap<llvm::Instruction>(Before);
  llvm::MDBuilder MDB(I->getContext());
  llvm::Instruction *T = llvm::SplitBlockAndInsertIfThen(
      llvm::unwrap(Cond), I->getIterator(), /*Unreachable=*/false,
      MDB.createBranchWeights(1, (1u << 20) - 1));
  return llvm::wrap(T);
}

// Splits the block of `Before` so that a new block starts with `Before`; returns it.
extern "C" LLVMBasicBlockRef cusafe_split_before(LLVMValueRef Before) {
  auto *I = llvm::unwrap<llvm::Instruction>(Before);
  return llvm::wrap(I->getParent()->splitBasicBlock(I));
}

// Inlines the call `Call` (the C API has no inliner call). Returns whether it did.
extern "C" bool cusafe_inline_call(LLVMValueRef Call) {
  llvm::InlineFunctionInfo IFI;
  return llvm::InlineFunction(*llvm::unwrap<llvm::CallBase>(Call), IFI).isSuccess();
}
