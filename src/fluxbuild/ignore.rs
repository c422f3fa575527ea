//! Which files of a source directory are in the artifact source-controller makes of it
//! (fluxcd/source-controller `gitrepository_controller.go` and fluxcd/pkg `artifact/storage`
//! `Archive`, `SourceIgnoreFilter`, and `sourceignore`): the `.sourceignore` files of the
//! directory and its sub-directories and the GitRepository's `spec.ignore`, in gitignore syntax,
//! over the version-control excludes (`.git/`, `.gitignore`, …) and, when neither gives a pattern,
//! the default excludes (images and archives, CI files, `.sops.yaml`, …). The same syntax reads
//! `.gitignore` files, whose files a clone does not hold.
//!
//! Matching follows fluxcd/pkg `sourceignore/gitignore`: every pattern is tried on the path from
//! the source's root, the last that matches decides (`!` includes again), a pattern is scoped to
//! the directory of the file it is read from, a pattern without `/` matches any component of the
//! path (so everything below a matching directory), one with `/` matches from its directory
//! component by component, with `**` for any number of directories, and a trailing `/` matches
//! directories only. Nothing here reads the disk.

/// The version-control files no artifact holds, whatever the patterns.
const VCS: [&str; 4] = [".git/", ".gitignore", ".gitmodules", ".gitattributes"];

/// What source-controller leaves out when the source gives no pattern of its own.
const DEFAULTS: [&str; 20] = [
    "*.jpg",
    "*.jpeg",
    "*.gif",
    "*.png",
    "*.wmv",
    "*.flv",
    "*.tar.gz",
    "*.zip",
    ".github/",
    ".circleci/",
    ".travis.yml",
    ".gitlab-ci.yml",
    "appveyor.yml",
    ".drone.yml",
    "cloudbuild.yaml",
    "codeship-services.yml",
    "codeship-steps.yml",
    "**/.goreleaser.yml",
    "**/.sops.yaml",
    "**/.flux.yaml",
];

/// The file source-controller reads patterns from, in every directory of the source.
pub const IGNORE_FILE: &str = ".sourceignore";

/// One gitignore pattern, scoped to the directory (`domain`, components from the root) of the
/// file it was read from.
#[derive(Clone, Debug)]
pub struct Pattern {
    domain: Vec<String>,
    parts: Vec<String>,
    include: bool,
    dir_only: bool,
    /// Holds a `/` (other than a trailing one): matched from the domain, component by component.
    anchored: bool,
}

impl Pattern {
    pub fn parse(text: &str, domain: &[String]) -> Pattern {
        let (include, text) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        // Trailing spaces go, unless the last is escaped.
        let text = if text.ends_with("\\ ") { text } else { text.trim_end_matches(' ') };
        let (dir_only, text) = match text.strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        Pattern {
            domain: domain.to_vec(),
            parts: text.split('/').map(str::to_string).collect(),
            include,
            dir_only,
            anchored: text.contains('/'),
        }
    }

    /// `Some(true)`: the path is excluded by this pattern, `Some(false)`: included again, `None`:
    /// the pattern does not speak about it.
    fn decides(&self, path: &[&str], is_dir: bool) -> Option<bool> {
        if path.len() <= self.domain.len() || self.domain.iter().zip(path).any(|(d, p)| d != p) {
            return None;
        }
        let below = &path[self.domain.len()..];
        let matched =
            if self.anchored { self.matches_from_start(below, is_dir) } else { self.matches_a_name(below, is_dir) };
        matched.then_some(!self.include)
    }

    /// A pattern without `/`: the first component it matches decides; the last component (the
    /// file itself) only when it is a directory or the pattern is not for directories only.
    fn matches_a_name(&self, path: &[&str], is_dir: bool) -> bool {
        let pattern = self.parts.first().map(String::as_str).unwrap_or_default();
        match path.iter().position(|name| name_matches(pattern, name) == Some(true)) {
            Some(i) => !(self.dir_only && !is_dir && i == path.len() - 1),
            None => false,
        }
    }

