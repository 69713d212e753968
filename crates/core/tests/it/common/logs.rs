//! One capturing `log` logger for the whole test binary: a process has one logger, and every
//! module that reads log records (C19, the no-secrets suite) shares it.

use std::sync::{Mutex, Once};

use once_cell::sync::Lazy;

static RECORDS: Lazy<Mutex<Vec<String>>> = Lazy::new(|| Mutex::new(Vec::new()));

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        RECORDS
            .lock()
            .unwrap()
            .push(format!("{} {}", record.level(), record.args()));
    }
    fn flush(&self) {}
}

/// Installs the capturing logger at trace level (once per process; later calls do nothing).
pub fn capture() {
    static LOGGER: Capture = Capture;
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        log::set_logger(&LOGGER).expect("no other logger in the test binary");
        log::set_max_level(log::LevelFilter::Trace);
    });
}

/// Every record logged since [`capture`] was first called, as `"<LEVEL> <message>"`.
pub fn records() -> Vec<String> {
    RECORDS.lock().unwrap().clone()
}
