//! The binding's Rust allocations go to mimalloc, not the process's glibc malloc. Streaming
//! reads allocate and free a socket buffer of up to a few hundred KiB per network read; glibc
//! trims each freed buffer at the top of a thread's arena back to the kernel, so every read
//! faulted its pages in again (page faults and TLB shoot-downs across the JVM's threads): with
//! four streams the reads ran at about half the rate measured with glibc's trimming raised
//! (BENCHMARKS.md, Streams). mimalloc keeps such memory in its per-thread pages. The JVM's
//! own allocations are unaffected. Built with `local_dynamic_tls`: with the default
//! initial-exec TLS a second copy of the library (another class loader, C15) fails to load
//! with "cannot allocate memory in static TLS block".
//!
//! mimalloc v3 gives memory that stayed free for its purge delay (1 s by default) back to the
//! kernel, and the kernel zeroes it again when it is next touched, a transparent huge page (2 MiB)
//! at a time. In a Spark scan the gaps between a task's reads are longer than that, so the
//! network buffers came back as fresh pages: zeroing was about three quarters of the runtime
//! threads' CPU (docs/spark-client-cpu.md). [`configure`] raises the delay to
//! [`PURGE_DELAY_MS`] when the load does not choose one.

use std::os::raw::c_long;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's index of its `purge_delay` option (`mi_option_purge_delay` in mimalloc v3's
/// `mimalloc.h`, the 16th entry of `mi_option_e`); the bindings name no constant for it. A test
/// reads the option's documented default through this index, so a mimalloc that moves it fails.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The environment variable mimalloc reads its purge delay from; when set, it wins.
const PURGE_DELAY_ENV: &str = "MIMALLOC_PURGE_DELAY";

/// How long, in milliseconds, memory the library freed stays with mimalloc before it is given
/// back to the kernel: 10 s, against mimalloc's 1 s. What it costs: the peak of the network
/// buffers stays resident for up to 10 s after the reads end.
pub(crate) const PURGE_DELAY_MS: c_long = 10_000;

/// Sets mimalloc's purge delay to [`PURGE_DELAY_MS`] unless `MIMALLOC_PURGE_DELAY` is set in
/// the process's environment (then mimalloc's own reading of it stands). Called once, from
/// `JNI_OnLoad`, before the library starts a thread.
pub(crate) fn configure() {
    if std::env::var_os(PURGE_DELAY_ENV).is_none() {
        // SAFETY: a plain store into mimalloc's option table, for an index below its last
        // option; `JNI_OnLoad` runs before this copy of the library has started any thread.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_index_is_mimallocs_and_configure_raises_it() {
        if std::env::var_os(PURGE_DELAY_ENV).is_some() {
            return; // the environment chose the delay; nothing of ours to check
        }
        // SAFETY: reads of mimalloc's option table; only this test touches the option.
        let before = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert!(
            before == 1_000 || before == PURGE_DELAY_MS,
            "option {MI_OPTION_PURGE_DELAY} read {before}, not mimalloc v3's purge delay default (1000 ms)"
        );
        configure();
        let after = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(after, PURGE_DELAY_MS);
    }
}
