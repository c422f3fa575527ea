//! The transformers: kustomize patches, then Flux post-build substitution, on every item but
//! configuration kinds. Both change items that already exist (the other steps make new ones), so
//! they run as one pass over the items, in batches that two threads share, with the idempotency
//! mark that lets a second run leave alone what the first one changed.

use crate::diag::Diagnostic;
use crate::doc::Value;
use crate::krm::{self, annotation, annotations as ann, set_annotation, Item, QuotedScalars};
use crate::limits::Budget;
use crate::package::Files;
use crate::render::{Render, CONFIGURATION_KINDS};
use crate::{patch, subst};

/// What the patches matched and the post-build variables, for `explain`.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every `spec.patches` entry and what it matched.
    pub patches: Vec<patch::PatchReport>,
    /// The post-build variables, when the config substitutes.
    pub substitution: Option<subst::Report>,
}

/// Patches (kustomize), then substitution (Flux post-build), on every item but configuration kinds;
/// returns what the patches matched and the post-build variables, for the report.
///
/// Idempotency for input items: kpt writes the output over the package's files, so the next
/// run's input may be this run's output. Every input item the patches or substitution changed
/// is marked `fn.blueprint.dev/applied: <fingerprint of what changed it>` ([`Marks`]); a marked
/// item is left as it is while that fingerprint is the current one, and refused with an error
/// otherwise, since its original is gone: patching it again would apply a patch twice, and its
/// `${…}` are already consumed. Generated items are made afresh every run and never need one.
pub fn run(render: &mut Render, files: &dyn Files) -> Report {
    let patches = match patch::prepare(&render.config.spec.patches, &render.config.item, files) {
        Ok(patches) => patches,
        Err(errors) => {
            render.results.extend(errors);
            return Report::default();
        }
    };
    let variables = match subst::prepare(&render.config.spec, &render.config.item, &render.items) {
        Ok(variables) => variables,
        Err(errors) => {
            render.results.extend(errors);
            return Report::default();
        }
    };
    // Items an earlier run marked are looked at even when nothing is to be applied now: the
    // patches or variables they hold the result of are gone from the config.
    let marked = || render.items.iter().any(|item| item.header_contains(ann::APPLIED));
    if patches.is_empty() && variables.is_none() && !marked() {
        return Report::default();
    }
    let marks = Marks::of(&patches.fingerprint, variables.as_ref().map(|v| v.fingerprint.as_str()));
    let mut tally = patches.tally();
    let mut subst_results = Vec::new();
    let mut refused = Vec::new();
    let changer = Changer {
        patches: &patches,
        variables: variables.as_ref(),
        budget: &render.budget,
        exhausted: std::sync::atomic::AtomicBool::new(false),
        marks: &marks,
    };
    // In batches, each item looked at (and, when a patch or substitution may change it, built,
    // patched, substituted, marked and compacted) on one of two threads, so at most two items
    // are held in full; what each found is then counted in the items' order, so results read as
    // one pass.
    for batch in render.items.chunks_mut(CHANGE_BATCH) {
        let mut slots: Vec<Slot> = batch
            .iter_mut()
            .filter(|item| !CONFIGURATION_KINDS.contains(&item.type_of()))
            .map(|item| Slot { item, found: Found::Nothing })
            .collect();
        let work = |_: usize, slot: &mut Slot| slot.found = changer.look_at(slot.item);
        if slots.len() >= PARALLEL_ITEMS {
            krm::on_two_threads(&mut slots, work);
        } else {
            slots.iter_mut().enumerate().for_each(|(i, slot)| work(i, slot));
        }
        for slot in slots {
            match slot.found {
                Found::Counted(counted) => tally.absorb(counted),
                Found::Changed(changed) => {
                    tally.absorb(changed.tally);
                    subst_results.extend(changed.results);
                }
                Found::Refused(refusal, counted) => {
                    tally.absorb(counted);
                    refused.push(*refusal);
                }
                Found::Nothing => {}
            }
        }
    }
    let mut generated = std::mem::take(&mut render.generated);
    generated.retain_mut(|generated| {
        let changed = changer.change(&mut generated.item, None, Steps::generated(generated.substitute), None);
        tally.absorb(changed.tally);
        subst_results.extend(changed.results);
        !changed.applied.deleted
    });
    render.generated = generated;
    // What is left in the output, for the patches' check that no two resources share an id.
    let mut live = render
        .items
        .iter()
        .filter(|item| !CONFIGURATION_KINDS.contains(&item.type_of()))
        .map(Item::header)
        .chain(render.generated.iter().map(|generated| &generated.item))
        .filter(|header| !krm::is_local_config(header));
    let (patch_results, patch_report) = patches.finish(tally, &mut live);
    render.results.extend(refused);
    render.results.extend(patch_results);
    render.results.extend(subst_results);
    Report { patches: patch_report, substitution: variables.as_ref().map(subst::Variables::report) }
}

