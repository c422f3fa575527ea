//! What a `flux-build` run builds, decided before anything is copied or run: where each
//! Kustomization's source comes from (a directory, or the ArtifactGenerator that makes its
//! ExternalArtifact), which sources are missing, which Kustomizations wait for a generator a
//! build may apply, and the messages that say so. The CLI copies and runs what this plans.

use super::generator::Generator;
use super::{Kustomization, Name, SourcePattern, SourceRef};
use crate::diag::{Diagnostic, Kind};
use crate::doc::Value;
use std::path::PathBuf;

/// The source `flux bootstrap` creates for the repository it commits the cluster's files to.
pub const BOOTSTRAP_SOURCE: (&str, &str, &str) = ("GitRepository", "flux-system", "flux-system");

/// The [`BOOTSTRAP_SOURCE`] as a reference.
pub fn bootstrap_source() -> SourceRef {
    SourceRef {
        kind: BOOTSTRAP_SOURCE.0.to_string(),
        namespace: BOOTSTRAP_SOURCE.1.to_string(),
        name: BOOTSTRAP_SOURCE.2.to_string(),
    }
}

/// Where sources are on this machine: the `--source` flags, and the checkout that stands for the
/// bootstrap source when no flag names it.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    pub given: Vec<(SourcePattern, PathBuf)>,
    pub checkout: Option<PathBuf>,
}

impl Sources {
    /// The directory given for `source`: the last `--source` that names it, else the checkout
    /// for the bootstrap source.
    pub fn dir(&self, source: &SourceRef) -> Option<&PathBuf> {
        let given = self.given.iter().rev().find(|(pattern, _)| pattern.matches(source)).map(|(_, dir)| dir);
        given.or(self.checkout.as_ref().filter(|_| *source == bootstrap_source()))
    }

    /// Whether a `--source` flag names `source`.
    pub fn names(&self, source: &SourceRef) -> bool {
        self.given.iter().any(|(pattern, _)| pattern.matches(source))
    }
}

/// Where a Kustomization's source comes from: a directory (`--source`, the checkout), or the
/// ArtifactGenerator that makes its ExternalArtifact, found when the build starts (a build
/// before may apply it).
#[derive(Clone, Debug)]
pub enum Origin {
    Dir(PathBuf),
    Generated,
}

/// The ArtifactGenerators among `objects`; one that cannot be read is an error result.
pub fn generators<'a>(objects: impl Iterator<Item = &'a Value>, results: &mut Vec<Diagnostic>) -> Vec<Generator> {
    let mut found = Vec::new();
    for object in objects.filter(|o| super::generator::is_generator(o)) {
        match Generator::read(object) {
            Ok(generator) => found.push(generator),
            Err(message) => results.push(Diagnostic::error(Kind::Render, message).about(object)),
        }
    }
    found
}

/// Where `kustomization`'s source comes from, or the sources missing for it: a directory given
/// for it wins; an ExternalArtifact without one is made by the first of `generators` that may
/// make it, when a directory is given (or a generator found) for each of that generator's
/// sources.
pub fn origin_of(
    sources: &Sources,
    kustomization: &Kustomization,
    generators: &[Generator],
) -> Result<Origin, Vec<SourceRef>> {
    if let Some(dir) = sources.dir(&kustomization.source) {
        return Ok(Origin::Dir(dir.clone()));
    }
    let mut missing = Vec::new();
    let mut seen = Vec::new();
    missing_for_generated(sources, &kustomization.source, generators, &mut Vec::new(), &mut seen, &mut missing);
    match missing.is_empty() {
        true => Ok(Origin::Generated),
        false => Err(missing),
    }
}

/// The sources no directory is given for that making the ExternalArtifact `source` needs: its
/// generator's sources, and theirs when one is itself an ExternalArtifact a generator makes
/// (`chain`: the ExternalArtifacts being made, so a generator fed by its own artifact ends;
/// `seen`: those looked at, each once, however many generators share it).
fn missing_for_generated(
    sources: &Sources,
    source: &SourceRef,
    generators: &[Generator],
    chain: &mut Vec<SourceRef>,
    seen: &mut Vec<SourceRef>,
    missing: &mut Vec<SourceRef>,
) {
    if chain.contains(source) || seen.contains(source) {
        // Made from itself (the build says so), or looked at already.
        return;
    }
    seen.push(source.clone());
    let generator = (source.kind == "ExternalArtifact")
        .then(|| generators.iter().find(|g| g.may_make(&source.namespace, &source.name)))
        .flatten();
    let Some(generator) = generator else {
        if !missing.contains(source) {
            missing.push(source.clone());
        }
        return;
    };
    chain.push(source.clone());
    for entry in generator.sources.iter().filter(|s| sources.dir(&s.source).is_none()) {
        missing_for_generated(sources, &entry.source, generators, chain, seen, missing);
    }
    chain.pop();
}

