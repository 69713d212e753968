//! Cloud adapters: turn storage options and a refresher into an `object_store` store.

pub mod aws;
