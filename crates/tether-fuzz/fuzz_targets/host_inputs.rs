//! Fuzz target: see [`tether_fuzz::host_inputs`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tether_fuzz::host_inputs(data));
