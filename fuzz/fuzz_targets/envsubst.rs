//! Any text through Flux's envsubst grammar, strict and not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::subst::envsubst::substitute;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lookup = |name: &str| match name {
        "a" => Some("alpha"),
        "n" => Some("12345"),
        "empty" => Some(""),
        _ => None,
    };
    // A budget per run: the default limits, as one render has.
    let budget = render_blueprint::limits::Budget::default();
    let _ = substitute(text, &lookup, false, &budget);
    let _ = substitute(text, &lookup, true, &budget);
});
