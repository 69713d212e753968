//! The exports of sessions (`NativeBridge.sessionCreate`, `sessionInvalidate`, `sessionStats`,
//! `sessionClose`): shared metadata and range caches that stores opened with the session use.

use std::sync::Arc;
use std::time::Duration;

use jni::objects::{JClass, JLongArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use crate::errors::{BridgeError, ThrowJava};
use crate::{handles, long_array, session, string_arg, BridgeResult};
use vended_storage::session::{Session, SessionConfig};

/// Longest session time to live accepted (the caches support up to 1000 years).
const MAX_SESSION_TTL: Duration = Duration::from_secs(999 * 365 * 24 * 3600);
fn positive_or<T: TryFrom<jlong>>(v: jlong, default: T) -> T {
    if v > 0 {
        T::try_from(v).unwrap_or(default)
    } else {
        default
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionCreate<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    metadata_capacity: jlong,
    range_capacity_bytes: jlong,
    max_range_bytes: jlong,
    ttl_millis: jlong,
) -> jlong {
    env.with_env(|_env| -> BridgeResult<jlong> {
        let d = SessionConfig::default();
        let ttl = Duration::from_millis(positive_or(ttl_millis, d.ttl.as_millis() as u64));
        // The caches (moka) panic on a time to live above 1000 years: refuse it as an argument.
        if ttl > MAX_SESSION_TTL {
            return Err(BridgeError::Argument(format!(
                "session ttl must be at most {} ms, got {ttl_millis} ms",
                MAX_SESSION_TTL.as_millis()
            )));
        }
        let config = SessionConfig {
            metadata_capacity: positive_or(metadata_capacity, d.metadata_capacity),
            range_capacity_bytes: positive_or(range_capacity_bytes, d.range_capacity_bytes),
            max_range_bytes: positive_or(max_range_bytes, d.max_range_bytes),
            ttl,
        };
        Ok(handles::SESSIONS.insert(Arc::new(Session::new(config)?)))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionInvalidate<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    uri_prefix: JString<'l>,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let s = session(handle)?;
        let prefix = string_arg(env, &uri_prefix, "uriPrefix")?;
        s.invalidate(&prefix)?;
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionStats<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JLongArray<'l> {
    env.with_env(|env| -> BridgeResult<JLongArray<'l>> {
        let st = session(handle)?.stats();
        let values = [
            st.hits as jlong,
            st.misses as jlong,
            st.evictions as jlong,
            st.entries as jlong,
        ];
        long_array(env, &values)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionClose<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> BridgeResult<()> {
        handles::SESSIONS.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJava>()
}
