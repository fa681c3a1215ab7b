//! A launch of an instrumented kernel that the driver refuses for its resources (CUDA
//! error 701, "too many resources requested for launch"): the checks take registers a
//! plain build does not, so a block size that fitted the plain kernel may not fit the
//! instrumented one. Said once per kernel, with its registers, the block it asked for
//! and the fixes; the program still gets the error.

use std::collections::HashSet;
use std::sync::Mutex;

use cudarc::driver::sys as cu;

use super::{windows, Kernel, Runtime};
use crate::cuda::driver::attribute;
use crate::cuda::kernels;

/// CUDA error 701 (`cudaErrorLaunchOutOfResources`, `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`:
/// the same number in both APIs).
pub const OUT_OF_RESOURCES: u32 = 701;

/// Kernels already explained (by name).
static SAID: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// What the message says of one kernel.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal<'a> {
    /// The kernel's name (demangled).
    pub kernel: &'a str,
    /// Registers per thread.
    pub registers: u32,
    /// The most threads per block the kernel can launch with.
    pub max_threads: u32,
    /// Threads per block the launch asked for.
    pub threads: u64,
    /// Registers per block on the device.
    pub block_registers: u32,
}

impl Refusal<'_> {
    /// The message, one line.
    pub fn message(&self) -> String {
        let Refusal {
            kernel,
            registers,
            max_threads,
            threads,
            block_registers,
        } = self;
        let cap = (u64::from(*block_registers) / (*threads).max(1)) / 8 * 8;
        format!(
            "cusafe: error: kernel {kernel} could not launch: too many resources requested \
             for launch (CUDA error 701). Built by cusafe, it uses {registers} registers per \
             thread, so a block can have at most {max_threads} threads; this launch asks for \
             {threads}. The checks take registers a plain build does not (cusafe-clang++'s \
             compile-time warning about this kernel names the plain build's count). Fix: \
             declare the \
             kernel __launch_bounds__({threads}) so that the compiler fits it to {threads} \
             threads, or build with -Xcuda-ptxas -maxrregcount={cap}, or launch at most \
             {max_threads} threads per block\n"
        )
    }
}

impl Runtime {
    /// After a launch of `kernel` with `threads` per block failed with
    /// [`OUT_OF_RESOURCES`]: explains it once per kernel, for kernels cusafe built (the
    /// pass's launch-time marker).
    pub fn launch_out_of_resources(&self, kernel: Kernel, threads: u64) {
        let Some(f) = windows::function(kernel) else {
            return;
        };
        let Ok(name) = kernels::name_of(f) else {
            return;
        };
        if !matches!(kernels::layout_of(f, &name), Ok(Some(_))) {
            return;
        }
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if !said.get_or_insert_with(HashSet::new).insert(name.clone()) {
            return;
        }
        drop(said);
        let query = |attr| {
            let mut v = 0;
            // SAFETY: writes one int for a function the driver just named.
            let r = unsafe { cu::cuFuncGetAttribute(&mut v, attr, f) };
            (r == cu::CUresult::CUDA_SUCCESS).then_some(v.max(0) as u32)
        };
        use cu::CUfunction_attribute::*;
        let (Some(registers), Some(max_threads)) = (
            query(CU_FUNC_ATTRIBUTE_NUM_REGS),
            query(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        ) else {
            return;
        };
        let block_registers = self
            .heap_device()
            .and_then(|d| {
                attribute(
                    d,
                    cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
                )
                .ok()
            })
            .map_or(65536, |v| v.max(0) as u32);
        let shown = crate::report::demangle(&name);
        let r = Refusal {
            kernel: &shown,
            registers,
            max_threads,
            threads,
            block_registers,
        };
        self.sink.message(&r.message());
    }
}

#[cfg(test)]
mod tests {
    use super::Refusal;

    #[test]
    fn the_message_names_the_kernel_its_registers_and_the_fixes() {
        let m = Refusal {
            kernel: "_Z4stepPf",
            registers: 96,
            max_threads: 640,
            threads: 1024,
            block_registers: 65536,
        }
        .message();
        for part in [
            "kernel _Z4stepPf could not launch",
            "96 registers per thread",
            "at most 640 threads; this launch asks for 1024",
            "__launch_bounds__(1024)",
            "-maxrregcount=64",
        ] {
            assert!(m.contains(part), "{part}: {m}");
        }
        assert_eq!(m.matches('\n').count(), 1);
    }
}
