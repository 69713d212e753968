//! The local endpoint's integration tests, gathered in ONE test binary (`cargo test -p
//! vended-storage-local-s3 --test it`): each file of this folder is a module, so the dependency
//! tree is linked once (see docs/development.md, "Build each thing once").

mod common;

mod access;
mod binary;
mod checksums;
mod conditional;
mod flips;
mod keys;
mod multipart;
mod multipart_checksums;
mod permissions;
mod sts_admin;
mod uploads;
