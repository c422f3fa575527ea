//! An item's header (`apiVersion`, `kind`, `metadata`) in the compact form items keep, and the
//! header's field names: what the readers build for every item while they walk, and all that
//! most steps ever read of one.

use crate::doc::{Map, Value};

/// The header's fields, in the order items keep them.
pub(super) const HEADER: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// An item's header in the compact form [`super::Item`] keeps: its type, and the header as JSON, in one
/// allocation (`apiVersion`, then `kind`, then the JSON): three cost 10 000 items 1 MB more. The
/// JSON holds `""` for an `apiVersion` or `kind` string, which is kept once, before it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Head {
    pub(super) text: Box<str>,
    api_version_end: u32,
    kind_end: u32,
    /// [`identity_key`] of the metadata, made while the header is at hand as a value, so that a
    /// check over every item (repeated identities) never parses a header back.
    identity: u64,
}

/// Set in an [`identity_key`] for an item that is local-config (kustomize's reading: the
/// annotation present and anything but `"false"`).
pub const LOCAL_CONFIG_BIT: u64 = 1 << 63;
/// Set in an [`identity_key`] for an item without a `metadata.name` string.
pub const UNNAMED_BIT: u64 = 1 << 62;

/// `metadata.name` and `metadata.namespace` hashed together (the same key for the same pair,
/// in every run), with [`LOCAL_CONFIG_BIT`] and [`UNNAMED_BIT`]: equal keys are a candidate for
/// the same object, which the caller confirms on the names themselves.
pub fn identity_key(metadata: Option<&Value>) -> u64 {
    use std::hash::{Hash, Hasher};
    // One walk over the (small) maps, no key hashed: this runs for every item read.
    let (mut name, mut namespace, mut local) = (None, "", false);
    for (key, value) in metadata.and_then(Value::as_object).into_iter().flatten() {
        match key.as_str() {
            "name" => name = value.as_str(),
            "namespace" => namespace = value.as_str().unwrap_or_default(),
            "annotations" => {
                // `annotations::LOCAL_CONFIG`, written out: this module is a leaf of `krm`.
                let annotations = value.as_object().into_iter().flatten();
                local = annotations
                    .filter(|(key, _)| key.as_str() == "config.kubernetes.io/local-config")
                    .any(|(_, value)| value.as_str().is_some_and(|v| v != "false"));
            }
            _ => {}
        }
    }
    let mut hasher = rustc_hash::FxHasher::default();
    name.hash(&mut hasher);
    namespace.hash(&mut hasher);
    let mut key = hasher.finish() & !(LOCAL_CONFIG_BIT | UNNAMED_BIT);
    if local {
        key |= LOCAL_CONFIG_BIT;
    }
    if name.is_none_or(str::is_empty) {
        key |= UNNAMED_BIT;
    }
    key
}

impl Head {
    /// The header of `item`, a whole item (its fields read in place, not copied into a map).
    pub(super) fn of(item: &Value) -> Self {
        Head::from_fields(HEADER.iter().filter_map(|&key| Some((key, item.get(key)?))))
    }

    /// The header with these fields, in this order.
    pub(super) fn from_fields<'a>(fields: impl Iterator<Item = (&'a str, &'a Value)> + Clone) -> Self {
        let field = |key: &str| {
            fields.clone().find(|(name, _)| *name == key).and_then(|(_, value)| value.as_str()).unwrap_or_default()
        };
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        let metadata = fields.clone().find(|(name, _)| *name == "metadata").map(|(_, value)| value);
        let mut text = Vec::with_capacity(api_version.len() + kind.len() + 128);
        text.extend_from_slice(api_version.as_bytes());
        text.extend_from_slice(kind.as_bytes());
        // serde_json's compact form of the map, the type's strings left out. Serializing a Value
        // cannot fail: keys are strings, numbers finite; the text is UTF-8.
        text.push(b'{');
        for (i, (key, value)) in fields.enumerate() {
            if i > 0 {
                text.push(b',');
            }
            let _ = serde_json::to_writer(&mut text, key);
            text.push(b':');
            match value {
                Value::String(_) if key == "apiVersion" || key == "kind" => text.extend_from_slice(b"\"\""),
                _ => {
                    let _ = serde_json::to_writer(&mut text, value);
                }
            }
        }
        text.push(b'}');
        let text = String::from_utf8(text).unwrap_or_default().into_boxed_str();
        // The type's strings are at most the YAML reader's scalar limit (64 MiB).
        let end = |len: usize| u32::try_from(len).unwrap_or(u32::MAX);
        Head {
            text,
            api_version_end: end(api_version.len()),
            kind_end: end(api_version.len() + kind.len()),
            identity: identity_key(metadata),
        }
    }

    pub(super) fn api_version(&self) -> &str {
        self.text.get(..self.api_version_end as usize).unwrap_or_default()
    }

    pub(super) fn kind(&self) -> &str {
        self.text.get(self.api_version_end as usize..self.kind_end as usize).unwrap_or_default()
    }

    pub(super) fn identity(&self) -> u64 {
        self.identity
    }

    /// The header as compact JSON (see the type); empty for `Head::default()`, which an item keeps
    /// for a header a step made other than a mapping.
    pub(super) fn json(&self) -> &str {
        self.text.get(self.kind_end as usize..).unwrap_or_default()
    }

    /// The header as a value; null for `Head::default()`.
    pub(super) fn value(&self) -> Value {
        let mut value = crate::doc::from_own_json(self.json()).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            for (key, text) in [("apiVersion", self.api_version()), ("kind", self.kind())] {
                if let Some(Value::String(field)) = map.get_mut(key) {
                    if field.is_empty() {
                        text.clone_into(field);
                    }
                }
            }
        }
        value
    }

    /// Whether `test` holds for some part of the text: the type's strings or the JSON.
    pub(super) fn scan(&self, test: impl Fn(&str) -> bool) -> bool {
        test(self.json()) || test(self.api_version()) || test(self.kind())
    }
}

impl From<&Map> for Head {
    fn from(header: &Map) -> Self {
        Head::from_fields(header.iter().map(|(key, value)| (key.as_str(), value)))
    }
}

/// `apiVersion` and `kind` of an item, for dispatching on configuration kinds.
pub fn type_of(item: &Value) -> (&str, &str) {
    (
        item.get("apiVersion").and_then(Value::as_str).unwrap_or_default(),
        item.get("kind").and_then(Value::as_str).unwrap_or_default(),
    )
}
