//! Fuzz target: see [`tether_fuzz::acp_engine`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tether_fuzz::acp_engine(data));
