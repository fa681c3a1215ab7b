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
use crate::cuda::driver::check;
use crate::cuda::vmm::VmmBackend;

impl Arena {
    /// Gives back what of the arena may have outlived a reset (errors ignored: they mean
    /// it is gone already). The caller holds the allocator and the context.
    pub(super) fn give_back(self, backend: &mut VmmBackend) {
        for t in self.classes {
            let _ = backend.unmap(arena_va(t), self.bytes);
        }
        let _ = backend.release(self.handle);
    }
}

/// The arena as mapped.
pub(super) struct Arena {
    /// The classes it serves (one mapping at the top of each one's window).
    classes: RangeInclusive<u32>,
    /// Its memory.
    handle: cu::CUmemGenericAllocationHandle,
    /// Its size.
    bytes: u64,
}

impl Runtime {
    /// Maps the arena once (later calls do nothing until a reset; none while a stream
    /// capture is in progress); says so at `verbosity=1`, and why not when it cannot.
    pub(super) fn ensure_device_heap(&self) {
        let mut state = self.device_heap.lock().unwrap_or_else(|e| e.into_inner());
        if state.is_some() {
            return;
        }
        // Zeroing the arena waits for the device, which would invalidate a stream
        // capture in progress: the kernels launched meanwhile allocate from the real
        // device heap (the runtime page says no arena), and the first launch outside a
        // capture maps it.
        if super::capture::active() {
            return;
        }
        *state = Some(match self.install_device_heap() {
            Ok(arena) => {
                self.trace(1, || {
                    format!(
                        "device heap: {} MiB arena for in-kernel malloc/new, classes {}..={}",
                        self.options.device_heap_mb,
                        arena.classes.start(),
                        arena.classes.end()
                    )
                });
                Some(arena)
            }
            Err(why) => {
                self.warn(&format!(
                    "no device-heap arena ({why}): malloc/new in kernels use the real device heap, unchecked"
                ));
                None
            }
        });
    }

    /// After a reset: forgets the arena (the next launch of a kernel that allocates maps
    /// a new one) and returns it, if there was one, to be given back
    /// ([`Arena::give_back`]).
    pub(super) fn take_device_heap(&self) -> Option<Arena> {
        self.device_heap
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .flatten()
    }

    /// Creates the arena's memory, maps it for every class it serves, zeroes it and
    /// turns it on in the runtime page.
    fn install_device_heap(&self) -> Result<Arena, String> {
        let bytes = self.options.device_heap_mb << 20;
        if bytes == 0 {
            return Err("CUSAFE_OPTIONS=device_heap_mb=0".into());
        }
        let h = self
            .heap()
            .ok_or("the runtime has no tagged heap on this device")?;
        let _ctx = h.ctx().enter();
        let mut a = h.lock();
        let missing = a.missing_windows();
        let first = (MIN_CLASS..=MAX_TAG)
            .find(|t| !missing.contains(t))
            .ok_or("no window for the arena")?;
        let classes = served_classes(bytes, first);
        let be = a.backend_mut();
        let step = |e: crate::alloc::BackendError| e.to_string();
        let handle = be.create(bytes, h.device).map_err(step)?;
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
        Ok(Arena {
            classes,
            handle,
            bytes,
        })
    }

    /// How many in-kernel allocations the arena could not serve (the real device heap
    /// took them, unchecked), read off the device; 0 without an arena or a live context,
    /// or when the arena's state was busy by `wait`'s deadline (the exit check). The
    /// read waits for the runtime's own stream only, not for kernels still running.
    pub(super) fn device_heap_fallbacks(&self, wait: super::Wait) -> u32 {
        let installed = wait
            .lock(&self.device_heap)
            .is_some_and(|s| matches!(*s, Some(Some(_))));
        let Some(h) = self.heap().filter(|_| installed) else {
            return 0;
        };
        let _ctx = h.ctx().enter();
        let mut n = [0u8; 4];
        match h
            .writes
            .read_now(&mut n, RTPAGE_ADDR + STATE_OFFSET + FALLBACKS)
        {
            Ok(()) => u32::from_le_bytes(n),
            Err(_) => 0,
        }
    }
}
