//! The export of `dev.vended.storage.IcebergCredentials`: which storage-credential prefix covers
//! a location. Marshalling only: the rule is the core's
//! [`covering_prefix`](vended_storage::catalog::iceberg::covering_prefix), the one the Iceberg
//! REST provider itself follows. Java declaration:
//!
//! ```java
//! // The index in prefixes of the most specific one covering location, or -1.
//! private static native int nativeCoveringPrefix(String location, String[] prefixes);
//! ```

use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::jint;
use jni::EnvUnowned;

use vended_storage::catalog::iceberg::covering_prefix;

use crate::errors::{BridgeError, ThrowJava};
use crate::{string_arg, BridgeResult};

/// `private static native int nativeCoveringPrefix(String location, String[] prefixes)`: the
/// index of the most specific prefix covering `location`, or `-1`. A null location, array or
/// element is an `IllegalArgumentException` naming it.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_IcebergCredentials_nativeCoveringPrefix<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    location: JString<'l>,
    prefixes: JObjectArray<'l>,
) -> jint {
    env.with_env(|env| -> BridgeResult<jint> {
        let location = string_arg(env, &location, "location")?;
        if prefixes.is_null() {
            return Err(BridgeError::Argument("prefixes must not be null".into()));
        }
        let n = prefixes.len(env)?;
        let mut list = Vec::with_capacity(n);
        for i in 0..n {
            list.push(env.with_local_frame(2, |env| -> BridgeResult<String> {
                let p = prefixes.get_element(env, i)?;
                let p = env.cast_local::<JString>(p)?;
                string_arg(env, &p, "a prefix")
            })?);
        }
        Ok(covering_prefix(&list, &location)
            .and_then(|i| jint::try_from(i).ok())
            .unwrap_or(-1))
    })
    .resolve::<ThrowJava>()
}
