//! JNI bridge (work in progress).