/// The marks this configuration gives an input item, by what changed it: a later run with
/// another configuration can then tell the items whose current text is still what that
/// configuration makes of the files as committed. Each is a fingerprint of the parts that
/// decided the item's text, `P` the patches and `V` the variables (empty when not configured).
struct Marks {
    /// Patched, not substituted: `P`. Its text holds nothing substitution changes, so another
    /// `V` gives it the same text, and a `V` that now substitutes it (say, it was off before)
    /// finds the `${…}` the patches left, as a render of the files would.
    patched: String,
    /// Patched and substituted: `P` and `V`.
    both: String,
    /// Substituted only, outside what patches select by: `V`. The same `V` gives the same text
    /// as long as no patch selects the item, which its current header tells.
    substituted: String,
    /// Substituted only, its header too: `P` and `V`, as patches might select it by its header
    /// before substitution, which is gone.
    substituted_header: String,
}

impl Marks {
    fn of(patches: &str, variables: Option<&str>) -> Self {
        let variables = variables.unwrap_or_default();
        Self {
            patched: fingerprint(&[patches, ""]),
            both: fingerprint(&[patches, variables]),
            substituted: fingerprint(&["", variables]),
            substituted_header: fingerprint(&[patches, variables, "metadata"]),
        }
    }

    /// The mark for an input item, from what changed it; `None` when nothing did.
    fn for_item(&self, changed: &Changed) -> Option<&str> {
        match (changed.patched, changed.substituted, changed.header_substituted) {
            (true, true, _) => Some(&self.both),
            (true, false, _) => Some(&self.patched),
            (false, true, true) => Some(&self.substituted_header),
            (false, true, false) => Some(&self.substituted),
            (false, false, _) => None,
        }
    }
}

/// Items are changed in batches of this many (see [`run`]): enough to share
/// out between two threads, few enough that the batch's slots and results stay small (each
/// item is compacted as soon as it is changed, so at most two are built at once).
pub(crate) const CHANGE_BATCH: usize = 128;

/// A batch with fewer items to look at is done on one thread: a thread costs more than they do,
/// and small renders (the tests' among them) stay on one.
const PARALLEL_ITEMS: usize = 16;

/// One item of a batch the patches and substitution look at, and what they found.
struct Slot<'a> {
    item: &'a mut Item,
    found: Found,
}

/// What looking at one item found.
enum Found {
    /// Nothing to patch or substitute.
    Nothing,
    /// Patched by a previous run: only counted.
    Counted(patch::Tally),
    Changed(Changed),
    /// Marked by a run with another configuration (see [`Marks`]): an error, and the patches
    /// that select it counted, so that none warns it matches nothing.
    Refused(Box<Diagnostic>, patch::Tally),
}

/// What changing one item found, to count in the items' order.
struct Changed {
    applied: patch::Applied,
    tally: patch::Tally,
    results: Vec<Diagnostic>,
    /// The patches changed it (known for input items only, which need the mark).
    patched: bool,
    /// Substitution changed it, and what patches select it by.
    substituted: bool,
    header_substituted: bool,
}

/// Which steps to run on an item, and whether it is an input item, which needs its mark.
#[derive(Clone, Copy)]
struct Steps {
    patch: bool,
    substitute: bool,
    input: bool,
}

impl Steps {
    /// A generated item: `substitute: false` leaves substitution off it.
    fn generated(substitute: bool) -> Self {
        Self { patch: true, substitute, input: false }
    }
}

/// What every item's change shares: shared by the threads that change items.
struct Changer<'a> {
    patches: &'a patch::Patches,
    variables: Option<&'a subst::Variables>,
    budget: &'a Budget,
    /// Set once the budget ran out on an item: later items are counted, not patched.
    exhausted: std::sync::atomic::AtomicBool,
    marks: &'a Marks,
}

