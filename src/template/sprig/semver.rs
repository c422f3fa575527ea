//! Sprig's `semver` and `semverCompare` (Masterminds/semver v3), written here because the
//! `semver` crate follows Cargo's rules, not Masterminds'. Versions parse leniently (`v1.2`,
//! `1`). Constraints: `=`, `!=`, `>`, `<`, `>=`/`=>`, `<=`/`=<`, `~`/`~>`, `^`, wildcards
//! (`1.2.x`, `*`, a missing part), hyphen ranges (`1.2 - 1.4.5`), `,` or spaces for "and" and
//! `||` for "or"; a pre-release version satisfies only constraints that name a pre-release.
//! `semver` returns a `*semver.Version` ([`go::Semver`]): printed as `1.2.3`, with Masterminds'
//! methods that return no version (`.Major`, `.Minor`, `.Patch`, `.Prerelease`, `.Metadata`,
//! `.Original`, `.String`, `.Compare`, `.LessThan`, `.GreaterThan`, `.Equal`).

use crate::template::go::semver::{split_tails, Version};
use crate::template::go::{self, define, Arity::Exact, FuncMap, GoValue};
use std::cmp::Ordering;

pub fn register(funcs: &mut FuncMap) {
    define(funcs, "semver", Exact(1), |args| {
        let text = args.string(0)?;
        let version = Version::parse(text).ok_or_else(|| go::fail(args.name(), "Invalid Semantic Version"))?;
        Ok(GoValue::Semver(std::sync::Arc::new(go::Semver { version, original: text.into(), pointer: true })))
    });
    define(funcs, "semverCompare", Exact(2), |args| {
        let (constraint, version) = (args.string(0)?, args.string(1)?);
        let constraint = Constraint::parse(constraint).map_err(|e| go::fail(args.name(), e))?;
        let version = Version::parse(version).ok_or_else(|| go::fail(args.name(), "Invalid Semantic Version"))?;
        Ok(GoValue::Bool(constraint.check(&version)))
    });
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Equal,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

/// One comparison; `minor_dirty`/`patch_dirty` say the part was a wildcard or missing.
#[derive(Debug)]
struct Single {
    op: Op,
    version: Version,
    any: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// `||` of `,`-joined comparisons.
struct Constraint(Vec<Vec<Single>>);

impl Constraint {
    fn parse(text: &str) -> Result<Constraint, String> {
        let improper = || format!("improper constraint: {text}");
        let mut groups = Vec::new();
        for group in text.split("||") {
            let mut tokens: Vec<String> = Vec::new();
            let words: Vec<&str> =
                group.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()).collect();
            let mut i = 0;
            while i < words.len() {
                // Hyphen range: `a - b`.
                if words.get(i + 1) == Some(&"-") && i + 2 < words.len() {
                    tokens.push(format!(">={}", words[i]));
                    tokens.push(format!("<={}", words[i + 2]));
                    i += 3;
                    continue;
                }
                // An operator alone joins the version after it: `>= 1.2`.
                if words[i].bytes().all(|c| b"=!<>~^".contains(&c)) && i + 1 < words.len() {
                    tokens.push(format!("{}{}", words[i], words[i + 1]));
                    i += 2;
                    continue;
                }
                tokens.push(words[i].to_string());
                i += 1;
            }
            if tokens.is_empty() {
                return Err(improper());
            }
            groups
                .push(tokens.iter().map(|token| Single::parse(token).ok_or_else(improper)).collect::<Result<_, _>>()?);
        }
        Ok(Constraint(groups))
    }

    fn check(&self, version: &Version) -> bool {
        self.0.iter().any(|group| group.iter().all(|single| single.check(version)))
    }
}

impl Single {
    fn parse(token: &str) -> Option<Single> {
        let operator_len = token.bytes().take_while(|c| b"=!<>~^".contains(c)).count();
        let (operator, rest) = token.split_at(operator_len);
        let op = match operator {
            "" | "=" => Op::Equal,
            "!=" => Op::NotEqual,
            ">" => Op::Greater,
            "<" => Op::Less,
            ">=" | "=>" => Op::GreaterEqual,
            "<=" | "=<" => Op::LessEqual,
            "~" | "~>" => Op::Tilde,
            "^" => Op::Caret,
            _ => return None,
        };
        let rest = rest.strip_prefix('v').unwrap_or(rest);
        let (numbers, pre, metadata) = split_tails(rest)?;
        let mut parts = numbers.split('.');
        let mut dirty = [false; 3];
        let mut values = [0u64; 3];
        for i in 0..3 {
            match parts.next() {
                Some("x" | "X" | "*") | None => dirty[i] = true,
                Some(part)
                    if !part.is_empty() && part.bytes().all(|c| c.is_ascii_digit()) && !dirty[..i].contains(&true) =>
                {
                    values[i] = part.parse().ok()?;
                }
                Some(_) => return None,
            }
        }
        if parts.next().is_some() {
            return None;
        }
        Some(Single {
            op,
            version: Version { major: values[0], minor: values[1], patch: values[2], pre, metadata },
            any: dirty[0],
            minor_dirty: dirty[1],
            patch_dirty: dirty[2],
        })
    }

    fn dirty(&self) -> bool {
        self.minor_dirty || self.patch_dirty
    }

    fn check(&self, v: &Version) -> bool {
        let c = &self.version;
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        if self.any {
            return !matches!(self.op, Op::NotEqual | Op::Greater | Op::Less);
        }
        let order = v.compare(c);
        match self.op {
            Op::Equal if self.dirty() => self.tilde(v),
            Op::Equal => order == Ordering::Equal,
            Op::NotEqual if self.dirty() => !self.tilde(v),
            Op::NotEqual => order != Ordering::Equal,
            Op::Greater if self.dirty() => match v.major.cmp(&c.major) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => !self.minor_dirty && v.minor > c.minor,
            },
            Op::Greater => order == Ordering::Greater,
            Op::GreaterEqual => order != Ordering::Less,
            Op::Less => order == Ordering::Less,
            Op::LessEqual if self.dirty() => match v.major.cmp(&c.major) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => self.minor_dirty || v.minor <= c.minor,
            },
            Op::LessEqual => order != Ordering::Greater,
            Op::Tilde => self.tilde(v),
            Op::Caret => self.caret(v),
        }
    }

    /// `~1.2.3` is `>=1.2.3 <1.3.0`; `~1` is `>=1 <2`.
    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return v.major == 0 && v.minor == 0;
        }
        v.major == c.major && (self.minor_dirty || v.minor == c.minor)
    }

    /// `^1.2.3` is `>=1.2.3 <2`; `^0.2.3` is `>=0.2.3 <0.3`; `^0.0.3` is `=0.0.3`.
    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        v.patch == c.patch
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{expect, expect_err};

    #[test]
    fn sprig_semver() {
        // semver_test.go: TestSemver, TestSemverCompare; cases from Masterminds/semver's
        // constraints_test.go TestConstraintCheck.
        expect(&[
            (r#"{{ $s := semver "1.2.3-beta.1+c0ff33" }}{{ $s.Prerelease }}"#, "beta.1"),
            (r#"{{ $s := semver "1.2.3-beta.1+c0ff33" }}{{ $s.Major }}"#, "1"),
            // Version.MarshalJSON: its text.
            (r#"{{ semver "v1.2" | toJson }}"#, r#""1.2.0""#),
            (r#"{{ semverCompare "1.2.3" "1.2.3" }}"#, "true"),
            (r#"{{ semverCompare "^1.2.0" "1.2.3" }}"#, "true"),
            (r#"{{ semverCompare "^1.2.0" "2.2.3" }}"#, "false"),
        ]);
        let cases: &[(&str, &str, bool)] = &[
            ("=2.0.0", "1.2.3", false),
            ("=2.0.0", "2.0.0", true),
            ("=2.0", "2.0.5", true),
            ("4.1", "4.1.3", true),
            ("!=4.1.0", "4.1.0", false),
            ("!=4.1", "4.1.5", false),
            ("!=4.1", "4.2.0", true),
            (">1.1", "1.1.5", false),
            (">1.1", "1.2.0", true),
            (">0", "1.0.0", true),
            (">1.1.0", "1.1.1", true),
            ("<1.1", "1.0.9", true),
            ("<1.1", "1.1.0", false),
            (">=1.1", "1.1.0", true),
            ("<=1.1", "1.1.9", true),
            ("<=1.1", "1.2.0", false),
            ("<=1.1.1", "1.1.2", false),
            ("~1.2.3", "1.2.4", true),
            ("~1.2.3", "1.3.0", false),
            ("~1", "1.9.0", true),
            ("~1", "2.0.0", false),
            ("~1.x", "1.5.0", true),
            ("^1.2.3", "1.8.0", true),
            ("^1.2.3", "2.0.0", false),
            ("^0.2.3", "0.2.9", true),
            ("^0.2.3", "0.3.0", false),
            ("^0.0.3", "0.0.3", true),
            ("^0.0.3", "0.0.4", false),
            ("^0", "0.9.0", true),
            ("1.2.x", "1.2.7", true),
            ("1.2.x", "1.3.0", false),
            ("*", "4.0.0", true),
            ("x", "0.0.1", true),
            (">=1.1, <2", "1.5.0", true),
            (">=1.1 <2", "2.0.0", false),
            (">= 1.1, < 2", "1.1.0", true),
            ("<1.0 || >=2.0", "1.5.0", false),
            ("<1.0 || >=2.0", "2.5.0", true),
            ("1.1 - 2", "1.5.0", true),
            ("1.1 - 2", "2.0.0", true),
            ("1.1 - 2.0.0", "2.0.1", false),
            (">=1.2", "1.3.0-beta", false),
            (">=1.2.0-alpha", "1.3.0-beta", true),
            (">=1.2.0-beta.2", "1.2.0-beta.10", true),
            (">1.2.0-beta.2", "1.2.0-beta.1", false),
            (">=1.2", "v1.3", true),
        ];
        for (constraint, version, expected) in cases {
            let source = format!("{{{{ semverCompare {constraint:?} {version:?} }}}}");
            expect(&[(&source, if *expected { "true" } else { "false" })]);
        }
        expect_err(&[
            (r#"{{ semverCompare "1.2.3" "nope" }}"#, "error calling semverCompare: Invalid Semantic Version"),
            (r#"{{ semverCompare "%1" "1.2.3" }}"#, "improper constraint: %1"),
            (r#"{{ semver "1.x" }}"#, "Invalid Semantic Version"),
        ]);
    }
}