/// A `--source` that no Kustomization's sourceRef (nor a generator's source) matches is likely a
/// typo in its name: a warning each, listing the sources there are.
pub fn unused_sources(
    sources: &Sources,
    kustomizations: &[Kustomization],
    generators: &[Generator],
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for (pattern, dir) in &sources.given {
        let by_generator = generators.iter().flat_map(|g| &g.sources).any(|s| pattern.matches(&s.source));
        if !by_generator && !kustomizations.iter().any(|k| pattern.matches(&k.source)) {
            warnings.push(Diagnostic::warning(
                Kind::Render,
                format!(
                    "--source {}={}: no Kustomization to build has this source; the sources are {}",
                    pattern,
                    dir.display(),
                    source_list(kustomizations)
                ),
            ));
        }
    }
    warnings
}

/// The distinct sources of `kustomizations`, for a message.
pub fn source_list(kustomizations: &[Kustomization]) -> String {
    let mut sources: Vec<String> = kustomizations.iter().map(|k| k.source.to_string()).collect();
    sources.sort();
    sources.dedup();
    match sources.is_empty() {
        true => "none".to_string(),
        false => sources.join(", "),
    }
}

/// Whether making the ExternalArtifact `source` reads the checkout as the bootstrap source: one
/// of its generator's sources is it, or is an ExternalArtifact made so (`seen`: each once).
fn reads_checkout(sources: &Sources, source: &SourceRef, generators: &[Generator], seen: &mut Vec<SourceRef>) -> bool {
    if seen.contains(source) {
        return false;
    }
    seen.push(source.clone());
    let Some(generator) = generators.iter().find(|g| g.may_make(&source.namespace, &source.name)) else {
        return false;
    };
    generator.sources.iter().filter(|s| !sources.names(&s.source)).any(|s| {
        s.source == bootstrap_source()
            || (s.source.kind == "ExternalArtifact" && reads_checkout(sources, &s.source, generators, seen))
    })
}

/// The builds of the render's Kustomizations, decided up front.
#[derive(Debug, Default)]
pub struct Plan {
    /// Each Kustomization to build now (its index), in build order, with its origin.
    pub builds: Vec<(usize, Origin)>,
    /// Kustomizations whose ExternalArtifact's generator the render lacks (and what depends on
    /// them): built after the others, once a build may have applied the generator.
    pub deferred: Vec<usize>,
    /// Each missing source, and the Kustomizations (indices) that need it.
    pub missing: Vec<(String, Vec<usize>)>,
    /// Whether a build reads the checkout as the bootstrap source.
    pub checkout_used: bool,
}

/// Plans the builds of `kustomizations` in `order` (build order; one alone with
/// `--kustomization`, which waits for nothing).
pub fn plan(
    kustomizations: &[Kustomization],
    order: &[usize],
    sources: &Sources,
    generators: &[Generator],
    alone: bool,
) -> Plan {
    let mut plan = Plan::default();
    // An ExternalArtifact whose ArtifactGenerator the render lacks may be made by a generator a
    // build applies (a cluster waits for it to appear): such a Kustomization, and what depends on
    // it, is built after the others. With nothing else to build, it is missing as any source.
    let generated_later = |missing: &[SourceRef]| !alone && missing.iter().all(|s| s.kind == "ExternalArtifact");
    let buildable = order.iter().any(|&i| origin_of(sources, &kustomizations[i], generators).is_ok());
    for &i in order {
        let kustomization = &kustomizations[i];
        let waits = kustomization.depends_on.iter().any(|d| plan.deferred.iter().any(|&j| kustomizations[j].id == *d));
        if buildable && waits {
            plan.deferred.push(i);
            continue;
        }
        match origin_of(sources, kustomization, generators) {
            Err(missing) if buildable && generated_later(&missing) => plan.deferred.push(i),
            Ok(origin) => {
                plan.checkout_used |= match &origin {
                    Origin::Dir(_) => !sources.names(&kustomization.source),
                    Origin::Generated => reads_checkout(sources, &kustomization.source, generators, &mut Vec::new()),
                };
                plan.builds.push((i, origin));
            }
            Err(missing) => {
                for source in missing {
                    let source = source.to_string();
                    match plan.missing.iter_mut().find(|(s, _)| *s == source) {
                        Some((_, needed_by)) => needed_by.push(i),
                        None => plan.missing.push((source, vec![i])),
                    }
                }
            }
        }
    }
    plan
}