impl Changer<'_> {
    /// Patches and substitutes one item (`quotes`: which of its scalars were quoted where it was
    /// read; generated items were not read), as `steps` say.
    fn change(
        &self,
        item: &mut Value,
        renamed_from: Option<&str>,
        steps: Steps,
        quotes: Option<&QuotedScalars>,
    ) -> Changed {
        use std::sync::atomic::Ordering::Relaxed;
        let mut tally = self.patches.item_tally(self.exhausted.load(Relaxed));
        let mut applied = patch::Applied::default();
        let mut patched = false;
        if steps.patch {
            // An input item's mark says whether the patches changed it, which only a copy tells.
            let before = (steps.input && self.patches.may_touch(item, renamed_from)).then(|| item.clone());
            applied = self.patches.apply_to(item, renamed_from, &mut tally, self.budget);
            patched = before.is_some_and(|before| before != *item);
        } else {
            self.patches.count_matches(item, renamed_from, &mut tally);
        }
        if tally.is_exhausted() {
            self.exhausted.store(true, Relaxed);
        }
        let mut results = Vec::new();
        let (mut substituted, mut header_substituted) = (false, false);
        if let (Some(variables), true, false) = (self.variables, steps.substitute, applied.deleted) {
            substituted = steps.input && subst::touches(item);
            header_substituted = substituted && subst::touches_header(item);
            // Asked only for a substituted scalar whose new text would not read as a string.
            // Generated items have no source text: their scalars read as plain, as Flux would
            // read them in our output.
            let mut quoted = |_: usize, pointer: &str| quotes.is_some_and(|quotes| quotes.is_quoted(pointer));
            results = subst::apply(variables, self.budget, &mut [item], &mut quoted).results;
        }
        Changed { applied, tally, results, patched, substituted, header_substituted }
    }

    /// Looks at one input item: one a previous run changed with the same patches and variables
    /// is only counted ([`Marks`] says when only its substitution is to run again, and when it is
    /// refused); one that no patch selects and whose text holds no `${`/`$$` is not built; the
    /// others are changed ([`Changer::change_input`]).
    fn look_at(&self, item: &mut Item) -> Found {
        // The mark is the fingerprint, then (on an item the patches renamed) its identity before.
        let mark = item.header_contains(ann::APPLIED).then(|| annotation(item.header(), ann::APPLIED)).flatten();
        let (marked, renamed_from) = match mark.map(|mark| mark.split_once(' ').unwrap_or((mark, ""))) {
            Some((marked, from)) => (Some(marked), Some(from).filter(|f| !f.is_empty()).map(str::to_string)),
            None => (None, None),
        };
        let renamed_from = renamed_from.as_deref();
        let marks = self.marks;
        let counted = |item: &mut Item| {
            let mut counted = self.patches.item_tally(false);
            self.patches.count_matches(item.header(), renamed_from, &mut counted);
            item.compact();
            counted
        };
        // Already changed by a previous run: counted, so its warnings are the first's.
        let count = |item: &mut Item| Found::Counted(counted(item));
        match marked {
            None => {}
            Some(mark) if mark == marks.both || mark == marks.substituted_header => return count(item),
            Some(mark) if mark == marks.patched => {
                // The patches' result, untouched by substitution: the variables may have changed.
                if self.variables.is_none() || !item.scan_text(subst::envsubst::may_substitute) {
                    return count(item);
                }
                let steps = Steps { patch: false, substitute: true, input: true };
                return Found::Changed(self.change_input(item, renamed_from, steps));
            }
            Some(mark) if mark == marks.substituted && !self.patches.may_touch(item.header(), None) => {
                return count(item)
            }
            Some(mark) => {
                let refusal = Box::new(refusal(item, mark));
                return Found::Refused(refusal, counted(item));
            }
        }
        let substituted = self.variables.is_some() && item.scan_text(subst::envsubst::may_substitute);
        if !substituted && !self.patches.may_touch(item.header(), None) {
            item.compact();
            return Found::Nothing;
        }
        Found::Changed(self.change_input(item, None, Steps { patch: true, substitute: true, input: true }))
    }

    /// [`Changer::change`] for an input item, then its marks, and back to its compact form.
    fn change_input(&self, item: &mut Item, renamed_from: Option<&str>, steps: Steps) -> Changed {
        item.change_knowing_quotes(|item, quotes| self.change_and_mark(item, renamed_from, steps, quotes))
    }

    fn change_and_mark(
        &self,
        item: &mut Value,
        renamed_from: Option<&str>,
        steps: Steps,
        quotes: &QuotedScalars,
    ) -> Changed {
        let mut changed = self.change(item, renamed_from, steps, Some(quotes));
        // Run again for its substitution only: the patches' change is in its text already.
        changed.patched |= !steps.patch;
        if changed.applied.deleted {
            // Deleted by a patch: out of the output, yet kept in the list like every input
            // item this function excludes, so kpt keeps its file and the next run sees it again.
            if !krm::is_local_config(item) {
                set_annotation(item, ann::LOCAL_CONFIG, "true");
                set_annotation(item, ann::EXCLUDED, "true");
            }
        } else if let Some(mark) = self.marks.for_item(&changed) {
            // A renamed item: a second run would not select it by its new identity as this one did.
            match changed.applied.renamed_from.as_deref().or(renamed_from) {
                Some(renamed_from) => set_annotation(item, ann::APPLIED, &format!("{mark} {renamed_from}")),
                None => set_annotation(item, ann::APPLIED, mark),
            }
        }
        changed
    }
}

/// The error for an item an earlier run changed with another configuration: its original is
/// gone, so neither applying this configuration on top nor leaving it as it is gives what a
/// render of the files as committed gives. The way there is to restore them.
fn refusal(item: &Item, mark: &str) -> Diagnostic {
    let header = item.header();
    let restore = match krm::item_location(header).0 {
        Some(path) => format!("git checkout -- {path}"),
        None => "e.g. git checkout the package's files".to_string(),
    };
    let message = format!(
        "{} {} holds the output of an earlier render with other patches or variables ({}: {mark}), not its \
         file as committed: rendering it again would apply a patch twice or keep values of the earlier \
         variables; restore the package's files as committed ({restore}) and render again",
        item.type_of().1,
        krm::name_of(header),
        ann::APPLIED,
    );
    Diagnostic::error(crate::diag::Kind::Render, message)
        .about(header)
        .at(crate::doc::FieldPath::root().key("metadata").key("annotations").key(ann::APPLIED))
}

/// FNV-1a over the parts: a short, stable fingerprint (not a security hash).
fn fingerprint(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}
