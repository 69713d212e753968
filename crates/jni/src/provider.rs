//! `JavaStorageOptionsProvider`: a Java `dev.vended.storage.StorageOptionsProvider` called over
//! JNI from a blocking runtime thread (attached as a daemon), plus the exact object identity
//! used in store keys.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use jni::objects::{JClassLoader, JMap, JObject, JString, JThread, JThrowable, JValue};
use jni::refs::{Global, Weak};
use jni::{jni_sig, jni_str, Env, JavaVM};

use vended_storage::error::{Error, Result};
use vended_storage::options::StorageOptions;
use vended_storage::provider::{ObjectIdentity, ProviderIdentity, StorageOptionsProvider};

/// A Java exception thrown by a provider: its class, message and the throwable itself (kept as
/// a global reference so the binding can pass it to Java as the cause).
pub struct JavaException {
    /// Fully qualified class name, e.g. `java.lang.RuntimeException`.
    pub class_name: String,
    /// `getMessage()`, if any.
    pub message: Option<String>,
    pub(crate) throwable: Global<JThrowable<'static>>,
}

impl fmt::Debug for JavaException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JavaException({self})")
    }
}

impl fmt::Display for JavaException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => write!(f, "{}: {m}", self.class_name),
            None => f.write_str(&self.class_name),
        }
    }
}

impl std::error::Error for JavaException {}

/// Exact identity of a Java object: `System.identityHashCode` as the hash, `IsSameObject` as
/// equality, so two providers with colliding hashes never share a store. It holds a *weak*
/// global reference: a cache key (which a cache may keep a while after removal) never keeps
/// the provider alive; a collected object equals nothing.
pub(crate) struct JavaObjectIdentity {
    hash: i32,
    object: Weak<JObject<'static>>,
}

impl fmt::Debug for JavaObjectIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JavaObject#{:08x}", self.hash)
    }
}

impl ObjectIdentity for JavaObjectIdentity {
    fn hash_code(&self) -> u64 {
        self.hash as u32 as u64
    }

    fn same_object(&self, other: &dyn ObjectIdentity) -> bool {
        let Some(other) = other.as_any().downcast_ref::<JavaObjectIdentity>() else {
            return false;
        };
        let Ok(vm) = JavaVM::singleton() else {
            return false;
        };
        // Scoped: a thread that is not attached already (none of the binding's threads) must not
        // stay attached as a non-daemon thread, which would keep the JVM from exiting.
        vm.attach_current_thread_for_scope(|env| -> jni::errors::Result<bool> {
            Ok(env.is_same_object(&self.object, &other.object)?
                && !env.is_same_object(&self.object, JObject::null())?)
        })
        .unwrap_or(false)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A Java `StorageOptionsProvider` seen from Rust.
pub struct JavaStorageOptionsProvider {
    provider: Arc<Global<JObject<'static>>>,
    loader: Arc<Global<JClassLoader<'static>>>,
    id: String,
    identity: ProviderIdentity,
}

impl fmt::Debug for JavaStorageOptionsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JavaStorageOptionsProvider")
            .field("id", &self.id)
            .finish()
    }
}

impl JavaStorageOptionsProvider {
    /// Wraps `provider` (called on a Java thread, from the entry point). With `provider_id`
    /// `None` the identity is the object itself; otherwise equal ids share stores.
    pub(crate) fn new(
        env: &mut Env<'_>,
        provider: &JObject<'_>,
        provider_id: Option<String>,
    ) -> jni::errors::Result<Self> {
        let global = env.new_global_ref(provider)?;
        let class = env.get_object_class(provider)?;
        let loader = class.get_class_loader(env)?;
        let loader = env.new_global_ref(&loader)?;
        let class_name = class.get_name(env)?.try_to_string(env)?;
        let (id, identity) = match provider_id {
            Some(id) => (id.clone(), ProviderIdentity::Named(id)),
            None => {
                // FindClass, not a lookup through the thread's context class loader.
                let system = env.find_class(jni_str!("java/lang/System"))?;
                let hash = env
                    .call_static_method(
                        &system,
                        jni_str!("identityHashCode"),
                        jni_sig!("(Ljava/lang/Object;)I"),
                        &[JValue::Object(provider)],
                    )?
                    .i()?;
                let object = env.new_weak_ref(provider)?;
                (
                    format!("{class_name}@{:x}", hash as u32),
                    ProviderIdentity::Object(Arc::new(JavaObjectIdentity { hash, object })),
                )
            }
        };
        Ok(Self {
            provider: Arc::new(global),
            loader: Arc::new(loader),
            id,
            identity,
        })
    }
}

#[async_trait]
impl StorageOptionsProvider for JavaStorageOptionsProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let provider = self.provider.clone();
        let loader = self.loader.clone();
        let id = self.id.clone();
        let call = move || fetch_on_this_thread(&provider, &loader, &id);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle.spawn_blocking(call).await.map_err(|e| {
                Error::provider(&self.id, format!("the provider call did not complete: {e}"))
            })?,
            Err(_) => call(),
        }
    }

    fn provider_id(&self) -> String {
        self.id.clone()
    }

    fn identity(&self) -> ProviderIdentity {
        self.identity.clone()
    }
}

/// What went wrong calling Java.
enum CallError {
    Thrown(JavaException),
    Bad(String),
    Jni(jni::errors::Error),
}

impl From<jni::errors::Error> for CallError {
    fn from(e: jni::errors::Error) -> Self {
        CallError::Jni(e)
    }
}

