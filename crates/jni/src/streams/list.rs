//! Listing handles of `dev.vended.storage.NativeBridge` (`listOpen`, `listNext`, `listClose`)
//! and one level of a listing under a delimiter (`listWithDelimiter`); the declarations are in
//! the parent module's documentation. Marshalling only: the core's `ObjectLister` pages.

use std::sync::Arc;

use jni::objects::{JClass, JObject, JObjectArray, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use once_cell::sync::Lazy;
use tokio::sync::Mutex;

use vended_storage::io::ObjectLister;

use crate::errors::{BridgeError, ThrowJava};
use crate::handles::HandleTable;
use crate::{block_on, info_strings, optional_string, store, string_array, BridgeResult};

/// Open listings.
static LISTERS: Lazy<HandleTable<Mutex<ObjectLister>>> = Lazy::new(HandleTable::default);

/// Entries per `listNext` when the caller gives none.
const DEFAULT_PAGE: usize = 1000;

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_listOpen<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    prefix: JString<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let prefix = optional_string(env, &prefix)?;
        let lister = store.lister(prefix.as_deref())?;
        Ok(LISTERS.insert(Arc::new(Mutex::new(lister))))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_listNext<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    max_entries: jint,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let lister = LISTERS.get(handle).ok_or(BridgeError::Closed("listing"))?;
        let max = if max_entries > 0 {
            max_entries as usize
        } else {
            DEFAULT_PAGE
        };
        let infos = block_on(async { lister.lock().await.next_page(max).await })??;
        let flat: Vec<Option<String>> = infos.iter().flat_map(info_strings).collect();
        string_array(env, flat.into_iter())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_listClose<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> BridgeResult<()> {
        LISTERS.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_listWithDelimiter<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    prefix: JString<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let prefix = optional_string(env, &prefix)?;
        let level = block_on(store.list_with_delimiter(prefix.as_deref()))??;
        let flat: Vec<Option<String>> = level.objects.iter().flat_map(info_strings).collect();
        let result =
            JObjectArray::<JObjectArray<JString>>::new(env, 2, JObjectArray::<JString>::null())?;
        let parts = [flat, level.common_prefixes.into_iter().map(Some).collect()];
        for (i, part) in parts.into_iter().enumerate() {
            env.with_local_frame(2, |env| -> BridgeResult<()> {
                let array = string_array(env, part.into_iter())?;
                let array = env.cast_local::<JObjectArray<JString>>(array)?;
                result.set_element(env, i, &array)?;
                Ok(())
            })?;
        }
        Ok(result.into())
    })
    .resolve::<ThrowJava>()
}