impl Plan {
    /// Each missing source with the Kustomizations that need it: `SOURCE (Kustomization A, B)`.
    pub fn missing_list(&self, kustomizations: &[Kustomization]) -> Vec<String> {
        self.missing
            .iter()
            .map(|(source, needed_by)| {
                let names: Vec<String> = needed_by.iter().map(|&i| kustomizations[i].id.to_string()).collect();
                format!("{source} (Kustomization {})", names.join(", "))
            })
            .collect()
    }

    /// Why the run stops when sources are missing and `--skip-missing-sources` is not given.
    pub fn missing_message(&self, kustomizations: &[Kustomization]) -> String {
        let flags: Vec<String> = self.missing.iter().map(|(source, _)| format!("--source {source}=DIR")).collect();
        let generated = match self.missing.iter().any(|(source, _)| source.starts_with("ExternalArtifact/")) {
            true => " (or add to the inputs the ArtifactGenerator that makes the ExternalArtifact)",
            false => "",
        };
        format!(
            "no directory is given for the sources {}: give {}{generated}, or --skip-missing-sources to build the rest",
            self.missing_list(kustomizations).join("; "),
            flags.join(" ")
        )
    }
}

/// The error of a Kustomization whose sources have no directory, found once the run has started
/// (a warning with `--skip-missing-sources`).
pub fn not_built(kustomization: &Kustomization, missing: &[SourceRef], skip_missing_sources: bool) -> Diagnostic {
    let generated = match missing.iter().any(|s| s.kind == "ExternalArtifact") {
        true => " (no ArtifactGenerator in the inputs or applied by a build makes the ExternalArtifact)",
        false => "",
    };
    let missing: Vec<String> = missing.iter().map(|s| s.to_string()).collect();
    let message = format!("not built: no --source for {}{generated}", missing.join(", "));
    let flags: Vec<String> = missing.iter().map(|s| format!("--source {s}=DIR")).collect();
    match skip_missing_sources {
        true => Diagnostic::warning(Kind::Render, message).about(&kustomization.object),
        false => kustomization.error(format!("{message}: give {}, or --skip-missing-sources", flags.join(" "))),
    }
}

/// The info line that says the checkout is the bootstrap source (`shown`: how to name it).
pub fn checkout_info(shown: &str) -> String {
    let (kind, namespace, name) = BOOTSTRAP_SOURCE;
    format!(
        "source {} is the git work tree {shown} (the checkout; flux bootstrap makes the repository it commits to this \
         source): give --source {kind}/{namespace}/{name}=DIR to build another",
        bootstrap_source()
    )
}

/// Why the run stops when `--kustomization` names none the render holds and the builds that
/// might give it cannot all run.
pub fn unknown_kustomization(flag: &str, kustomizations: &[Kustomization]) -> String {
    let names: Vec<String> = kustomizations.iter().map(|k| k.id.to_string()).collect();
    format!(
        "--kustomization {flag}: the render holds no such Flux Kustomization; it holds {} (with a --source for each \
         of their sources, the Kustomizations their builds give are looked in too)",
        names.join(", ")
    )
}

/// Why the run ends when `--kustomization` names none of the Kustomizations found.
pub fn kustomization_not_found(flag: &str, known: &[Name]) -> String {
    let mut names: Vec<String> = known.iter().map(Name::to_string).collect();
    names.sort();
    let held = match names.is_empty() {
        true => "there are none".to_string(),
        false => format!("there are {}", names.join(", ")),
    };
    format!(
        "--kustomization {flag}: neither the render nor the Kustomizations built from it hold such a Flux \
         Kustomization; {held}"
    )
}
