//! Substitution must know whether a scalar was quoted in its source, which the parsed values no
//! longer say; only the command line knows where those sources are (stdin's bytes, files it read),
//! so it answers the question on the side, and only when it is asked.

use crate::doc::quoted_template_scalars;
use crate::package::read_regular_file;
use crate::pipeline::ScalarStyles;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// The source texts items were read from, scanned for scalar styles only when substitution asks,
/// and then once per text.
#[derive(Default)]
pub(super) struct SourceStyles {
    texts: Vec<Source>,
    /// Per input item: its text and its document in that text.
    items: Vec<(usize, usize)>,
    /// KRM mode: one ResourceList document, items under `/items/<i>`.
    resource_list: bool,
    all_quoted: bool,
    scanned: HashMap<usize, Vec<HashSet<String>>>,
}

/// Where a source text is, read again only if substitution asks about a style: render mode
/// re-reads the file, KRM mode shares stdin's bytes, so no copy is kept alive.
enum Source {
    Shared(Arc<String>),
    /// A file the command line read, and the file-size limit it was read with.
    File(PathBuf, u64),
    Text(String),
}

impl Source {
    fn scan(&self) -> Vec<HashSet<String>> {
        match self {
            Source::Shared(text) => quoted_template_scalars(text),
            Source::File(path, limit) => {
                read_regular_file(path, *limit).map(|t| quoted_template_scalars(&t)).unwrap_or_default()
            }
            Source::Text(text) => quoted_template_scalars(text),
        }
    }
}

impl SourceStyles {
    /// JSON input: its strings are all quoted.
    pub(super) fn all_quoted() -> Self {
        Self { all_quoted: true, ..Default::default() }
    }

    /// KRM mode's YAML: `items` items of the ResourceList that is stdin.
    pub(super) fn resource_list(text: Arc<String>, items: usize) -> Self {
        Self {
            texts: vec![Source::Shared(text)],
            items: vec![(0, 0); items],
            resource_list: true,
            ..Default::default()
        }
    }

    /// One text whose documents are the items, in order (a legacy plugin's stdin).
    pub(super) fn documents(text: String, items: usize) -> Self {
        Self { items: (0..items).map(|i| (0, i)).collect(), texts: vec![Source::Text(text)], ..Default::default() }
    }

    /// A file the command line read with the file-size limit `limit`; returns its number, for
    /// [`SourceStyles::add_item`].
    pub(super) fn add_file(&mut self, path: PathBuf, limit: u64) -> usize {
        self.texts.push(Source::File(path, limit));
        self.texts.len() - 1
    }

    /// The next input item is document `document` of text `text`.
    pub(super) fn add_item(&mut self, text: usize, document: usize) {
        self.items.push((text, document));
    }
}

impl ScalarStyles for SourceStyles {
    fn is_quoted(&mut self, item: usize, pointer: &str) -> bool {
        if self.all_quoted {
            return true;
        }
        let Some(&(text, document)) = self.items.get(item) else { return false };
        let texts = &self.texts;
        let documents =
            self.scanned.entry(text).or_insert_with(|| texts.get(text).map(Source::scan).unwrap_or_default());
        if self.resource_list {
            documents.first().is_some_and(|d| d.contains(&format!("/items/{item}{pointer}")))
        } else {
            documents.get(document).is_some_and(|d| d.contains(pointer))
        }
    }
}