    /// A pattern with `/`: its components against the path's, `**` skipping any number of
    /// them; a path longer than the pattern is below what it matched.
    fn matches_from_start(&self, path: &[&str], is_dir: bool) -> bool {
        let mut rest = path;
        let mut matched = false;
        let mut skipping = false;
        for (i, part) in self.parts.iter().enumerate() {
            if part.is_empty() {
                skipping = false;
                continue;
            }
            if part == "**" {
                if i == self.parts.len() - 1 {
                    break;
                }
                skipping = true;
                continue;
            }
            if part.contains("**") || rest.is_empty() {
                return false;
            }
            if skipping {
                skipping = false;
                // The next component that matches ends the skip; none, and the path ran out.
                match rest.iter().position(|name| name_matches(part, name) == Some(true)) {
                    Some(at) => {
                        rest = &rest[at + 1..];
                        matched = true;
                    }
                    None => {
                        rest = &[];
                        matched = false;
                    }
                }
            } else {
                if name_matches(part, rest[0]) != Some(true) {
                    return false;
                }
                rest = &rest[1..];
                matched = true;
            }
        }
        matched && !(self.dir_only && !is_dir && rest.is_empty())
    }
}

/// The patterns of an ignore file's text: one a line, `#` comments and blank lines left out.
pub fn read_patterns(text: &str, domain: &[String]) -> Vec<Pattern> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| Pattern::parse(line, domain))
        .collect()
}

/// Patterns in order of priority, the last first to decide.
#[derive(Clone, Debug, Default)]
pub struct Matcher(Vec<Pattern>);

impl Matcher {
    /// The artifact's filter over `patterns` (the `.sourceignore` files, then `spec.ignore`):
    /// the version-control excludes first, then the defaults when there are no patterns.
    pub fn artifact(patterns: Vec<Pattern>) -> Matcher {
        let root: [String; 0] = [];
        let mut all: Vec<Pattern> = VCS.iter().map(|p| Pattern::parse(p, &root)).collect();
        if patterns.is_empty() {
            all.extend(DEFAULTS.iter().map(|p| Pattern::parse(p, &root)));
        }
        all.extend(patterns);
        Matcher(all)
    }

    /// The patterns as they are (a `.gitignore` set).
    pub fn of(patterns: Vec<Pattern>) -> Matcher {
        Matcher(patterns)
    }

    /// Adds patterns that decide before those it holds.
    pub fn extend(&mut self, patterns: Vec<Pattern>) {
        self.0.extend(patterns);
    }

    /// Whether the path (components from the root) is left out.
    pub fn excludes(&self, path: &[&str], is_dir: bool) -> bool {
        self.0.iter().rev().find_map(|pattern| pattern.decides(path, is_dir)).unwrap_or(false)
    }
}

/// Go's `filepath.Match` on one path component: `*` any run of characters, `?` one, `[…]` a
/// class (`^` negates, `a-z` ranges), `\` escapes. `None`: the pattern is malformed (it then
/// matches nothing, as in Flux).
pub(crate) fn name_matches(pattern: &str, name: &str) -> Option<bool> {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    glob(&pattern, &name)
}

fn glob(pattern: &[char], name: &[char]) -> Option<bool> {
    // Backtracking over the last star: linear in practice for file names.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p < pattern.len() {
            match pattern[p] {
                '*' => {
                    star = Some((p, n));
                    p += 1;
                    continue;
                }
                '?' if n < name.len() => {
                    p += 1;
                    n += 1;
                    continue;
                }
                '[' => {
                    let (matched, next) = class(pattern, p + 1, name.get(n).copied())?;
                    if matched {
                        p = next;
                        n += 1;
                        continue;
                    }
                }
                '\\' => {
                    let c = *pattern.get(p + 1)?;
                    if name.get(n) == Some(&c) {
                        p += 2;
                        n += 1;
                        continue;
                    }
                }
                c if c != '?' && name.get(n) == Some(&c) => {
                    p += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
        } else if n == name.len() {
            return Some(true);
        }
        match star {
            Some((sp, sn)) if sn < name.len() => {
                star = Some((sp, sn + 1));
                p = sp + 1;
                n = sn + 1;
            }
            _ => {
                // A malformed rest of the pattern is an error even after a mismatch, as in Go.
                return check(&pattern[p.min(pattern.len())..]).map(|()| false);
            }
        }
    }
}

