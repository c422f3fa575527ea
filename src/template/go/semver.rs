//! A `*semver.Version` (Masterminds/semver v3, which Sprig's `semver` returns): its lenient
//! parse, its precedence, and its methods with arguments (`Compare`, `LessThan`, `GreaterThan`,
//! `Equal`). Written here because the `semver` crate follows Cargo's rules, not Masterminds'.
//! Sprig's functions over versions (`semver`, `semverCompare`'s constraints) are Sprig's, in
//! `template/sprig/semver.rs`.

use super::fmt::type_name;
use super::value::{map, string, tagged, GoMap, GoValue, Type};
use gotmpl::TemplateError;
use std::cmp::Ordering;

/// A `*semver.Version`'s method with arguments, called on the version whose fields are
/// `fields`: `Compare`, `LessThan`, `GreaterThan`, `Equal` (each takes a version).
pub fn method(fields: &GoValue, name: &str, args: &[GoValue]) -> Result<GoValue, TemplateError> {
    let version = |value: &GoValue| match tagged(value) {
        Some((Type::Semver, fields)) => Version::of_fields(fields),
        _ => None,
    };
    let receiver = Version::of_fields(fields);
    let want = |n: usize| -> Result<(), TemplateError> {
        if args.len() == n {
            Ok(())
        } else {
            Err(TemplateError::Exec(format!("wrong number of args for {name}: want {n} got {}", args.len())))
        }
    };
    let other = || -> Result<Version, TemplateError> {
        want(1)?;
        version(&args[0]).ok_or_else(|| {
            TemplateError::Exec(format!("wrong type for value; expected *semver.Version; got {}", type_name(&args[0])))
        })
    };
    let Some(receiver) = receiver else {
        return Err(TemplateError::Exec(format!("can't evaluate field {name} in type *semver.Version")));
    };
    Ok(match name {
        "Compare" => GoValue::Int(match receiver.compare(&other()?) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }),
        "LessThan" => GoValue::Bool(receiver.compare(&other()?) == Ordering::Less),
        "GreaterThan" => GoValue::Bool(receiver.compare(&other()?) == Ordering::Greater),
        "Equal" => GoValue::Bool(receiver.compare(&other()?) == Ordering::Equal),
        _ => return Err(TemplateError::Exec(format!("can't evaluate field {name} in type *semver.Version"))),
    })
}

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

    /// The map of its methods without arguments, which a template's `.Major` reads (a version
    /// is tagged `*semver.Version` by the call: [`typed`](super::typed)).
    pub fn fields(&self, original: &str) -> GoValue {
        let mut text = format!("{}.{}.{}", self.major, self.minor, self.patch);
        if !self.pre.is_empty() {
            text.push('-');
            text.push_str(&self.pre);
        }
        if !self.metadata.is_empty() {
            text.push('+');
            text.push_str(&self.metadata);
        }
        let mut fields = GoMap::new();
        fields.insert("Major".into(), GoValue::Uint(self.major));
        fields.insert("Minor".into(), GoValue::Uint(self.minor));
        fields.insert("Patch".into(), GoValue::Uint(self.patch));
        fields.insert("Prerelease".into(), string(self.pre.as_str()));
        fields.insert("Metadata".into(), string(self.metadata.as_str()));
        fields.insert("Original".into(), string(original));
        fields.insert("String".into(), string(text));
        map(fields)
    }

    /// The version whose [`fields`](Self::fields) these are, read back without parsing its text
    /// again.
    fn of_fields(fields: &GoValue) -> Option<Version> {
        let GoValue::Map(map) = fields else { return None };
        let number = |name: &str| match map.get(name) {
            Some(GoValue::Uint(n)) => Some(*n),
            _ => None,
        };
        let text = |name: &str| map.get(name).and_then(GoValue::as_str).map(str::to_string);
        Some(Version {
            major: number("Major")?,
            minor: number("Minor")?,
            patch: number("Patch")?,
            pre: text("Prerelease")?,
            metadata: text("Metadata")?,
        })
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
