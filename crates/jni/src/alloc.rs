//! The binding's Rust allocations go to mimalloc, not the process's glibc malloc. Streaming
//! reads allocate and free a socket buffer of up to a few hundred KiB per network read; glibc
//! trims each freed buffer at the top of a thread's arena back to the kernel, so every read
//! faulted its pages in again (page faults and TLB shoot-downs across the JVM's threads): with
//! four streams the reads ran at about half the rate measured with glibc's trimming raised
//! (BENCHMARKS.md, Streams). mimalloc keeps such memory in its per-thread pages. The JVM's
//! own allocations are unaffected. Built with `local_dynamic_tls`: with the default
//! initial-exec TLS a second copy of the library (another class loader, C15) fails to load
//! with "cannot allocate memory in static TLS block".

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
