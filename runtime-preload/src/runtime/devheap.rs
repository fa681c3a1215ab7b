//! The device heap's arena (`cusafe_format::devheap`): one piece of device memory,
//! mapped at the top of the window of every class it serves, from which device-rt
//! serves `malloc` and `new` in kernels. Mapped at the first launch of a kernel whose
//! module allocates (the pass's marker), so that programs without a device heap pay
//! nothing; until then, and when mapping fails, device `malloc` goes to the real one.

use std::ops::RangeInclusive;

use cudarc::driver::sys as cu;
use cusafe_format::devheap::{arena_va, served_classes, state, FALLBACKS, MIN_CLASS, STATE_OFFSET};
use cusafe_format::pointer::MAX_TAG;
use cusafe_format::rtpage::RTPAGE_ADDR;

use super::Runtime;
use crate::alloc::{Access, Backend};
use crate::cuda::driver::{check, code};

impl Runtime {
    /// Maps the arena once (later calls do nothing); says so at `verbosity=1`, and
    /// why not when it cannot.
    pub(super) fn ensure_device_heap(&self) {
        self.device_heap.get_or_init(|| match self.install_device_heap() {
            Ok(classes) => {
                self.trace(1, || {
                    format!(
                        "device heap: {} MiB arena for in-kernel malloc/new, classes {}..={}",
                        self.options.device_heap_mb,
                        classes.start(),
                        classes.end()
                    )
                });
                Some(classes)
            }
            Err(why) => {
                self.warn(&format!(
                    "no device-heap arena ({why}): malloc/new in kernels use the real device heap, unchecked"
                ));
                None
            }
        });
    }

    /// Creates the arena's memory, maps it for every class it serves, zeroes it and
    /// turns it on in the runtime page.
    fn install_device_heap(&self) -> Result<RangeInclusive<u32>, String> {
        let bytes = self.options.device_heap_mb << 20;
        if bytes == 0 {
            return Err("CUSAFE_OPTIONS=device_heap_mb=0".into());
        }
        let h = self
            .heap()
            .ok_or("the runtime has no tagged heap on this device")?;
        let _ctx = h.ctx.enter();
        let mut a = h.lock();
        let missing = a.missing_windows();
        let first = (MIN_CLASS..=MAX_TAG)
            .find(|t| !missing.contains(t))
            .ok_or("no window for the arena")?;
        let classes = served_classes(bytes, first);
        let be = a.backend_mut();
        let step = |e: crate::alloc::BackendError| e.to_string();
        let handle = be.create(bytes).map_err(step)?;
        for t in classes.clone() {
            be.map(arena_va(t), bytes, handle, Access::ReadWrite)
                .map_err(step)?;
        }
        // SAFETY: the range was mapped just above; synchronous for the host.
        check("cuMemsetD8", unsafe {
            cu::cuMemsetD8_v2(arena_va(*classes.start()), 0, bytes as usize)
        })
        .and_then(|()| check("cuCtxSynchronize", unsafe { cu::cuCtxSynchronize() }))
        .map_err(step)?;
        be.copy_to_device(RTPAGE_ADDR + STATE_OFFSET, &state(bytes, &classes))
            .map_err(step)?;
        Ok(classes)
    }

    /// How many in-kernel allocations the arena could not serve (the real device heap
    /// took them, unchecked), read off the device; 0 without an arena or a live context.
    pub(super) fn device_heap_fallbacks(&self) -> u32 {
        if !matches!(self.device_heap.get(), Some(Some(_))) {
            return 0;
        }
        let Some(h) = self.heap() else {
            return 0;
        };
        let _ctx = h.ctx.enter();
        let mut n = 0u32;
        // SAFETY: reads 4 bytes of the mapped runtime page into `n`.
        let r = unsafe {
            cu::cuMemcpyDtoH_v2(
                (&mut n as *mut u32).cast(),
                RTPAGE_ADDR + STATE_OFFSET + FALLBACKS,
                4,
            )
        };
        if code(r) == 0 {
            n
        } else {
            0
        }
    }
}
