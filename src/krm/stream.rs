//! The ResourceList read item by item: each item becomes a compact [`Item`] as soon as it is
//! parsed, so the whole list never exists as one value tree (issue 8: the tree is about eleven
//! times the text). Written by hand because it is a serde visitor over our own shape.

use super::item::Item;
use crate::doc::{duplicate_key_message, start_of, Start, Strict, Value};
use serde::de::Error;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// One document of the input, as far as the ResourceList checks need it.
pub enum Top {
    /// An empty document.
    Empty,
    /// A sequence or a scalar: what it is, for the message.
    NotMapping(&'static str),
    List(Box<Parts>),
}

#[derive(Default)]
pub struct Parts {
    pub api_version: Option<Value>,
    pub kind: Option<Value>,
    pub items: Items,
    pub function_config: Option<Value>,
    /// Where each item starts in the YAML text (byte offset, 1-based column), when known.
    pub item_starts: Vec<Start>,
    /// Where the first key after `items` starts (byte offset): the end of the last item.
    pub after_items: Option<usize>,
    /// Whether the items came with their sources (the fast reader, `krm::scan`).
    pub sources_attached: bool,
}

#[derive(Default)]
pub enum Items {
    /// Absent or null.
    #[default]
    None,
    /// The items, and the index and type of the first one that is not a mapping.
    List(Vec<Item>, Option<(usize, &'static str)>),
    /// What `items` is instead of a list.
    NotList(&'static str),
}

impl<'de> serde::Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

/// Accepts any shape: the caller turns a wrong one into its own message, naming what it got.
macro_rules! other_shapes {
    ($result:path) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($result("a boolean"))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($result("a number"))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($result("a number"))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($result("a number"))
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($result("a string"))
        }
    };
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a ResourceList")
    }

    other_shapes!(Top::NotMapping);

    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::Empty)
    }

    fn visit_none<E>(self) -> Result<Top, E> {
        Ok(Top::Empty)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Top::NotMapping("a list"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut parts = Parts::default();
        let mut seen = std::collections::HashSet::new();
        let mut items_read = false;
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            if items_read && parts.after_items.is_none() {
                parts.after_items = start_of(&key.referenced).map(|(offset, _)| offset);
            }
            let key = key.value;
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(duplicate_key_message(&key)));
            }
            match key.as_str() {
                "apiVersion" => parts.api_version = Some(map.next_value::<Strict>()?.0),
                "kind" => parts.kind = Some(map.next_value::<Strict>()?.0),
                "items" => {
                    (parts.items, parts.item_starts) = map.next_value_seed(ItemsSeed)?;
                    items_read = true;
                }
                "functionConfig" => parts.function_config = Some(map.next_value::<Strict>()?.0),
                // `results` of an earlier function are not carried over; nothing else is read.
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Top::List(Box::new(parts)))
    }
}

struct ItemsSeed;

/// Items that are not a list, with no positions.
fn not_list(shape: &'static str) -> (Items, Vec<Start>) {
    (Items::NotList(shape), Vec::new())
}

impl<'de> DeserializeSeed<'de> for ItemsSeed {
    type Value = (Items, Vec<Start>);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed {
    type Value = (Items, Vec<Start>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of items")
    }

    other_shapes!(not_list);

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Items::None, Vec::new()))
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok((Items::None, Vec::new()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok((Items::NotList("a mapping"), Vec::new()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut starts = Vec::with_capacity(items.capacity());
        let mut not_mapping = None;
        // Strict: JSON's reader would keep the last of two equal keys without a word.
        while let Some(Spanned { value: Strict(value), referenced, .. }) = seq.next_element::<Spanned<Strict>>()? {
            if !value.is_object() {
                not_mapping = not_mapping.or(Some((items.len(), shape_of(&value))));
            }
            starts.push(start_of(&referenced));
            items.push(Item::from(value));
        }
        Ok((Items::List(items, not_mapping), starts))
    }
}

/// How messages name a value's type: as YAML calls it, with an article (`a mapping`, `null`).
pub fn shape_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}
