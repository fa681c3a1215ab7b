# Counts of one nvdisasm listing (scripts/sass.sh): per kernel, the instruction lines of
# its .text section by opcode family, and how many are the kernel's own hot code. Not
# hot: report paths, each a basic block (from a label, or after a branch or exit, to
# the next) that makes an indirect call (the trap through __cusafe_trap_slot), and the
# lone EXIT block after it: code ptxas lays out between the checks that runs only when
# a check fails; and the bodies of functions the kernel calls (the device runtime's
# report, libdevice's slow paths), which ptxas places after the kernel: everything from
# an instruction that follows an unconditional EXIT, BRA or RET with no label between.
# Usage: awk -f sass-counts.awk FILE.sass
function close_block() {
  if (blk_cold) cold[k] += blk_n
  else if (blk_n == 1 && blk_exit && prev_cold) cold[k]++
  prev_cold = blk_cold; blk_n = 0; blk_cold = 0; blk_exit = 0
}
/^\/\/-+ \.text\./ {
  close_block(); prev_cold = 0; after_end = 0; callee = 0
  k = $2; sub(/^\.text\./, "", k); order[++n] = k; next
}
k != "" && /^[ \t]*\.L_x_[0-9]+:/ { close_block(); after_end = 0; next }
k != "" && /^[ \t]+\/\*[0-9a-f]+\*\// {
  line = $0; sub(/^[ \t]+\/\*[0-9a-f]+\*\/[ \t]+/, "", line)
  guarded = (line ~ /^@/); sub(/@!?U?P[0-9T] /, "", line)
  split(line, w, /[ .;]/); op = w[1]
  if (op == "NOP") next
  total[k]++
  if (after_end) callee = 1
  if (callee) callees[k]++
  blk_n++
  if (line ~ /^CALL\.REL\.NOINC R[0-9]/) blk_cold = 1
  blk_exit = (op == "EXIT" && blk_n == 1)
  if (op == "LDG") ldg[k]++; else if (op == "STG") stg[k]++
  else if (op == "LDS") lds[k]++; else if (op == "STS") sts[k]++
  else if (op == "BRA") bra[k]++; else if (op == "BSSY") bssy[k]++
  else if (op == "CALL") call[k]++
  ends = (op == "BRA" || op == "EXIT" || op == "RET")
  after_end = ends && !guarded
  if (ends && !(op == "EXIT" && blk_n == 1)) close_block()
}
END {
  close_block()
  for (i = 1; i <= n; i++) {
    k = order[i]
    printf "%s: %d instructions (%d hot: no report path, no callee), LDG %d, STG %d, LDS %d, STS %d, BRA %d, BSSY %d, CALL %d\n",
      k, total[k], total[k] - cold[k] - callees[k], ldg[k], stg[k], lds[k], sts[k], bra[k], bssy[k], call[k]
  }
}
