//! The transformers: kustomize patches, then Flux post-build substitution, on every item but
//! configuration kinds. Both change items that already exist (the other steps make new ones), so
//! they run as one pass over the items, in batches that two threads share, with the idempotency
//! mark that lets a second run leave alone what the first one changed.

use crate::diag::Diagnostic;
use crate::doc::Value;
use crate::krm::{self, annotation, annotations as ann, remove_annotation, set_annotation, Item, QuotedScalars};
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
/// Idempotency for input items: a change that a second run would repeat (a JSON 6902
/// `add` to the end of a list, a `$${` escape…) marks the item `fn.blueprint.dev/applied:
/// <fingerprint of the patches and variables>`, and a marked item with the current fingerprint
/// is not patched or substituted again. Idempotent changes leave no mark. Generated items are
/// made afresh every run and never need one.
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
    if patches.is_empty() && variables.is_none() {
        return Report::default();
    }
    let fingerprint = fingerprint(&[&patches.fingerprint, variables.as_ref().map_or("", |v| v.fingerprint.as_str())]);
    let mut tally = patches.tally();
    let mut subst_results = Vec::new();
    let changer = Changer {
        patches: &patches,
        variables: variables.as_ref(),
        budget: &render.budget,
        exhausted: std::sync::atomic::AtomicBool::new(false),
        fingerprint: &fingerprint,
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
                Found::Nothing => {}
            }
        }
    }
    let mut generated = std::mem::take(&mut render.generated);
    generated.retain_mut(|generated| {
        let changed = changer.change(&mut generated.item, None, generated.substitute, None);
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
    render.results.extend(patch_results);
    render.results.extend(subst_results);
    Report { patches: patch_report, substitution: variables.as_ref().map(subst::Variables::report) }
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
}

/// What changing one item found, to count in the items' order.
struct Changed {
    applied: patch::Applied,
    tally: patch::Tally,
    results: Vec<Diagnostic>,
}

/// What every item's change shares: shared by the threads that change items.
struct Changer<'a> {
    patches: &'a patch::Patches,
    variables: Option<&'a subst::Variables>,
    budget: &'a Budget,
    /// Set once the budget ran out on an item: later items are counted, not patched.
    exhausted: std::sync::atomic::AtomicBool,
    fingerprint: &'a str,
}

impl Changer<'_> {
    /// Patches and substitutes one item (`quotes`: which of its scalars were quoted where it was
    /// read; generated items were not read); `substitute: false` leaves substitution off it.
    fn change(
        &self,
        item: &mut Value,
        renamed_from: Option<&str>,
        substitute: bool,
        quotes: Option<&QuotedScalars>,
    ) -> Changed {
        use std::sync::atomic::Ordering::Relaxed;
        let mut tally = self.patches.item_tally(self.exhausted.load(Relaxed));
        let mut applied = self.patches.apply_to(item, renamed_from, &mut tally, self.budget);
        if tally.is_exhausted() {
            self.exhausted.store(true, Relaxed);
        }
        let mut results = Vec::new();
        if let (Some(variables), true, false) = (self.variables, substitute, applied.deleted) {
            // Asked only for a substituted scalar whose new text would not read as a string.
            // Generated items have no source text: their scalars read as plain, as Flux would
            // read them in our output.
            let mut quoted = |_: usize, pointer: &str| quotes.is_some_and(|quotes| quotes.is_quoted(pointer));
            let substituted = subst::apply(variables, self.budget, &mut [item], &mut quoted);
            results = substituted.results;
            applied.repeatable |= substituted.repeatable.into_iter().any(|r| r);
        }
        Changed { applied, tally, results }
    }

    /// Looks at one input item: one a previous run patched with the same patches and variables is
    /// only counted; one that no patch selects and whose text holds no `${`/`$$` is not built;
    /// the others are changed ([`Changer::change_input`]).
    fn look_at(&self, item: &mut Item) -> Found {
        // The mark is the fingerprint, then (on an item the patches renamed) its identity before.
        let mark = item.header_contains(ann::APPLIED).then(|| annotation(item.header(), ann::APPLIED)).flatten();
        let (marked, renamed_from) = match mark.map(|mark| mark.split_once(' ').unwrap_or((mark, ""))) {
            Some((marked, from)) => {
                (Some(marked == self.fingerprint), Some(from).filter(|f| !f.is_empty()).map(str::to_string))
            }
            None => (None, None),
        };
        match marked {
            Some(true) => {
                // Already patched by a previous run: counted, so its warnings are the first's.
                let mut counted = self.patches.item_tally(false);
                self.patches.count_matches(item.header(), renamed_from.as_deref(), &mut counted);
                item.compact();
                return Found::Counted(counted);
            }
            Some(false) => {
                remove_annotation(item.header_mut(), ann::APPLIED);
            }
            None => {}
        }
        let substituted = self.variables.is_some() && item.scan_text(subst::envsubst::may_substitute);
        if !substituted && !self.patches.may_touch(item.header(), renamed_from.as_deref()) {
            item.compact();
            return Found::Nothing;
        }
        Found::Changed(self.change_input(item, renamed_from.as_deref()))
    }

    /// [`Changer::change`] for an input item, then its marks, and back to its compact form.
    fn change_input(&self, item: &mut Item, renamed_from: Option<&str>) -> Changed {
        item.change_knowing_quotes(|item, quotes| self.change_and_mark(item, renamed_from, quotes))
    }

    fn change_and_mark(&self, item: &mut Value, renamed_from: Option<&str>, quotes: &QuotedScalars) -> Changed {
        let changed = self.change(item, renamed_from, true, Some(quotes));
        let fingerprint = self.fingerprint;
        if changed.applied.deleted {
            // Deleted by a patch: out of the output, yet kept in the list like every input
            // item this function excludes, so kpt keeps its file and the next run sees it again.
            if !krm::is_local_config(item) {
                set_annotation(item, ann::LOCAL_CONFIG, "true");
                set_annotation(item, ann::EXCLUDED, "true");
            }
        } else if let Some(renamed_from) = &changed.applied.renamed_from {
            // A second run would not select it by its new identity as this one did.
            set_annotation(item, ann::APPLIED, &format!("{fingerprint} {renamed_from}"));
        } else if changed.applied.repeatable {
            set_annotation(item, ann::APPLIED, fingerprint);
        }
        changed
    }
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
