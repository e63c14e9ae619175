//! Fuzz target: see [`tether_fuzz::framing`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tether_fuzz::framing(data));
