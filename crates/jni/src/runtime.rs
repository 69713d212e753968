//! The async runtime of the JNI binding. Every runtime thread (workers and blocking threads)
//! is attached to the JVM as a **daemon** when it starts and detached when it stops, so a JVM
//! whose `main` returns with stores still open exits normally (`DestroyJavaVM` waits only for
//! non-daemon threads). jni 0.22 has no daemon attach, so the raw invocation interface is used;
//! later `attach_current_thread` calls on these threads reuse the attachment.

use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};

use jni::sys;
use jni::JavaVM;
use once_cell::sync::OnceCell;
use tokio::runtime::Runtime;

use vended_storage::error::Error;

static RUNTIME: OnceCell<Runtime> = OnceCell::new();
static THREAD_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// The binding's runtime, created on first use.
pub(crate) fn runtime() -> Result<&'static Runtime, Error> {
    RUNTIME.get_or_try_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("vended-storage")
            .enable_all()
            .on_thread_start(attach_as_daemon)
            .on_thread_stop(detach)
            .build()
            .map_err(|e| Error::Closed(leak_reason(e)))
    })
}

fn leak_reason(e: std::io::Error) -> &'static str {
    log::error!("cannot start the vended-storage runtime: {e}");
    "runtime (it could not be started)"
}

fn raw_vm() -> Option<*mut sys::JavaVM> {
    JavaVM::singleton().ok().map(|vm| vm.get_raw())
}

pub(crate) fn attach_as_daemon() {
    let Some(vm) = raw_vm() else { return };
    let n = THREAD_COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = CString::new(format!("vended-storage-{n}")).unwrap_or_default();
    let mut args = sys::JavaVMAttachArgs {
        version: sys::JNI_VERSION_1_8,
        name: name.as_ptr() as *mut _,
        group: std::ptr::null_mut(),
    };
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: `vm` is the live JavaVM pointer stored by JNI_OnLoad; the invocation interface
    // outlives the VM; `args` and `name` live across the call.
    let rc = unsafe {
        ((**vm).v1_4.AttachCurrentThreadAsDaemon)(vm, &mut env, &mut args as *mut _ as *mut c_void)
    };
    if rc != sys::JNI_OK {
        log::warn!("AttachCurrentThreadAsDaemon failed with {rc}");
    }
}

fn detach() {
    let Some(vm) = raw_vm() else { return };
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: as above; GetEnv tells whether this thread is attached before detaching it.
    unsafe {
        if ((**vm).v1_2.GetEnv)(vm, &mut env, sys::JNI_VERSION_1_8) == sys::JNI_OK {
            ((**vm).v1_1.DetachCurrentThread)(vm);
        }
    }
}
