//! The template values: the engine's own, with Go's types. A template's data and Sprig's results
//! are Go's `interface{}` holding `int`, `int64` (Sprig's arithmetic), `uint64`, `float64`,
//! `string`, `bool`, a slice (`[]interface {}`, or Sprig's `[]string`, `[]int`,
//! `[][]interface {}`), a map (`map[string]interface {}`, or `split`'s `map[string]string`) or a
//! `*semver.Version`; `typeOf`, `kindIs`, printf's `%T`, `deepEqual` and Go's checks of a
//! function's parameters see which, wherever the value is (in a variable, a list, a map).
//!
//! Maps are shared as Go shares them: `{{ $_ := set $d "k" "v" }}` changes the map every
//! variable, field or list holding `$d` holds. A leaf: everything else in the engine reads values
//! through it.

use super::semver::Version;
use crate::doc::{Map, Value};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A template map's entries.
pub type GoMap = std::collections::BTreeMap<Arc<str>, GoValue>;

/// A template value.
#[derive(Clone, Debug, Default)]
pub enum GoValue {
    #[default]
    Nil,
    Bool(bool),
    /// Go's `int`: template constants, `len`, the data's integers.
    Int(i64),
    /// Go's `int64`: Sprig's arithmetic.
    Int64(i64),
    Uint(u64),
    Float(f64),
    String(Arc<str>),
    List(List),
    Map(MapRef),
    Semver(Arc<Semver>),
}

/// The element type of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `[]interface {}`
    Any,
    /// `[]string`
    String,
    /// `[]int`
    Int,
    /// `[][]interface {}`
    List,
}

/// A slice: its items, its element type, and whether it is Go's nil slice (Sprig's `rest`,
/// `initial` and `concat` of empty lists and `regexFindAll` without a match give one: empty
/// everywhere but in JSON, where it is `null`, in `%#v`, and in `deepEqual`).
#[derive(Clone, Debug)]
pub struct List {
    items: Arc<[GoValue]>,
    pub elem: Elem,
    pub nil: bool,
}

impl List {
    pub fn new(items: impl Into<Arc<[GoValue]>>, elem: Elem) -> Self {
        List { items: items.into(), elem, nil: false }
    }

    /// Go's nil slice of `elem`.
    pub fn nil(elem: Elem) -> Self {
        List { items: Arc::from(Vec::new()), elem, nil: true }
    }

    /// Whether two lists are one allocation (values built of shared parts are measured once).
    pub fn ptr_eq(&self, other: &List) -> bool {
        Arc::ptr_eq(&self.items, &other.items)
    }

    /// The allocation's address: a key while the list is alive.
    pub fn address(&self) -> usize {
        self.items.as_ptr() as usize
    }

    /// The same items with another element type or length (`slice` keeps the type).
    pub fn with_items(&self, items: impl Into<Arc<[GoValue]>>) -> Self {
        List { items: items.into(), elem: self.elem, nil: false }
    }
}

impl std::ops::Deref for List {
    type Target = [GoValue];
    fn deref(&self) -> &[GoValue] {
        &self.items
    }
}

impl From<Vec<GoValue>> for List {
    fn from(items: Vec<GoValue>) -> Self {
        List::new(items, Elem::Any)
    }
}

impl FromIterator<GoValue> for List {
    fn from_iter<I: IntoIterator<Item = GoValue>>(iter: I) -> Self {
        List::new(iter.into_iter().collect::<Vec<_>>(), Elem::Any)
    }
}

impl Drop for List {
    fn drop(&mut self) {
        if let Some(items) = Arc::get_mut(&mut self.items) {
            if items.iter().any(GoValue::is_container) {
                drop_iteratively(items.iter_mut().map(std::mem::take).collect());
            }
        }
    }
}

/// Drops values one container at a time: a value deepened by changing maps in place (a chain of
/// 100 000 maps set one into the next) would otherwise be dropped by recursion as deep as it
/// nests, and exhaust the stack. A container still held elsewhere is only let go.
fn drop_iteratively(mut pending: Vec<GoValue>) {
    while let Some(value) = pending.pop() {
        match value {
            GoValue::Map(MapRef(mut cell)) => {
                if let Some(cell) = Arc::get_mut(&mut cell) {
                    let entries = cell.entries.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
                    pending.extend(std::mem::take(entries).into_values());
                }
            }
            GoValue::List(mut list) => {
                if let Some(items) = Arc::get_mut(&mut list.items) {
                    pending.extend(items.iter_mut().map(std::mem::take));
                }
            }
            _ => {}
        }
    }
}

/// A map, shared by reference: clones are the same Go map.
#[derive(Clone, Debug)]
pub struct MapRef(Arc<MapCell>);

#[derive(Debug)]
struct MapCell {
    entries: RwLock<GoMap>,
    /// `map[string]string` (its values are strings).
    strings: bool,
}

impl Drop for MapCell {
    fn drop(&mut self) {
        let entries = self.entries.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.values().any(GoValue::is_container) {
            drop_iteratively(std::mem::take(entries).into_values().collect());
        }
    }
}

impl MapRef {
    pub fn new(entries: GoMap) -> Self {
        MapRef(Arc::new(MapCell { entries: RwLock::new(entries), strings: false }))
    }

    /// A `map[string]string`.
    pub fn strings(entries: GoMap) -> Self {
        MapRef(Arc::new(MapCell { entries: RwLock::new(entries), strings: true }))
    }

    /// Whether it is a `map[string]string`.
    pub fn is_strings(&self) -> bool {
        self.0.strings
    }

