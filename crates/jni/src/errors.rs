//! Mapping Rust errors and panics to Java exceptions at every entry point.
//!
//! | Rust error | Java exception (package `dev.vended.storage`) |
//! |---|---|
//! | not found | `ObjectNotFoundException` |
//! | already exists | `ObjectAlreadyExistsException` |
//! | precondition / not modified | `PreconditionFailedException` |
//! | provider failure, expired credentials, permission, auth failure | `CredentialsException` (cause: the provider's throwable, or for a catalog spec's native provider a `catalog.CatalogException`) |
//! | invalid URI or option | `InvalidOptionsException` |
//! | provider timeout | `StorageTimeoutException` |
//! | closed store | `java.lang.IllegalStateException` |
//! | bad argument (null, negative range) | `java.lang.IllegalArgumentException` |
//! | anything else, or a panic | `StorageException` |
//!
//! Every `StorageException` is built through its package-private constructor `(String message,
//! Throwable cause, String kind, boolean retryable)`: `kind` is [`ErrorKind::as_str`] (the Java
//! enum `StorageException.Kind` has the same names) and `retryable` is [`Error::is_retryable`],
//! both decided by the core. A JNI failure or a panic is kind `IO`, not retryable.

use jni::errors::ErrorPolicy;
use jni::objects::{JClass, JObject, JValue};
use jni::strings::JNIStr;
use jni::{jni_sig, jni_str, Env};

use crate::provider::JavaException;
use vended_storage::error::{Error, ErrorKind};

/// An error at the JNI boundary.
pub(crate) enum BridgeError {
    /// A library error, mapped by kind.
    Storage(Error),
    /// The handle is closed or unknown; names what was closed ("object store", "session").
    Closed(&'static str),
    /// A bad argument from Java.
    Argument(String),
    /// A JNI failure (an exception may already be pending).
    Jni(jni::errors::Error),
    /// The Java thread was interrupted while it waited for a read.
    Interrupted,
}

impl From<jni::errors::Error> for BridgeError {
    fn from(e: jni::errors::Error) -> Self {
        BridgeError::Jni(e)
    }
}

impl From<Error> for BridgeError {
    fn from(e: Error) -> Self {
        BridgeError::Storage(e)
    }
}

const STORAGE: &JNIStr = jni_str!("dev/vended/storage/StorageException");

fn class_for(e: &Error) -> &'static JNIStr {
    match e.kind() {
        ErrorKind::NotFound => jni_str!("dev/vended/storage/ObjectNotFoundException"),
        ErrorKind::AlreadyExists => jni_str!("dev/vended/storage/ObjectAlreadyExistsException"),
        ErrorKind::Precondition => jni_str!("dev/vended/storage/PreconditionFailedException"),
        ErrorKind::Credentials => jni_str!("dev/vended/storage/CredentialsException"),
        ErrorKind::InvalidOptions => jni_str!("dev/vended/storage/InvalidOptionsException"),
        ErrorKind::Integrity => jni_str!("dev/vended/storage/ChecksumMismatchException"),
        ErrorKind::Timeout => jni_str!("dev/vended/storage/StorageTimeoutException"),
        ErrorKind::Closed => jni_str!("java/lang/IllegalStateException"),
        _ => STORAGE,
    }
}

/// Resolves an exception class with JNI `FindClass`, which (called from a native method) uses
/// the class loader of `NativeBridge`: the loader that loaded this library. A lookup by name
/// through jni-rs' `Desc<JClass>` would try the calling thread's context class loader first and,
/// when that loader has its own copy of the binding (an application server, Spark with an
/// isolated loader), throw an exception of the wrong class that the caller's `catch` misses.
/// Only called on Java threads, inside native methods of `NativeBridge`.
fn exception_class<'local>(
    env: &mut Env<'local>,
    class: &JNIStr,
) -> jni::errors::Result<JClass<'local>> {
    env.find_class(class)
}

/// What the Java exception says about the failure besides its message: the core's kind name
/// (`StorageException.Kind`) and whether it is retryable.
struct KindInfo {
    kind: &'static str,
    retryable: bool,
}

impl KindInfo {
    /// A JNI failure or a panic: an internal error, not retryable.
    const INTERNAL: KindInfo = KindInfo {
        kind: "IO",
        retryable: false,
    };

