//! What `std` would supply on wasm, without the WASI imports it would bring: Rust's
//! `std` pulls in a dozen WASI interfaces for its panic path alone, and a component of
//! the `agent:tools` worlds is to import nothing but its provider. The reasons component
//! and the test fixtures link it with `extern crate reasons_guest_runtime;`.
#![cfg(target_arch = "wasm32")]
#![no_std]

extern crate alloc;

use core::alloc::Layout;

/// dlmalloc, the allocator `std` itself uses on wasm.
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// A panic (only a broken invariant or an exhausted memory limit gets here) traps; the
/// host drops the instance and answers the batch with errors (R15).
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

// `memcmp`, which `core` calls for slice comparisons, from wasi-libc: the C library `std`
// links on this target. Its string functions are pure code and import nothing.
#[link(name = "c")]
unsafe extern "C" {}

/// The canonical ABI's allocator, through which the host hands the component its
/// arguments. wit-bindgen leaves it to `std` on `wasm32-wasip2`; this is its own
/// definition for other targets (`wit_bindgen::rt::cabi_realloc`), on the global allocator.
///
/// # Safety
/// Called by the host with a pointer this function returned (or null and 0), the
/// alignment it was allocated with, and a power-of-two `align`.
#[unsafe(no_mangle)]
unsafe extern "C" fn cabi_realloc(
    old_ptr: *mut u8,
    old_len: usize,
    align: usize,
    new_len: usize,
) -> *mut u8 {
    if new_len == 0 {
        // A dangling, aligned pointer: nothing is to be written through it.
        return align as *mut u8;
    }
    // SAFETY: the canonical ABI passes a power-of-two `align` and the sizes it asked for.
    let ptr = unsafe {
        if old_len == 0 {
            alloc::alloc::alloc(Layout::from_size_align_unchecked(new_len, align))
        } else {
            let old = Layout::from_size_align_unchecked(old_len, align);
            alloc::alloc::realloc(old_ptr, old, new_len)
        }
    };
    if ptr.is_null() {
        // Out of memory (the host's limit): trap rather than hand back null.
        core::arch::wasm32::unreachable()
    }
    ptr
}