    /// Its entries, for reading. (A template runs on one thread; a poisoned lock only means a
    /// function failed while changing the map, which ended the execution.)
    pub fn read(&self) -> RwLockReadGuard<'_, GoMap> {
        self.0.entries.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Its entries, for changing: every holder of the map sees the change.
    pub fn write(&self) -> RwLockWriteGuard<'_, GoMap> {
        CHANGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.0.entries.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The entry `key`, cloned.
    pub fn get(&self, key: &str) -> Option<GoValue> {
        self.read().get(key).cloned()
    }

    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Whether two maps are the same Go map.
    pub fn ptr_eq(&self, other: &MapRef) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The map's address: a key while the map is alive.
    pub fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
}

/// How many times maps have been opened for changing (in any execution): what an execution
/// remembers of a map's contents (its measure) holds while this stays the same.
static CHANGES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The number of map changes so far ([`CHANGES`]).
pub fn generation() -> u64 {
    CHANGES.load(std::sync::atomic::Ordering::Relaxed)
}

/// A `*semver.Version` (what Sprig's `semver` returns), or a `semver.Version` (what its
/// methods `IncMajor`, `SetPrerelease`… return): the version and its original text.
#[derive(Debug)]
pub struct Semver {
    pub version: Version,
    pub original: Arc<str>,
    /// A pointer: it has the methods with a pointer receiver (`Original`, `Compare`…).
    pub pointer: bool,
}

impl GoValue {
    /// Go's truth of a value (`if`, `with`, `and`, `or`, `not`).
    pub fn is_truthy(&self) -> bool {
        match self {
            GoValue::Nil => false,
            GoValue::Bool(b) => *b,
            GoValue::Int(n) | GoValue::Int64(n) => *n != 0,
            GoValue::Uint(n) => *n != 0,
            GoValue::Float(f) => *f != 0.0,
            GoValue::String(s) => !s.is_empty(),
            GoValue::List(items) => !items.is_empty(),
            GoValue::Map(map) => !map.is_empty(),
            GoValue::Semver(_) => true,
        }
    }

    /// Whether it is a list or a map.
    pub fn is_container(&self) -> bool {
        matches!(self, GoValue::List(_) | GoValue::Map(_))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            GoValue::String(s) => Some(s),
            _ => None,
        }
    }
}

/// What a list of `len` items takes in memory: a slot per item (what building one is charged).
pub fn list_bytes(len: usize) -> usize {
    len.saturating_mul(std::mem::size_of::<GoValue>())
}

/// What a map entry takes in memory: its value's slot, the entry, its key.
pub fn entry_bytes(key: &str) -> usize {
    std::mem::size_of::<GoValue>() + 32 + key.len()
}

/// A string value.
pub fn string(text: impl Into<Arc<str>>) -> GoValue {
    GoValue::String(text.into())
}

/// A `[]interface {}` value.
pub fn list(items: Vec<GoValue>) -> GoValue {
    GoValue::List(items.into())
}

/// A slice of `elem`.
pub fn typed_list(items: Vec<GoValue>, elem: Elem) -> GoValue {
    GoValue::List(List::new(items, elem))
}

/// Go's nil `[]interface {}`.
pub fn nil_list() -> GoValue {
    GoValue::List(List::nil(Elem::Any))
}

/// A `map[string]interface {}` value.
pub fn map(entries: GoMap) -> GoValue {
    GoValue::Map(MapRef::new(entries))
}

/// A document value as template data.
pub fn to_go(value: &Value) -> GoValue {
    match value {
        Value::Null => GoValue::Nil,
        Value::Bool(b) => GoValue::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => GoValue::Int(i),
            (None, Some(u), _) => GoValue::Uint(u),
            (_, _, Some(f)) => GoValue::Float(f),
            _ => GoValue::String(n.to_string().into()),
        },
        Value::String(s) => GoValue::String(s.as_str().into()),
        Value::Array(items) => GoValue::List(items.iter().map(to_go).collect()),
        Value::Object(map) => map_to_go(map),
    }
}

/// A mapping as template data (`.key` lookups).
pub fn map_to_go(map: &Map) -> GoValue {
    GoValue::Map(MapRef::new(map.iter().map(|(k, v)| (Arc::<str>::from(k.as_str()), to_go(v))).collect()))
}

/// Values nest at most this deep: twice what the YAML reader accepts (`limits::MAX_DEPTH`), so
/// data can still be wrapped, while `$x = dict "a" $x` in a loop, or a map set into itself,
/// ends in an error instead of a stack overflow (Go's own overflows printing it).
pub const MAX_VALUE_DEPTH: usize = 2 * crate::limits::MAX_DEPTH;

/// Template data back as a document value (functions returning structure: `fromYaml`, `dict`).
/// A semver is its text; what nests deeper than [`MAX_VALUE_DEPTH`] is null (the engine refuses
/// to build such values, and a map set into itself is refused when it is set).
pub fn from_go(value: &GoValue) -> Value {
    from_go_at(value, 0)
}

fn from_go_at(value: &GoValue, depth: usize) -> Value {
    if depth > MAX_VALUE_DEPTH {
        return Value::Null;
    }
    match value {
        GoValue::Nil => Value::Null,
        GoValue::Bool(b) => Value::Bool(*b),
        GoValue::Int(n) | GoValue::Int64(n) => Value::from(*n),
        GoValue::Uint(n) => Value::from(*n),
        GoValue::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        GoValue::String(s) => Value::String(s.to_string()),
        GoValue::List(items) => Value::Array(items.iter().map(|v| from_go_at(v, depth + 1)).collect()),
        GoValue::Map(map) => {
            Value::Object(map.read().iter().map(|(k, v)| (k.to_string(), from_go_at(v, depth + 1))).collect())
        }
        GoValue::Semver(v) => Value::String(v.version.text()),
    }
}
