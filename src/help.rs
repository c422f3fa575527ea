//! `--help` text, taken from README.md as the kpt function catalog does it: the regions between
//! `<!--mdtogo:Short-->`, `<!--mdtogo:Long-->` or `<!--mdtogo:Examples-->` and the next
//! `<!--mdtogo-->` are the one-line description, the long description and the examples (kpt's
//! `mdtogo` turns the same regions into a function's help). README.md is the only copy of this
//! text; tests/readme.rs checks that `--help` prints it.
//!
//! The README is compiled in; the regions are cut out when clap builds the command. A missing or
//! empty region falls back to the package description (Short) or to nothing, never to a panic.

const README: &str = include_str!("../README.md");

/// The text of the `<!--mdtogo:NAME-->` region of `markdown`, without its leading and trailing
/// blank lines (indentation kept: indented code blocks stay code). `None` when the region is
/// missing, unclosed or empty.
pub fn region(markdown: &str, name: &str) -> Option<String> {
    let open = format!("<!--mdtogo:{name}-->");
    let start = markdown.find(&open)? + open.len();
    let body = &markdown[start..];
    let body = &body[..body.find("<!--mdtogo-->")?];
    let lines: Vec<&str> = body.lines().map(str::trim_end).collect();
    let first = lines.iter().position(|line| !line.is_empty())?;
    let last = lines.iter().rposition(|line| !line.is_empty())?;
    Some(lines[first..=last].join("\n"))
}

/// One line: what the function does (`-h`, and the first paragraph of `--help`).
pub fn short() -> String {
    match region(README, "Short") {
        Some(text) => text.split_whitespace().collect::<Vec<_>>().join(" "),
        None => env!("CARGO_PKG_DESCRIPTION").to_string(),
    }
}

/// `--help`'s description: the short line, then the long text.
pub fn long() -> String {
    match region(README, "Long") {
        Some(text) => format!("{}\n\n{text}", short()),
        None => short(),
    }
}

/// Printed after the options: the examples.
pub fn examples() -> String {
    region(README, "Examples").map(|text| format!("Examples:\n{text}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_cut_at_their_markers() {
        let markdown = "# x\n<!--mdtogo:Short-->\n\nOne line.\n\n<!--mdtogo-->\n<!--mdtogo:Long-->\nA\n\n    code\n<!--mdtogo-->\n";
        assert_eq!(region(markdown, "Short").as_deref(), Some("One line."));
        assert_eq!(region(markdown, "Long").as_deref(), Some("A\n\n    code"));
        assert_eq!(region(markdown, "Examples"), None);
        assert_eq!(region("<!--mdtogo:Short-->\n\n<!--mdtogo-->", "Short"), None);
        assert_eq!(region("<!--mdtogo:Short-->unclosed", "Short"), None);
    }

    #[test]
    fn readme_has_every_region() {
        for name in ["Short", "Long", "Examples"] {
            assert!(region(README, name).is_some(), "README.md lacks the <!--mdtogo:{name}--> region");
        }
        assert!(!short().contains('\n'));
        assert!(long().starts_with(&short()));
        assert!(examples().starts_with("Examples:\n"));
    }
}
