//! Fuzz target: see [`tether_fuzz::replay`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tether_fuzz::replay(data));