fn fetch_on_this_thread(
    provider: &Global<JObject<'static>>,
    loader: &Global<JClassLoader<'static>>,
    id: &str,
) -> Result<Option<StorageOptions>> {
    let vm =
        JavaVM::singleton().map_err(|e| Error::provider(id, format!("no JVM available: {e}")))?;
    // The binding's runtime threads are attached (as daemons) for their whole life, so this
    // reuses that attachment and only opens a local frame for the call. Scoped, so that a thread
    // that is not attached (none of ours) is detached again rather than left attached as a
    // non-daemon thread.
    let outcome = vm.attach_current_thread_for_scope(
        |env| -> std::result::Result<Option<StorageOptions>, CallError> {
            // Java code run from here (the provider, its HTTP client, ServiceLoader...) sees the
            // provider's own class loader, not the system one. The previous one is put back
            // afterwards: a long-lived runtime thread must not keep the provider's class loader
            // reachable (an undeployed application's loader could never be collected).
            let thread = JThread::current_thread(env)?;
            let previous = thread.get_context_class_loader(env)?;
            thread.set_context_class_loader(env, &**loader)?;
            let mut result = call_provider(env, provider);
            // Whatever threw (the provider, or its map while being read), the pending exception is
            // the error, with the throwable as its cause; it is cleared before any other JNI call.
            if env.exception_check() {
                result = Err(CallError::Thrown(take_exception(env)?));
            }
            let restored = thread.set_context_class_loader(env, &previous);
            let options = result?;
            restored?;
            Ok(options)
        },
    );
    outcome.map_err(|e| match e {
        CallError::Thrown(t) => Error::Provider {
            provider: id.to_string(),
            message: format!("fetchStorageOptions() threw {t}"),
            retryable: true,
            source: Some(Arc::new(t)),
        },
        CallError::Bad(m) => Error::provider(id, m),
        CallError::Jni(e) => {
            Error::provider(id, format!("JNI call to fetchStorageOptions() failed: {e}"))
        }
    })
}

/// Calls `fetchStorageOptions()` and converts its answer. May return with an exception pending
/// (the caller takes it).
fn call_provider(
    env: &mut Env<'_>,
    provider: &Global<JObject<'static>>,
) -> std::result::Result<Option<StorageOptions>, CallError> {
    let map = env
        .call_method(
            &**provider,
            jni_str!("fetchStorageOptions"),
            jni_sig!("()Ljava/util/Map;"),
            &[],
        )?
        .l()?;
    if map.is_null() {
        return Ok(None);
    }
    convert_map(env, map).map(Some)
}

/// Clears the pending exception and captures it.
pub(crate) fn take_exception(env: &mut Env<'_>) -> jni::errors::Result<JavaException> {
    let Some(throwable) = env.exception_occurred() else {
        return Err(jni::errors::Error::NullPtr("no pending exception"));
    };
    env.exception_clear();
    let class = env.get_object_class(&throwable)?;
    let class_name = class.get_name(env)?.try_to_string(env)?;
    let message = match env.call_method(
        &throwable,
        jni_str!("getMessage"),
        jni_sig!("()Ljava/lang/String;"),
        &[],
    ) {
        Ok(v) => {
            let s = v.l()?;
            if s.is_null() {
                None
            } else {
                Some(env.cast_local::<JString>(s)?.try_to_string(env)?)
            }
        }
        Err(_) => {
            env.exception_clear();
            None
        }
    };
    let throwable = env.new_global_ref(&throwable)?;
    Ok(JavaException {
        class_name,
        message,
        throwable,
    })
}

fn convert_map(
    env: &mut Env<'_>,
    map: JObject<'_>,
) -> std::result::Result<StorageOptions, CallError> {
    let map = env.cast_local::<JMap>(map).map_err(|_| {
        CallError::Bad("fetchStorageOptions() did not return a java.util.Map".into())
    })?;
    // jni-rs ends an iteration on *any* exception from `Iterator.next()`, taking it for
    // NoSuchElementException: reading exactly `size()` entries means an iterator that fails
    // midway is an error, never a silently partial map (and no exception ends each read).
    let size = env
        .call_method(&map, jni_str!("size"), jni_sig!("()I"), &[])?
        .i()?;
    let size = usize::try_from(size).unwrap_or(0);
    let mut out = HashMap::with_capacity(size);
    let mut iter = map.iter(env)?;
    for read in 0..size {
        // One local frame per entry keeps the local reference table small for large maps.
        let entry = env.with_local_frame(
            8,
            |env| -> std::result::Result<Option<(String, String)>, CallError> {
                let Some(entry) = iter.next(env)? else {
                    return Ok(None);
                };
                let key = entry.key(env)?;
                let value = entry.value(env)?;
                let key = java_string(env, key, "a key")
                    .map_err(|m| CallError::Bad(format!("fetchStorageOptions() returned {m}")))?;
                let value = java_string(env, value, "a value").map_err(|m| {
                    CallError::Bad(format!(
                        "fetchStorageOptions() returned {m} for key '{key}'"
                    ))
                })?;
                Ok(Some((key, value)))
            },
        )?;
        match entry {
            Some((k, v)) => {
                out.insert(k, v);
            }
            None => {
                return Err(CallError::Bad(format!(
                    "the map returned by fetchStorageOptions() ended after {read} of its {size} entries (modified while being read, or its iterator failed)"
                )))
            }
        }
    }
    Ok(out)
}

/// Reads a map key or value as a Java `String`; `what` names it in the error.
fn java_string(
    env: &mut Env<'_>,
    obj: JObject<'_>,
    what: &str,
) -> std::result::Result<String, String> {
    if obj.is_null() {
        return Err(format!("a null {}", what.trim_start_matches("a ")));
    }
    match env.cast_local::<JString>(obj) {
        Ok(s) => s
            .try_to_string(env)
            .map_err(|e| format!("{what} that could not be read: {e}")),
        Err(_) => Err(format!("{what} that is not a String")),
    }
}
