/* cusafe fuzz harness API (link: `cusafe-clang++ --cusafe-fuzz`, which adds
 * libcusafe_fuzz.a and this include directory).
 *
 * Two ways to write a persistent harness, one CUDA context for many inputs:
 *
 *   1. An entry point, libFuzzer style (the macro also defines main()):
 *
 *        #include <cusafe/fuzz.h>
 *        CUSAFE_FUZZ_TARGET(data, size) {
 *          ... parse data[0..size), launch kernels ...
 *          return 0;
 *        }
 *
 *   2. A loop inside your own main(), after one-time set-up:
 *
 *        int main(int argc, char **argv) {
 *          set_up();
 *          CUSAFE_FUZZ_LOOP(10000) {
 *            run_one(cusafe_fuzz_data(), cusafe_fuzz_size());
 *          }
 *        }
 *
 * Under `cusafe fuzz` each turn of the loop takes the next input from the fuzzer;
 * device coverage and cusafe reports are collected after each turn, and after the
 * given number of turns (CUSAFE_FUZZ_TARGET: the CUSAFE_FUZZ_TURNS environment
 * variable, which `cusafe fuzz --turns` sets; 10000) the process exits and the fuzzer
 * starts a fresh one.
 * Outside the fuzzer the loop runs once, on the file named by argv[1] (form 1), the
 * file named by CUSAFE_FUZZ_INPUT, or standard input.
 *
 * Unchanged programs need none of this: `cusafe fuzz -- ./app @@` runs them once
 * per input (the input file's path replaces @@, or the input comes on stdin).
 */
#ifndef CUSAFE_FUZZ_H
#define CUSAFE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Starts the next turn of a persistent loop: 1 while there is an input to run,
 *  0 when the loop is over (after `max_turns` turns, or once outside the fuzzer). */
int cusafe_fuzz_loop(unsigned max_turns);
/** The current input's bytes (valid until the next cusafe_fuzz_loop call). */
const uint8_t *cusafe_fuzz_data(void);
/** The current input's length in bytes. */
size_t cusafe_fuzz_size(void);
/** Runs `one` on every input of a persistent loop; the body of CUSAFE_FUZZ_TARGET's
 *  main(). argv[1], when given, is the input file outside the fuzzer. */
int cusafe_fuzz_main(int argc, char **argv, int (*one)(const uint8_t *, size_t));

/* The fuzzer looks for this marker in the binary to know it may run it persistently. */
#define CUSAFE_FUZZ_PERSISTENT_MARKER "##CUSAFE_FUZZ_PERSISTENT##"

#ifdef __cplusplus
}
#define CUSAFE_FUZZ_EXTERN_C extern "C"
#else
#define CUSAFE_FUZZ_EXTERN_C
#endif


#define CUSAFE_FUZZ_LOOP(max_turns)                                                   \
  static volatile const char cusafe_fuzz_marker_[]                                   \
      __attribute__((used)) = CUSAFE_FUZZ_PERSISTENT_MARKER;                         \
  (void)cusafe_fuzz_marker_;                                                          \
  while (cusafe_fuzz_loop(max_turns))

#define CUSAFE_FUZZ_TARGET(data, size)                                                \
  CUSAFE_FUZZ_EXTERN_C int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);  \
  __attribute__((used)) static volatile const char cusafe_fuzz_marker_[] =            \
      CUSAFE_FUZZ_PERSISTENT_MARKER;                                                  \
  int main(int argc, char **argv) {                                                   \
    (void)cusafe_fuzz_marker_;                                                        \
    return cusafe_fuzz_main(argc, argv, LLVMFuzzerTestOneInput);                      \
  }                                                                                   \
  CUSAFE_FUZZ_EXTERN_C int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)

#endif
