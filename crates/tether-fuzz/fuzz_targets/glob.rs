//! Fuzz target: see [`tether_fuzz::glob`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tether_fuzz::glob(data));