    fn of(e: &Error) -> Self {
        KindInfo {
            kind: e.kind().as_str(),
            retryable: e.is_retryable(),
        }
    }
}

/// Throws `class(message, cause, kind, retryable)`; `class` must be a `StorageException` (it has
/// that constructor, package-private).
fn throw_with_cause(
    env: &mut Env<'_>,
    class: &JNIStr,
    message: &str,
    cause: Option<&JObject<'_>>,
    info: KindInfo,
) -> jni::errors::Result<()> {
    let null = JObject::null();
    let cause = cause.unwrap_or(&null);
    let class = exception_class(env, class)?;
    let msg = env.new_string(message)?;
    let kind = env.new_string(info.kind)?;
    let obj = env.new_object(
        &class,
        jni_sig!("(Ljava/lang/String;Ljava/lang/Throwable;Ljava/lang/String;Z)V"),
        &[
            JValue::Object(&msg),
            JValue::Object(cause),
            JValue::Object(&kind),
            JValue::Bool(info.retryable),
        ],
    )?;
    let throwable = env.cast_local::<jni::objects::JThrowable>(obj)?;
    match env.throw(&throwable) {
        Ok(()) | Err(jni::errors::Error::JavaException) => Ok(()),
        Err(e) => Err(e),
    }
}

fn throw_plain(env: &mut Env<'_>, class: &JNIStr, message: &str) -> jni::errors::Result<()> {
    let class = exception_class(env, class)?;
    match env.throw_new(&class, jni::strings::JNIString::from(message)) {
        Ok(()) | Err(jni::errors::Error::JavaException) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Throws the Java exception for `e`. Does nothing when an exception is already pending.
pub(crate) fn throw(env: &mut Env<'_>, e: BridgeError) -> jni::errors::Result<()> {
    if env.exception_check() {
        return Ok(());
    }
    match e {
        BridgeError::Closed(what) => throw_plain(
            env,
            jni_str!("java/lang/IllegalStateException"),
            &format!("the {what} is closed (or the handle is unknown)"),
        ),
        BridgeError::Argument(m) => {
            throw_plain(env, jni_str!("java/lang/IllegalArgumentException"), &m)
        }
        BridgeError::Interrupted => throw_with_cause(
            env,
            jni_str!("dev/vended/storage/StorageInterruptedException"),
            "the thread was interrupted while it waited for a read; the request was dropped",
            None,
            KindInfo {
                kind: "INTERRUPTED",
                retryable: false,
            },
        ),
        BridgeError::Jni(e) => throw_with_cause(
            env,
            STORAGE,
            &format!("JNI failure in vended-storage: {e}"),
            None,
            KindInfo::INTERNAL,
        ),
        BridgeError::Storage(e) => {
            let class = class_for(&e);
            if class == jni_str!("java/lang/IllegalStateException") {
                return throw_plain(env, class, &e.to_string());
            }
            let cause = e
                .provider_source()
                .and_then(|s| s.downcast_ref::<JavaException>())
                .map(|j| &*j.throwable);
            if let Some(cause) = cause {
                return throw_with_cause(
                    env,
                    class,
                    &e.to_string(),
                    Some(cause.as_ref()),
                    KindInfo::of(&e),
                );
            }
            // A catalog provider built natively (a Java catalog spec): its failure as the cause.
            let catalog = crate::catalog::catalog_cause(env, &e);
            throw_with_cause(
                env,
                class,
                &e.to_string(),
                catalog.as_ref(),
                KindInfo::of(&e),
            )
        }
    }
}

/// The error policy of every entry point: errors become the mapped Java exception, panics a
/// `StorageException` carrying the panic message; the return value is then the default
/// (`0`, `null`).
pub(crate) struct ThrowJava;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowJava {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: BridgeError,
    ) -> jni::errors::Result<T> {
        throw(env, err)?;
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let msg = vended_storage::error::panic_message(payload.as_ref());
        log::error!("panic in vended-storage native code: {msg}");
        if !env.exception_check() {
            throw_with_cause(
                env,
                STORAGE,
                &format!("internal error in vended-storage native code (panic): {msg}"),
                None,
                KindInfo::INTERNAL,
            )?;
        }
        Ok(T::default())
    }
}
