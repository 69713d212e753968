//! The test build of the native library (`libvended_storage_jni_test_hooks.so`), loaded by the
//! JUnit suite (`java/tests`) through `-Dvended.storage.native.library`: every JNI export of
//! `vended-storage-jni` (linked in from its rlib), plus the test-only natives below, which make
//! the library panic on demand so the tests can show that no panic crosses into the JVM, and
//! count the stream blocks still lent (leak checks). The shipped library has none of these
//! exports (`bin/build-natives` refuses a library that has).

use jni::objects::{JClass, JObject, JString};
use jni::sys::{jboolean, jlong};
use jni::EnvUnowned;
use vended_storage_jni::test_support;

/// `dev.vended.storage.NativeTestHooks.panic(String message, boolean inRuntime)`: panics with
/// `message` in the calling thread, or inside a runtime task when `in_runtime`; the caller sees a
/// Java exception carrying the message.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeTestHooks_panic<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    message: JString<'l>,
    in_runtime: jboolean,
) {
    test_support::panic(env, message, in_runtime)
}

/// `dev.vended.storage.AsyncTestHooks.startPanic(String message, sink)`: starts an async task
/// whose operation panics with `message`; returns the task handle, whose `take` throws a
/// `StorageException` carrying the message.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncTestHooks_startPanic<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    message: JString<'l>,
    sink: JObject<'l>,
) -> jlong {
    test_support::start_panic(env, message, sink)
}

/// `dev.vended.storage.NativeTestHooks.liveBlocks()`: stream blocks lent to Java and not yet
/// released (leak checks).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeTestHooks_liveBlocks<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> jlong {
    test_support::live_blocks()
}