/// A class starting after `[` at `at`: whether `c` is in it, and where the pattern goes on.
fn class(pattern: &[char], at: usize, c: Option<char>) -> Option<(bool, usize)> {
    let mut i = at;
    let negated = pattern.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut found = false;
    let mut first = true;
    loop {
        let low = *pattern.get(i)?;
        if low == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let low = if low == '\\' {
            i += 1;
            *pattern.get(i)?
        } else {
            low
        };
        i += 1;
        let high = if pattern.get(i) == Some(&'-') && pattern.get(i + 1).is_some_and(|c| *c != ']') {
            let high = pattern[i + 1];
            i += 2;
            if high == '\\' {
                i += 1;
                *pattern.get(i - 1)?
            } else {
                high
            }
        } else {
            low
        };
        if c.is_some_and(|c| low <= c && c <= high) {
            found = true;
        }
    }
    Some((c.is_some() && found != negated, i))
}

/// Whether the rest of a pattern is well formed (its classes closed, no trailing `\`).
fn check(pattern: &[char]) -> Option<()> {
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            '\\' => {
                pattern.get(i + 1)?;
                i += 2;
            }
            '[' => {
                let (_, next) = class(pattern, i + 1, Some('\0'))?;
                i = next;
            }
            _ => i += 1,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excluded(matcher: &Matcher, path: &str, is_dir: bool) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        matcher.excludes(&parts, is_dir)
    }

    fn domain(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    /// The defaults of fluxcd/pkg `sourceignore` and the cases of its `sourceignore_test.go` and
    /// `gitignore/pattern_test.go` (read there, written here as paths).
    #[test]
    fn defaults_and_patterns() {
        let defaults = Matcher::artifact(Vec::new());
        for path in [".git", ".git/config", ".github/workflows/ci.yaml", "a/cloudbuild.yaml", "x.png", "a/b.tar.gz"] {
            assert!(excluded(&defaults, path, false) || excluded(&defaults, path, true), "{path}");
        }
        for path in ["apps/kustomization.yaml", "a.yaml", "tar.gz", "cloudbuild.yml", "a/.sops.yaml.bak"] {
            assert!(!excluded(&defaults, path, false), "{path}");
        }
        assert!(excluded(&defaults, "deep/er/.sops.yaml", false));
        // With a pattern of its own, the defaults are gone; the VCS excludes stay.
        let own = Matcher::artifact(read_patterns("# comment\n\n/apps/*.yaml\n!/apps/keep.yaml\n", &[]));
        assert!(!excluded(&own, "x.png", false));
        assert!(excluded(&own, ".gitignore", false));
        assert!(excluded(&own, "apps/a.yaml", false));
        assert!(!excluded(&own, "apps/keep.yaml", false));
        assert!(!excluded(&own, "other/apps/a.yaml", false));
    }

    #[test]
    fn scopes_directories_and_double_stars() {
        let sub = Matcher::of(read_patterns("secret.yaml\nbuild/\n", &domain(&["apps"])));
        assert!(excluded(&sub, "apps/secret.yaml", false));
        assert!(excluded(&sub, "apps/x/secret.yaml", false));
        assert!(!excluded(&sub, "secret.yaml", false));
        assert!(excluded(&sub, "apps/build", true));
        assert!(excluded(&sub, "apps/build/a.yaml", false));
        assert!(!excluded(&sub, "apps/build", false), "a file named build is not a directory");
        let stars = Matcher::of(read_patterns("**/tmp/*.yaml\na/**/b\n", &[]));
        assert!(excluded(&stars, "tmp/x.yaml", false));
        assert!(excluded(&stars, "q/r/tmp/x.yaml", false));
        assert!(!excluded(&stars, "tmp/x.yml", false));
        assert!(excluded(&stars, "a/b", false));
        assert!(excluded(&stars, "a/x/y/b", false));
        assert!(excluded(&stars, "a/b/c", false), "below a match");
    }

    #[test]
    fn go_filepath_match() {
        for (pattern, name, expected) in [
            ("*.yaml", "a.yaml", Some(true)),
            ("*.yaml", "a.yml", Some(false)),
            ("a?c", "abc", Some(true)),
            ("[a-c]x", "bx", Some(true)),
            ("[^a-c]x", "bx", Some(false)),
            ("[^a-c]x", "dx", Some(true)),
            ("\\*", "*", Some(true)),
            ("*", "", Some(true)),
            ("a*b*c", "axxbyyc", Some(true)),
            ("[", "a", None),
            ("a[", "b", None),
        ] {
            assert_eq!(name_matches(pattern, name), expected, "{pattern} {name}");
        }
    }
}
