//! Items from a YAML stream that is not a ResourceList: a manifest file the user named, or the
//! output of a tool such as kustomize. Each item keeps its document's text, so that an item no
//! step changes is written as it was, and a step can ask which of its scalars were quoted.

use super::cut;
use super::item::{Item, Quoted};
use crate::doc::{declares_tag_handles, quoted_template_scalars, Start, Value};
use std::collections::HashSet;

/// The documents of one stream, made into items one at a time.
pub struct StreamItems<'t> {
    text: &'t str,
    /// `%TAG` directives change what a document's text means once cut out of the stream.
    copyable: bool,
    /// For items that keep no source: which scalars were quoted, read once per stream.
    quoted: Option<Vec<HashSet<String>>>,
}

impl<'t> StreamItems<'t> {
    pub fn new(text: &'t str) -> Self {
        StreamItems { text, copyable: !declares_tag_handles(text), quoted: None }
    }

    /// The item of document `index`, read as `document`, which started at `start`.
    pub fn item(&mut self, index: usize, document: Value, start: Start) -> Item {
        let mut item = Item::from(document);
        if let Some((start, 1)) = start.filter(|_| self.copyable) {
            let rest = self.text.get(start..).unwrap_or_default();
            let body = &rest[..cut::document_marker(rest).unwrap_or(rest.len())];
            if let Some(source) = cut::standalone_source(body, 0) {
                item.set_source(source.into_boxed_str());
            }
        }
        if !item.has_source() {
            let text = self.text;
            let documents = self.quoted.get_or_insert_with(|| quoted_template_scalars(text));
            if let Some(pointers) = documents.get(index).filter(|pointers| !pointers.is_empty()) {
                item.set_quoted(Quoted::At(pointers.clone()));
            }
        }
        item
    }
}
