//! libFuzzer's entry for `trawl_fuzz_checks::envelope`, which documents the input and what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| trawl_fuzz_checks::envelope(data));
