//! Native `log` records delivered to the JVM: `dev.vended.storage.NativeLog` passes them to the
//! JVM's `System.Logger` (which SLF4J, Log4j and java.util.logging users already bridge).
//!
//! - The level is decided on the native side: `NativeLog.init(maxLevel)` sets `log`'s max level
//!   from the Java logger's (or from `RUST_LOG`, when set), so a disabled level costs one
//!   comparison and nothing else.
//! - No upcall happens on the caller's thread: records go through a bounded queue to one
//!   daemon-attached delivery thread, which calls `NativeLog.log(int, String, String)` through
//!   the class object captured at `init` as a weak global reference (never a lookup by name from
//!   a native thread; never keeping the application's class loader alive). A full
//!   queue drops records and counts them; the count is reported with the next delivered record.
//! - Messages are the library's own; they never carry secrets (see the core's redaction rules).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};

use jni::objects::{JClass, JValue};
use jni::refs::Weak;
use jni::sys::jint;
use jni::{jni_sig, jni_str, Env, JavaVM};
use once_cell::sync::OnceCell;

/// Records waiting for delivery at most.
const QUEUE: usize = 4096;

struct Line {
    level: log::Level,
    target: String,
    message: String,
}

static SENDER: OnceCell<SyncSender<Line>> = OnceCell::new();
static DROPPED: AtomicU64 = AtomicU64::new(0);

struct JvmLogger;

impl log::Log for JvmLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        // The `jni` crate's own records are never delivered: delivering one makes JNI calls,
        // which (at trace level) log again, an endless feedback loop that fills the queue.
        metadata.level() <= log::max_level() && !is_jni_crate(metadata.target())
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let Some(sender) = SENDER.get() else { return };
        let line = Line {
            level: record.level(),
            target: record.target().to_string(),
            message: record.args().to_string(),
        };
        if let Err(TrySendError::Full(_)) = sender.try_send(line) {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn flush(&self) {}
}

static LOGGER: JvmLogger = JvmLogger;

/// Whether `target` is the `jni` crate's (`jni` or `jni::...`).
fn is_jni_crate(target: &str) -> bool {
    target == "jni" || target.starts_with("jni::")
}

/// The `log` level for the Java side's number: 0 off, 1 error, 2 warn, 3 info, 4 debug,
/// 5 trace (what `NativeLog` passes). `RUST_LOG` (a level name), when set and valid, wins.
pub(crate) fn level_filter(java_level: jint, rust_log: Option<&str>) -> log::LevelFilter {
    if let Some(level) = rust_log.and_then(|v| v.trim().parse::<log::LevelFilter>().ok()) {
        return level;
    }
    match java_level {
        i32::MIN..=0 => log::LevelFilter::Off,
        1 => log::LevelFilter::Error,
        2 => log::LevelFilter::Warn,
        3 => log::LevelFilter::Info,
        4 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    }
}

fn java_level(level: log::Level) -> jint {
    match level {
        log::Level::Error => 1,
        log::Level::Warn => 2,
        log::Level::Info => 3,
        log::Level::Debug => 4,
        log::Level::Trace => 5,
    }
}

/// Installs the logger (once per library copy) and sets the level; later calls only change the
/// level. `sink` is the `NativeLog` class.
pub(crate) fn init(
    env: &mut Env<'_>,
    sink: &JClass<'_>,
    max_level: jint,
) -> jni::errors::Result<()> {
    let rust_log = std::env::var("RUST_LOG").ok();
    log::set_max_level(level_filter(max_level, rust_log.as_deref()));
    if SENDER.get().is_some() {
        return Ok(());
    }
    // Weak: a strong global reference to NativeLog would keep its class loader, and so an
    // undeployed application's classes, reachable for ever (C15).
    let class: Weak<JClass<'static>> = env.new_weak_ref(sink)?;
    let (sender, receiver) = sync_channel(QUEUE);
    if SENDER.set(sender).is_err() {
        return Ok(());
    }
    let spawned = std::thread::Builder::new()
        .name("vended-storage-log".into())
        .spawn(move || deliver(class, receiver));
    if spawned.is_ok() {
        // Ignored when the process already has a logger (only possible when the core is also
        // used from Rust in the same process): that logger keeps the records.
        let _ = log::set_logger(&LOGGER);
    }
    Ok(())
}

fn deliver(class: Weak<JClass<'static>>, receiver: Receiver<Line>) {
    crate::runtime::attach_as_daemon();
    let Ok(vm) = JavaVM::singleton() else { return };
    while let Ok(line) = receiver.recv() {
        let dropped = DROPPED.swap(0, Ordering::Relaxed);
        let message = if dropped > 0 {
            format!(
                "{} ({dropped} earlier native log records were dropped: queue full)",
                line.message
            )
        } else {
            line.message
        };
        let _ = vm.attach_current_thread(|env| -> jni::errors::Result<()> {
            // The class loader that loaded NativeLog was collected: nobody is listening.
            let Some(class) = class.upgrade_local(env)? else {
                return Ok(());
            };
            let target = env.new_string(&line.target)?;
            let message = env.new_string(&message)?;
            let called = env.call_static_method(
                &class,
                jni_str!("log"),
                jni_sig!("(ILjava/lang/String;Ljava/lang/String;)V"),
                &[
                    JValue::Int(java_level(line.level)),
                    JValue::Object(&target),
                    JValue::Object(&message),
                ],
            );
            if env.exception_check() {
                // A failing logging backend must not kill the delivery thread.
                env.exception_clear();
            }
            called.map(|_| ())
        });
    }
}

/// `static native void init(int maxLevel)` of `dev.vended.storage.NativeLog`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeLog_init<'l>(
    mut env: jni::EnvUnowned<'l>,
    class: JClass<'l>,
    max_level: jint,
) {
    env.with_env(|env| -> Result<(), crate::errors::BridgeError> {
        init(env, &class, max_level)?;
        Ok(())
    })
    .resolve::<crate::errors::ThrowJava>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_from_java_and_rust_log_wins() {
        assert_eq!(level_filter(0, None), log::LevelFilter::Off);
        assert_eq!(level_filter(2, None), log::LevelFilter::Warn);
        assert_eq!(level_filter(9, None), log::LevelFilter::Trace);
        assert_eq!(level_filter(2, Some("debug")), log::LevelFilter::Debug);
        assert_eq!(level_filter(2, Some("nonsense")), log::LevelFilter::Warn);
    }
}
