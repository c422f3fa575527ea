//! A `*semver.Version` (Masterminds/semver v3, which Sprig's `semver` returns): its lenient
//! parse, its text and its precedence (the engine's methods on a version are in
//! [`exec`](super::exec)). Written here because the `semver` crate follows Cargo's rules, not Masterminds'.
//! Sprig's functions over versions (`semver`, `semverCompare`'s constraints) are Sprig's, in
//! `template/sprig/semver.rs`.

use std::cmp::Ordering;

/// A `*semver.Version` (Masterminds/semver v3).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub metadata: String,
}

fn identifiers_ok(text: &str) -> bool {
    text.split('.').all(|part| !part.is_empty() && part.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
}

/// Splits `1.2.3-pre+meta` into the numbers and the two tails.
pub fn split_tails(text: &str) -> Option<(&str, String, String)> {
    let (rest, metadata) = match text.split_once('+') {
        Some((rest, metadata)) if identifiers_ok(metadata) => (rest, metadata.to_string()),
        Some(_) => return None,
        None => (text, String::new()),
    };
    let (numbers, pre) = match rest.split_once('-') {
        Some((numbers, pre)) if identifiers_ok(pre) => (numbers, pre.to_string()),
        Some(_) => return None,
        None => (rest, String::new()),
    };
    Some((numbers, pre, metadata))
}

impl Version {
    /// Masterminds' lenient `NewVersion`: `v` prefix allowed, minor and patch optional.
    pub fn parse(text: &str) -> Option<Version> {
        let (numbers, pre, metadata) = split_tails(text.strip_prefix('v').unwrap_or(text))?;
        let mut parts = numbers.split('.');
        let mut number = |required: bool| -> Option<u64> {
            match parts.next() {
                Some(part) if !part.is_empty() && part.bytes().all(|c| c.is_ascii_digit()) => part.parse().ok(),
                None if !required => Some(0),
                _ => None,
            }
        };
        let version = Version { major: number(true)?, minor: number(false)?, patch: number(false)?, pre, metadata };
        parts.next().is_none().then_some(version)
    }

    /// Go's `Version.String`: `1.2.3-pre+meta`.
    pub fn text(&self) -> String {
        let mut text = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.pre.is_empty() {
            text.push('-');
            text.push_str(&self.pre);
        }
        if !self.metadata.is_empty() {
            text.push('+');
            text.push_str(&self.metadata);
        }
        text
    }

    /// Semantic-version precedence (metadata ignored).
    pub fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch)).then_with(|| {
            match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_pre(&self.pre, &other.pre),
            }
        })
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}
