//! Fuzz target: see [`tether_fuzz::claude_cli`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tether_fuzz::claude_cli(data));
