//! Any text through Flux's envsubst grammar, strict and not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::subst::envsubst::substitute;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lookup = |name: &str| match name {
        "a" => Some("alpha".to_string()),
        "n" => Some("12345".to_string()),
        "empty" => Some(String::new()),
        _ => None,
    };
    let _ = substitute(text, &lookup, false);
    let _ = substitute(text, &lookup, true);
});
