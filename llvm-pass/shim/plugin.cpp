// The thin C++ part of the cusafe pass plugin: what LLVM's C API cannot do.
// It registers a module pass at OptimizerLast (and as "cusafe" for opt -passes=)
// that hands the module to Rust (cusafe_run_on_module).
#include "llvm-c/Types.h"
#include <optional>
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

extern "C" bool cusafe_run_on_module(LLVMModuleRef M);
extern "C" bool cusafe_windows_on_module(LLVMModuleRef M);

namespace {
struct CusafePass : llvm::PassInfoMixin<CusafePass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    return cusafe_run_on_module(llvm::wrap(&M)) ? llvm::PreservedAnalyses::none()
                                                 : llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// Gives kernels their launch-time window parameters at the start of the pipeline,
// before NVPTX's annotation cache (keyed by function address, never cleared before
// code generation) can hold an entry for a function that is freed later: a replacement
// kernel made at OptimizerLast may reuse such an address and lose its "kernel"
// annotation.
struct CusafeWindowsPass : llvm::PassInfoMixin<CusafeWindowsPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    return cusafe_windows_on_module(llvm::wrap(&M)) ? llvm::PreservedAnalyses::none()
                                                     : llvm::PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

void registerCallbacks(llvm::PassBuilder &PB) {
  PB.registerPipelineStartEPCallback(
      [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) {
        MPM.addPass(CusafeWindowsPass());
      });
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

// Splits the block before `Before` and inserts `if (Cond) { <new block> }` there, with
// no branch weights (device coverage's warp-leader store). Returns the new block's
// terminator.
extern "C" LLVMValueRef cusafe_split_if(LLVMValueRef Cond, LLVMValueRef Before) {
  auto *I = llvm::unwrap<llvm::Instruction>(Before);
  return llvm::wrap(
      llvm::SplitBlockAndInsertIfThen(llvm::unwrap(Cond), I->getIterator(), /*Unreachable=*/false));
}

// Splits every critical edge of `Fn` (edge coverage: each edge then has a block of its
// own), as SanitizerCoverage does; the new block of an edge follows its source block.
// Returns how many edges it split.
extern "C" unsigned cusafe_split_critical_edges(LLVMValueRef Fn) {
  auto &F = *llvm::unwrap<llvm::Function>(Fn);
  return llvm::SplitAllCriticalEdges(
      F, llvm::CriticalEdgeSplittingOptions().setIgnoreUnreachableDests());
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

// Gives every loop of `Fn` a preheader (and dedicated exits, one backedge), as
// loop-simplify does: the optimizer's last CFG clean-ups fold a preheader into the block
// that tests "the loop runs at all" (matvec's `for (k = lane; k < n; k += 32)`), which
// leaves no place to hoist a check to.
extern "C" void cusafe_simplify_loops(LLVMValueRef Fn) {
  auto &F = *llvm::unwrap<llvm::Function>(Fn);
  llvm::DominatorTree DT(F);
  llvm::LoopInfo LI(DT);
  for (llvm::Loop *L : LI)
    llvm::simplifyLoop(L, &DT, &LI, nullptr, nullptr, nullptr, false);
}

// Copies the whole body of `Fn` (box_copy.rs: a copy for blocks of a bounded shape). A
// new first block takes the old entry block's static allocas, which both copies then
// share, and is left without a terminator; the copies of the blocks follow the
// originals, in their order. Returns the copy of the old entry block. The C API has no
// block cloning.
extern "C" LLVMBasicBlockRef cusafe_clone_body(LLVMValueRef Fn) {
  auto &F = *llvm::unwrap<llvm::Function>(Fn);
  llvm::BasicBlock &Old = F.getEntryBlock();
  llvm::SmallVector<llvm::AllocaInst *, 8> Allocas;
  for (llvm::Instruction &I : Old)
    if (auto *A = llvm::dyn_cast<llvm::AllocaInst>(&I); A && A->isStaticAlloca())
      Allocas.push_back(A);
  llvm::SmallVector<llvm::BasicBlock *, 32> Blocks;
  for (llvm::BasicBlock &BB : F)
    Blocks.push_back(&BB);
  auto *Head = llvm::BasicBlock::Create(F.getContext(), "cusafe.box", &F, &Old);
  for (llvm::AllocaInst *A : Allocas)
    A->moveBefore(*Head, Head->end());
  llvm::ValueToValueMapTy VMap;
  llvm::SmallVector<llvm::BasicBlock *, 32> Copies;
  for (llvm::BasicBlock *BB : Blocks) {
    llvm::BasicBlock *C = llvm::CloneBasicBlock(BB, VMap, ".box", &F);
    VMap[BB] = C;
    Copies.push_back(C);
  }
  llvm::remapInstructionsInBlocks(Copies, VMap);
  return llvm::wrap(llvm::cast<llvm::BasicBlock>(VMap[&Old]));
}

// ---- Kernel signatures (launch-time bounds) ----------------------------------------

// Bytes kernel parameter `I` of `Fn` takes in the parameter space: its byval type's
// size for an aggregate passed by value, else its type's.
extern "C" uint64_t cusafe_param_bytes(LLVMValueRef Fn, unsigned I) {
  auto &F = *llvm::unwrap<llvm::Function>(Fn);
  const llvm::DataLayout &DL = F.getParent()->getDataLayout();
  if (llvm::Type *T = F.getParamByValType(I))
    return DL.getTypeAllocSize(T);
  return DL.getTypeAllocSize(F.getArg(I)->getType());
}

// Whether kernel parameter `I` of `Fn` is an aggregate passed by value.
extern "C" bool cusafe_param_is_byval(LLVMValueRef Fn, unsigned I) {
  return llvm::unwrap<llvm::Function>(Fn)->hasParamAttribute(I, llvm::Attribute::ByVal);
}

// Replaces function `Fn` with one that takes `N` more i64 parameters after its own:
// same name, attributes, metadata and body (moved, not copied); every use of `Fn` (the
// nvvm.annotations entry of a kernel) now names the new function. The C API cannot move
// a body between functions with its attributes and debug info. Returns the new one.
// `Fn`, emptied and renamed "__cusafe_replaced.<name>", is taken out of the module and
// never freed: NVPTX's annotation cache is keyed by function address and may remember
// `Fn` as a kernel with its launch bounds; freed, its address could go to a later
// function, which would inherit them. (Left in the module as an unused declaration,
// the pipeline's dead-prototype clean-up freed it: the device runtime's __cusafe_trap,
// linked at OptimizerLast, once came out a kernel, and its callers hung.)
extern "C" LLVMValueRef cusafe_add_i64_params(LLVMValueRef Fn, unsigned N) {
  auto *F = llvm::unwrap<llvm::Function>(Fn);
  llvm::SmallVector<llvm::Type *, 16> Params(F->getFunctionType()->params());
  Params.append(N, llvm::Type::getInt64Ty(F->getContext()));
  auto *Ty = llvm::FunctionType::get(F->getReturnType(), Params, F->isVarArg());
  auto *NF = llvm::Function::Create(Ty, F->getLinkage(), F->getAddressSpace(), "");
  F->getParent()->getFunctionList().insert(F->getIterator(), NF);
  NF->copyAttributesFrom(F);
  NF->copyMetadata(F, 0);
  NF->splice(NF->begin(), F);
  for (unsigned I = 0; I < F->arg_size(); ++I) {
    F->getArg(I)->replaceAllUsesWith(NF->getArg(I));
    NF->getArg(I)->takeName(F->getArg(I));
  }
  F->replaceAllUsesWith(NF);
  NF->takeName(F);
  F->setName("__cusafe_replaced." + NF->getName());
  F->clearMetadata();
  F->setLinkage(llvm::GlobalValue::ExternalLinkage);
  F->removeFromParent();
  return llvm::wrap(NF);
}

// ---- Loop ranges: what a whole loop's accesses through one pointer cover ----------
//
// ScalarEvolution and its expander have no C API. An access that runs on every trip of
// its loop, through an affine address {start,+,step} with a computable trip count,
// touches exactly [lo, lo + span) over the loop; the pass checks that once in the
// preheader instead of once per trip (elim.rs decides, check.rs emits).

namespace {
struct LoopRanges {
  llvm::DominatorTree DT;
  llvm::LoopInfo LI;
  llvm::TargetLibraryInfoImpl TLII;
  llvm::TargetLibraryInfo TLI;
  llvm::AssumptionCache AC;
  llvm::ScalarEvolution SE;
  // The opaque copies made so far (see `opaqueCopy`), by the value copied.
  llvm::DenseMap<llvm::Value *, llvm::Value *> Copies;
  explicit LoopRanges(llvm::Function &F)
      : DT(F), LI(DT), TLII(llvm::Triple(F.getParent()->getTargetTriple())), TLI(TLII, &F),
        AC(F), SE(F, TLI, AC, DT, LI) {}
};

// The inline-asm move of `opaqueCopy`.
const char OpaqueMove[] = "mov.b64 $0, $1;";

// No calls but intrinsics, no inline asm but `opaqueCopy`'s moves: nothing in the loop
// can stop the thread before a later trip's access.
bool onlyIntrinsicCalls(const llvm::Loop &L) {
  for (const llvm::BasicBlock *BB : L.blocks())
    for (const llvm::Instruction &I : *BB)
      if (const auto *CB = llvm::dyn_cast<llvm::CallBase>(&I)) {
        if (const auto *IA = llvm::dyn_cast<llvm::InlineAsm>(CB->getCalledOperand());
            IA && IA->getAsmString() == OpaqueMove)
          continue;
        const llvm::Function *F = CB->getCalledFunction();
        if (CB->isInlineAsm() || !F || !F->isIntrinsic())
          return false;
      }
  return true;
}

// Block BB runs on every trip: it dominates every latch and every exiting block.
bool everyTrip(const LoopRanges &S, const llvm::Loop &L, const llvm::BasicBlock *BB) {
  llvm::SmallVector<llvm::BasicBlock *, 4> Blocks;
  L.getExitingBlocks(Blocks);
  L.getLoopLatches(Blocks);
  for (const llvm::BasicBlock *B : Blocks)
    if (!S.DT.dominates(BB, B))
      return false;
  return true;
}
// The trips of loop L on which block BB runs, when it runs on a leading run of them
// rather than on all: BB's only predecessor C runs on every trip and enters BB exactly
// when `iv < X` (or `iv <= X`, signed), with iv an affine recurrence of L stepping by
// +1 without signed wrap and X invariant in L (hotspot3d's layer above, `k < nz - 1 ?
// t_in[c + xy] : mid`, on every trip but the last). The condition then holds on trips
// 0 .. X - start - 1 (.. X - start for `<=`) and on none after. Gives that count as an
// i64 expression, clamped to [0, trips + 1] (`Trips`, the backedge-taken count);
// nullptr otherwise.
const llvm::SCEV *leadingTrips(LoopRanges &S, const llvm::Loop &L, const llvm::BasicBlock *BB,
                               const llvm::SCEV *Trips) {
  const llvm::BasicBlock *C = BB->getSinglePredecessor();
  if (!C || !L.contains(C) || C == BB || !everyTrip(S, L, C))
    return nullptr;
  const auto *Br = llvm::dyn_cast<llvm::BranchInst>(C->getTerminator());
  if (!Br || !Br->isConditional() || Br->getSuccessor(0) == Br->getSuccessor(1))
    return nullptr;
  const auto *Cmp = llvm::dyn_cast<llvm::ICmpInst>(Br->getCondition());
  if (!Cmp)
    return nullptr;
  llvm::CmpInst::Predicate Pred = Cmp->getPredicate();
  if (Br->getSuccessor(0) != BB)
    Pred = llvm::CmpInst::getInversePredicate(Pred);
  llvm::ScalarEvolution &SE = S.SE;
  const llvm::SCEV *Lhs = SE.getSCEV(Cmp->getOperand(0));
  const llvm::SCEV *Rhs = SE.getSCEV(Cmp->getOperand(1));
  if (SE.isLoopInvariant(Lhs, &L)) {
    std::swap(Lhs, Rhs);
    Pred = llvm::CmpInst::getSwappedPredicate(Pred);
  }
  if (Pred != llvm::CmpInst::ICMP_SLT && Pred != llvm::CmpInst::ICMP_SLE)
    return nullptr;
  const auto *AR = llvm::dyn_cast<llvm::SCEVAddRecExpr>(Lhs);
  if (!AR || AR->getLoop() != &L || !AR->isAffine() || !AR->hasNoSignedWrap() ||
      !SE.isLoopInvariant(Rhs, &L) || !AR->getType()->isIntegerTy() ||
      AR->getType()->getIntegerBitWidth() > 32)
    return nullptr;
  const auto *Step = llvm::dyn_cast<llvm::SCEVConstant>(AR->getStepRecurrence(SE));
  if (!Step || !Step->getAPInt().isOne())
    return nullptr;
  llvm::Type *I64 = llvm::Type::getInt64Ty(BB->getContext());
  // Trips where the condition holds: X - start (+ 1 for <=), exact in 64 bits.
  const llvm::SCEV *Holds = SE.getMinusSCEV(SE.getSignExtendExpr(Rhs, I64),
                                            SE.getSignExtendExpr(AR->getStart(), I64));
  if (Pred == llvm::CmpInst::ICMP_SLE)
    Holds = SE.getAddExpr(Holds, SE.getOne(I64));
  const llvm::SCEV *All = SE.getAddExpr(SE.getTruncateOrZeroExtend(Trips, I64), SE.getOne(I64));
  return SE.getSMaxExpr(SE.getZero(I64), SE.getSMinExpr(Holds, All));
}

// An access's address over loop L as Base + Scale * ext(X), X an affine recurrence of L:
// X itself when the address is one (Same: no Base, Scale 1), else a 32-bit-or-narrower
// index, sign- or zero-extended and scaled by a constant (what `a[i * m + j]` with int
// indices becomes when the index's recurrence is not known not to wrap).
struct Walk {
  const llvm::SCEV *Base = nullptr;
  int64_t Scale = 1;
  const llvm::SCEVAddRecExpr *X = nullptr;
  enum { Same, Signed, Unsigned } Ext = Same;
};

std::optional<Walk> walkOf(llvm::ScalarEvolution &SE, const llvm::Loop &L, const llvm::SCEV *P) {
  auto affine = [&](const llvm::SCEV *V) {
    const auto *AR = llvm::dyn_cast<llvm::SCEVAddRecExpr>(V);
    return AR && AR->getLoop() == &L && AR->isAffine() ? AR : nullptr;
  };
  if (const auto *AR = affine(P))
    return Walk{nullptr, 1, AR, Walk::Same};
  const auto *Add = llvm::dyn_cast<llvm::SCEVAddExpr>(P);
  if (!Add)
    return std::nullopt;
  llvm::SmallVector<const llvm::SCEV *, 4> Invariant;
  const llvm::SCEV *Var = nullptr;
  for (const llvm::SCEV *Op : Add->operands()) {
    if (SE.isLoopInvariant(Op, &L))
      Invariant.push_back(Op);
    else if (Var)
      return std::nullopt;
    else
      Var = Op;
  }
  if (!Var || Invariant.empty())
    return std::nullopt;
  Walk W;
  if (const auto *M = llvm::dyn_cast<llvm::SCEVMulExpr>(Var)) {
    const auto *C = llvm::dyn_cast<llvm::SCEVConstant>(M->getOperand(0));
    if (M->getNumOperands() != 2 || !C || C->getAPInt().getSignificantBits() > 31)
      return std::nullopt;
    W.Scale = C->getAPInt().getSExtValue();
    Var = M->getOperand(1);
  }
  if (const auto *E = llvm::dyn_cast<llvm::SCEVSignExtendExpr>(Var))
    W.Ext = Walk::Signed, Var = E->getOperand();
  else if (const auto *E = llvm::dyn_cast<llvm::SCEVZeroExtendExpr>(Var))
    W.Ext = Walk::Unsigned, Var = E->getOperand();
  else
    return std::nullopt;
  W.X = affine(Var);
  // A 32-bit index only: a narrower one ((j + i) % 256 is an 8-bit walk) wraps
  // inside ordinary buffers, so its first and last trips bound nothing.
  if (!W.X || SE.getTypeSizeInBits(W.X->getType()) != 32)
    return std::nullopt;
  W.Base = SE.getAddExpr(Invariant);
  return W;
}
} // namespace

extern "C" void *cusafe_loop_ranges_new(LLVMValueRef F) {
  return new LoopRanges(*llvm::unwrap<llvm::Function>(F));
}

extern "C" void cusafe_loop_ranges_free(void *S) { delete static_cast<LoopRanges *>(S); }

// A copy of pointer `V` that ScalarEvolution cannot see through: an inline-asm move,
// which ptxas folds away, made once per function right after `V` is defined (at the
// entry for arguments and constants), so that it dominates wherever the expander
// hoists what uses it. A loop range expanded from it shares no value with the loop's
// own addresses, and codegen's strength reduction, which reuses any value of a
// matching expression, builds the loop's induction variables as it would without the
// check. (mvt's column walk: its first address, A + 4i, reused from the check, cost
// two more 64-bit registers across the loop, and ptxas then issued a trip's loads in
// two rounds.)
static llvm::Value *opaqueCopy(LoopRanges &S, llvm::Value *V, llvm::Function &F) {
  llvm::Value *&Copy = S.Copies[V];
  if (Copy)
    return Copy;
  llvm::BasicBlock::iterator At = F.getEntryBlock().getFirstInsertionPt();
  if (auto *I = llvm::dyn_cast<llvm::Instruction>(V))
    At = llvm::isa<llvm::PHINode>(I) ? I->getParent()->getFirstInsertionPt()
                                     : std::next(I->getIterator());
  llvm::Type *Ty = V->getType();
  auto *FT = llvm::FunctionType::get(Ty, {Ty}, false);
  auto *Move = llvm::InlineAsm::get(FT, OpaqueMove, "=l,l", /*hasSideEffects=*/false);
  llvm::IRBuilder<> B(At->getParent(), At);
  Copy = B.CreateCall(FT, Move, {V}, "cusafe.opaque");
  return Copy;
}

// `X` with its pointer base (a value) replaced by its opaque copy (see `opaqueCopy`).
static const llvm::SCEV *behindCopy(LoopRanges &S, const llvm::SCEV *X, llvm::Function &F) {
  const auto *U = llvm::dyn_cast<llvm::SCEVUnknown>(S.SE.getPointerBase(X));
  if (!U || !U->getType()->isPointerTy() ||
      F.getParent()->getDataLayout().getPointerTypeSizeInBits(U->getType()) != 64)
    return X;
  llvm::ValueToSCEVMapTy Map;
  Map[U->getValue()] = S.SE.getUnknown(opaqueCopy(S, U->getValue(), F));
  return llvm::SCEVParameterRewriter::rewrite(X, S.SE, Map);
}

// `Span`, or 0 (an empty range, which fits any window) when `Runs` (the trips that make
// the access, see `leadingTrips`) is 0; `Span` itself for an access on every trip.
static llvm::Value *noneOrSpan(llvm::SCEVExpander &Exp, llvm::IRBuilder<> &B,
                               const llvm::SCEV *Runs, llvm::Value *Span, llvm::Instruction *T) {
  if (!Runs)
    return Span;
  llvm::Value *N = Exp.expandCodeFor(Runs, B.getInt64Ty(), T);
  return B.CreateSelect(B.CreateICmpEQ(N, B.getInt64(0)), B.getInt64(0), Span);
}

extern "C" bool cusafe_loop_range(void *P, LLVMValueRef Inst, LLVMValueRef Ptr,
                                  LLVMValueRef Root, uint64_t Below, uint64_t Len,
                                  LLVMValueRef *Lo,
                                  LLVMValueRef *Span, LLVMValueRef *At, bool Expand) {
  auto &S = *static_cast<LoopRanges *>(P);
  auto *I = llvm::unwrap<llvm::Instruction>(Inst);
  llvm::Loop *L = S.LI.getLoopFor(I->getParent());
  if (!L)
    return false;
  llvm::BasicBlock *Pre = L->getLoopPreheader();
  if (!Pre || !L->isLoopInvariant(llvm::unwrap(Root)) || !onlyIntrinsicCalls(*L))
    return false;
  // Trips taken (the backedge-taken count); for an access on leading trips only (see
  // `leadingTrips`), the last trip that makes it, and `Runs`, how many do (the range
  // is then empty, and fits every window, when none does).
  llvm::Type *I64 = llvm::Type::getInt64Ty(I->getContext());
  const llvm::SCEV *Trips = S.SE.getBackedgeTakenCount(L);
  const llvm::SCEV *Runs = nullptr;
  if (!everyTrip(S, *L, I->getParent())) {
    if (llvm::isa<llvm::SCEVCouldNotCompute>(Trips))
      return false;
    Runs = leadingTrips(S, *L, I->getParent(), Trips);
    if (!Runs)
      return false;
    Trips = S.SE.getSMaxExpr(S.SE.getZero(I64), S.SE.getMinusSCEV(Runs, S.SE.getOne(I64)));
  }
  const llvm::DataLayout &DL = I->getModule()->getDataLayout();
  if (DL.getIndexTypeSizeInBits(llvm::unwrap(Ptr)->getType()) != 64)
    return false;
  llvm::Type *PtrTy = llvm::unwrap(Ptr)->getType();
  llvm::Instruction *T = Pre->getTerminator();
  llvm::Function *F = T->getFunction();
  llvm::SCEVExpander Exp(S.SE, DL, "cusafe.loop");
  const llvm::SCEV *PtrS = S.SE.getSCEV(llvm::unwrap(Ptr));
  if (S.SE.isLoopInvariant(PtrS, L)) {
    // The same address on every trip (gemm's As[ty][tx] = ... in its tile loop): the
    // range is one trip's, [Ptr - Below, Ptr + Len), whatever the trip count (the first
    // trip makes the access).
    if (!Exp.isSafeToExpandAt(PtrS, T) || (Runs && !Exp.isSafeToExpandAt(Runs, T)))
      return false;
    if (!Expand)
      return true;
    llvm::IRBuilder<> B(T);
    llvm::Value *P0 = Exp.expandCodeFor(PtrS, PtrTy, T);
    *Lo = llvm::wrap(B.CreateGEP(B.getInt8Ty(), P0, B.getInt64(-static_cast<int64_t>(Below))));
    *Span = llvm::wrap(noneOrSpan(Exp, B, Runs, B.getInt64(Below + Len), T));
    *At = llvm::wrap(T);
    return true;
  }
  if (llvm::isa<llvm::SCEVCouldNotCompute>(Trips))
    return false;
  std::optional<Walk> W = walkOf(S.SE, *L, PtrS);
  if (!W)
    return false;
  const llvm::SCEVAddRecExpr *AR = W->X;
  const llvm::SCEV *StepS = AR->getStepRecurrence(S.SE);
  const llvm::SCEV *Trips64 = S.SE.getTruncateOrZeroExtend(Trips, I64);
  const auto *Step = llvm::dyn_cast<llvm::SCEVConstant>(StepS);
  if (W->Ext == Walk::Same && Step) {
    // The address itself steps by a constant: the range is exact, no guard needed.
    if (Step->getAPInt().getSignificantBits() > 32)
      return false;
    const llvm::SCEV *Last = AR->evaluateAtIteration(Trips, S.SE);
    const llvm::SCEV *LoS =
        S.SE.getAddExpr(Step->getAPInt().isNegative() ? Last : AR->getStart(),
                        S.SE.getConstant(I64, -Below, /*isSigned=*/true));
    const llvm::SCEV *SpanS = S.SE.getAddExpr(
        S.SE.getMulExpr(Trips64, S.SE.getConstant(I64, Step->getAPInt().abs().getZExtValue())),
        S.SE.getConstant(I64, Below + Len));
    if (!Exp.isSafeToExpandAt(LoS, T) || !Exp.isSafeToExpandAt(SpanS, T) ||
        (Runs && !Exp.isSafeToExpandAt(Runs, T)))
      return false;
    if (!Expand)
      return true;
    *Lo = llvm::wrap(Exp.expandCodeFor(behindCopy(S, LoS, *F), PtrTy, T));
    llvm::IRBuilder<> B(T);
    *Span = llvm::wrap(noneOrSpan(Exp, B, Runs, Exp.expandCodeFor(SpanS, I64, T), T));
    *At = llvm::wrap(T);
    return true;
  }
  // Otherwise (a run-time step, a[i * m + j], or a walk of a 32-bit index) the trips go
  // from the first address to the last one way or the other and cover
  // [min(first, last), max(first, last) + Len) and the Below bytes before it, provided
  // that (1) the index does not wrap in its own type (its last value, computed in 64
  // bits, is still one of that type: then every trip's index is the straight-line one)
  // and (2) the walk does not wrap around the address space between the two: it does
  // not when |step| * trips < 2^63 (a wrapped walk travels at least 2^64 minus the
  // window's size). When either fails, the span is all ones, which fits no window, and
  // the check fails; the program's trips then go outside the window too (a walk of
  // 2^63 bytes or more in steps under 2^63 cannot stay inside a window under 2^62
  // bytes), or its index overflows its signed type (undefined in the source), so no
  // access the program would not make is reported. (An unsigned index that wraps is
  // defined, but its access then lies some 2^32 elements away: reported too.)
  if (!Exp.isSafeToExpandAt(AR->getStart(), T) || !Exp.isSafeToExpandAt(StepS, T) ||
      !Exp.isSafeToExpandAt(Trips64, T) || (W->Base && !Exp.isSafeToExpandAt(W->Base, T)) ||
      (Runs && !Exp.isSafeToExpandAt(Runs, T)))
    return false;
  if (!Expand)
    return true;
  llvm::IRBuilder<> B(T);
  llvm::Value *TripsV = Exp.expandCodeFor(Trips64, I64, T);
  llvm::Value *First, *S64, *T64;
  if (W->Ext == Walk::Same) {
    First = Exp.expandCodeFor(behindCopy(S, AR->getStart(), *F), PtrTy, T);
    S64 = B.CreatePtrToInt(First, I64);
    T64 = Exp.expandCodeFor(StepS, I64, T);
  } else {
    llvm::Type *XTy = AR->getType();
    llvm::Value *X0 = Exp.expandCodeFor(AR->getStart(), XTy, T);
    S64 = W->Ext == Walk::Signed ? B.CreateSExt(X0, I64) : B.CreateZExt(X0, I64);
    T64 = B.CreateSExt(Exp.expandCodeFor(StepS, XTy, T), I64);
  }
  // A walk of an index of 32 bits or fewer over a trip count of 32 bits or fewer needs
  // no product test: |step| < 2^32 and trips < 2^32 keep |step| * trips under 2^64,
  // so the last index below is exact in 64 bits, its own type's range bounds the walk,
  // and elements under 2^30 bytes keep it far from wrapping the address space.
  bool Short = W->Ext != Walk::Same && AR->getType()->getIntegerBitWidth() <= 32 &&
               S.SE.getTypeSizeInBits(Trips->getType()) <= 32 &&
               W->Scale > -(int64_t(1) << 30) && W->Scale < (int64_t(1) << 30);
  llvm::Value *Far = B.getFalse();
  if (!Short) {
    llvm::Value *Mag = B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, T64, B.getFalse());
    llvm::Value *Trip =
        B.CreateBinaryIntrinsic(llvm::Intrinsic::umul_with_overflow, Mag, TripsV);
    Far = B.CreateOr(B.CreateExtractValue(Trip, 1),
                     B.CreateICmpSLT(B.CreateExtractValue(Trip, 0), B.getInt64(0)));
  }
  llvm::Value *L64 = B.CreateAdd(S64, B.CreateMul(T64, TripsV));
  llvm::Value *A = S64, *Z = L64;
  if (W->Ext != Walk::Same) {
    llvm::Type *XTy = AR->getType();
    llvm::Value *Narrow = B.CreateTrunc(L64, XTy);
    llvm::Value *Back = W->Ext == Walk::Signed ? B.CreateSExt(Narrow, I64) : B.CreateZExt(Narrow, I64);
    Far = B.CreateOr(Far, B.CreateICmpNE(Back, L64));
    llvm::Value *Base = Exp.expandCodeFor(behindCopy(S, W->Base, *F), PtrTy, T);
    llvm::Value *Scale = B.getInt64(W->Scale);
    First = B.CreateGEP(B.getInt8Ty(), Base, B.CreateMul(S64, Scale));
    llvm::Value *BaseInt = B.CreatePtrToInt(Base, I64);
    A = B.CreateAdd(BaseInt, B.CreateMul(S64, Scale));
    Z = B.CreateAdd(BaseInt, B.CreateMul(L64, Scale));
  }
  llvm::Value *Min = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, A, Z);
  llvm::Value *Max = B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, A, Z);
  llvm::Value *Covered = B.CreateAdd(B.CreateSub(Max, Min), B.getInt64(Below + Len));
  llvm::Value *Walked = B.CreateSelect(Far, B.getInt64(~0ULL), Covered);
  *Span = llvm::wrap(noneOrSpan(Exp, B, Runs, Walked, T));
  // The lowest address as the first plus a byte offset: a pointer derived from it.
  *Lo = llvm::wrap(B.CreateGEP(B.getInt8Ty(), First,
                               B.CreateSub(B.CreateSub(Min, A), B.getInt64(Below))));
  *At = llvm::wrap(T);
  return true;
}

// The signed range ScalarEvolution knows for integer `V` (at most 64 bits) anywhere it
// is defined: loop induction variables' bounds from their trip counts, range metadata
// and attributes, arithmetic on those. False when it knows nothing (the full range).
extern "C" bool cusafe_signed_range(void *P, LLVMValueRef V, int64_t *Lo, int64_t *Hi) {
  auto &S = *static_cast<LoopRanges *>(P);
  llvm::Value *X = llvm::unwrap(V);
  if (!X->getType()->isIntegerTy() || X->getType()->getIntegerBitWidth() > 64 ||
      !S.SE.isSCEVable(X->getType()))
    return false;
  llvm::ConstantRange R = S.SE.getSignedRange(S.SE.getSCEV(X));
  if (R.isFullSet() || R.isEmptySet())
    return false;
  *Lo = R.getSignedMin().getSExtValue();
  *Hi = R.getSignedMax().getSExtValue();
  return true;
}
