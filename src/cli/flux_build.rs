//! `render-blueprint flux-build`: render, then build every Flux Kustomization of the result as
//! kustomize-controller would, with real kustomize, in a temporary copy of each source. The
//! decisions are in [`crate::fluxbuild`]; this file does the I/O: copying sources, walking the
//! directory for the generated kustomization file, running kustomize, writing the objects.

use super::input::from_paths;
use super::output::{report_results, write_stream, write_with};
use super::{Exit, FluxBuildArgs};
use crate::diag::{Diagnostic, Kind, Severity};
use crate::doc::{read_yaml_documents, read_yaml_documents_with_starts, to_yaml, Value};
use crate::fluxbuild::ignore::Matcher;
use crate::fluxbuild::plan::{self, Origin, Sources};
use crate::fluxbuild::{self, ArtifactRules, GeneratedResources, Kustomization, Name, SourcePattern};
use crate::krm::{Item, StreamItems};
use crate::limits::{Budget, Limits};
use crate::package::{read_regular_file, DiskFiles};
use crate::pipeline;
use std::path::{Path, PathBuf};
use std::process::Command;

mod artifact;

/// The kustomization file names kustomize recognises, in the order it looks for them.
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// How to build: the `flux-build` flags `diff --flux` shares.
pub(super) struct Options {
    /// `--source` flags, and the checkout: the `flux-system` GitRepository when no `--source`
    /// names it, as `flux bootstrap` makes the repository it commits to that source.
    pub(super) sources: Sources,
    skip_missing_sources: bool,
    /// `--kustomization`: the flag as given, and its namespace and name.
    only: Option<(String, Option<String>, String)>,
    strict_substitutions: bool,
    /// `--show-secrets`: kustomize's messages are printed with Secret values left in.
    pub(super) show_secrets: bool,
    /// `--max-builds`: a few hundred bytes of package can declare hundreds of Kustomizations, each
    /// a kustomize run, so their number is the operator's to bound.
    pub(super) max_builds: usize,
    /// How the checkout is named in the info line (diff's revision side: a temporary copy).
    pub(super) checkout_shown: Option<String>,
    /// `--max-nesting`: how many rounds of Kustomizations that builds give are built.
    pub(super) max_nesting: usize,
}

/// `--max-nesting`' default: deeper than the Kustomizations of real repositories nest.
pub(super) const DEFAULT_MAX_NESTING: usize = 10;

/// The top of the git work tree `path` is in (the nearest directory above it holding `.git`).
pub(super) fn work_tree_of(path: &Path) -> Option<PathBuf> {
    let real = path.canonicalize().ok()?;
    real.ancestors().find(|dir| dir.join(".git").exists()).map(Path::to_path_buf)
}

/// `--max-builds`' default: far more Kustomizations than a real cluster's render holds.
pub(super) const DEFAULT_MAX_BUILDS: usize = 200;

impl Options {
    pub(super) fn new(
        sources: &[String],
        skip_missing_sources: bool,
        kustomization: Option<&str>,
        strict_substitutions: bool,
    ) -> Result<Options, Exit> {
        let mut parsed = Vec::new();
        for flag in sources {
            let (pattern, dir) = SourcePattern::parse(flag).map_err(Exit::Unusable)?;
            parsed.push((pattern, PathBuf::from(dir)));
        }
        let only = match kustomization {
            Some(flag) => {
                let (namespace, name) = parse_name(flag).map_err(Exit::Unusable)?;
                Some((flag.to_string(), namespace, name))
            }
            None => None,
        };
        Ok(Options {
            sources: Sources { given: parsed, checkout: None },
            skip_missing_sources,
            only,
            strict_substitutions,
            show_secrets: false,
            max_builds: DEFAULT_MAX_BUILDS,
            checkout_shown: None,
            max_nesting: DEFAULT_MAX_NESTING,
        })
    }
}

pub(super) fn run(args: FluxBuildArgs, root: Option<PathBuf>, limits: Limits) -> Exit {
    super::cleanup::on_signals_remove_temporaries();
    let mut options = match Options::new(
        &args.sources,
        args.skip_missing_sources,
        args.kustomization.as_deref(),
        args.strict_substitutions,
    ) {
        Ok(options) => options,
        Err(exit) => return exit,
    };
    options.show_secrets = args.show_secrets;
    options.max_builds = args.max_builds;
    options.sources.checkout = args.input.paths.first().and_then(|path| work_tree_of(path));
    options.max_nesting = args.max_nesting;
    let (input, files) = match from_paths(&args.input, root, limits) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let output = pipeline::render(input, &files);
    report_results(&output.results, Some(&files));
    let Some(rendered) = output.items else {
        return Exit::Errors;
    };
    // One failing Kustomization does not hide the others: the controller reconciles each on its
    // own, so what built is printed and the failures are error results (exit 1).
    let (mut built, failed) = match build_each(&options, &rendered, &files, limits) {
        Ok(built) => built,
        Err(exit) => return exit,
    };
    report_results(&fluxbuild::applied_twice(&built), None);
    if !args.show_secrets {
        for (_, objects) in &mut built {
            fluxbuild::redact_secrets(objects);
        }
    }
    let written = match &args.output_dir {
        Some(dir) => write_files(dir, built),
        None => write_with(|out| write_stream(out, built.into_iter().flat_map(|(_, objects)| objects))),
    };
    match written {
        Exit::Ok if failed => Exit::Errors,
        exit => exit,
    }
}

/// Builds the Flux Kustomizations of a render, all or nothing: `diff --flux` compares whole
/// builds, so a failure is the exit.
pub(super) fn build_all(
    options: &Options,
    rendered: &[Item],
    files: &DiskFiles,
    limits: Limits,
) -> Result<Built, Exit> {
    match build_each(options, rendered, files, limits)? {
        (_, true) => Err(Exit::Errors),
        (built, false) => Ok(built),
    }
}

/// The objects each Kustomization that built would apply, in build order.
pub(super) type Built = Vec<(Name, Vec<Item>)>;

/// Builds the Flux Kustomizations of a render: the objects each that built would apply, in build
/// order, and whether any failed. Each is built on its own, as the controller reconciles each; one
/// that depends on a failed one is not built (the controller waits for its dependencies to be
/// ready). Problems are reported here; `Err` is how the command ends when nothing can be built.
pub(super) fn build_each(
    options: &Options,
    rendered: &[Item],
    files: &DiskFiles,
    limits: Limits,
) -> Result<(Built, bool), Exit> {
    let (mut kustomizations, mut results) = fluxbuild::kustomizations(rendered);
    let wanted = |id: &Name| {
        options.only.as_ref().is_none_or(|(_, namespace, name)| {
            id.name == *name && namespace.as_ref().is_none_or(|ns| *ns == id.namespace)
        })
    };
    // --kustomization names one the render holds: it alone is built, as `flux build
    // kustomization` builds one. One the render does not hold may come out of a build (a
    // tenant's Kustomization): everything is built then, and its objects alone are printed.
    let only_in_render = options.only.is_some() && kustomizations.iter().any(|k| wanted(&k.id));
    if only_in_render {
        kustomizations.retain(|k| wanted(&k.id));
    }
    let only = only_in_render.then_some(());
    // A --source that no Kustomization's sourceRef matches is likely a typo in its name (with
    // --kustomization, the other sources are expected).
    let rendered_generators = plan::generators(rendered.iter().map(|item| &**item), &mut results);
    if options.only.is_none() {
        results.extend(plan::unused_sources(&options.sources, &kustomizations, &rendered_generators));
    }
    let order = match only {
        // One Kustomization is built on its own, as `flux build kustomization` builds one.
        Some(_) => (0..kustomizations.len()).collect(),
        None => {
            let (order, problems) = fluxbuild::build_order(&kustomizations, &|_| false);
            results.extend(problems);
            order
        }
    };
    // Left out for a cycle or a missing dependency: what depends on them is not built either.
    let blocked: Vec<Name> =
        kustomizations.iter().enumerate().filter(|(i, _)| !order.contains(i)).map(|(_, k)| k.id.clone()).collect();
    let planned = plan::plan(&kustomizations, &order, &options.sources, &rendered_generators, only.is_some());
    if !planned.missing.is_empty() {
        if let (Some((flag, _, _)), false) = (&options.only, only_in_render) {
            // A name the render does not hold, and the builds that might give it cannot all run:
            // most likely a typo.
            return Err(Exit::Unusable(plan::unknown_kustomization(flag, &kustomizations)));
        }
        if !options.skip_missing_sources {
            return Err(Exit::Unusable(planned.missing_message(&kustomizations)));
        }
        for entry in planned.missing_list(&kustomizations) {
            results.push(Diagnostic::warning(Kind::Render, format!("not built: no --source for {entry}")));
        }
    }
    if let (true, Some(checkout)) = (planned.checkout_used, &options.sources.checkout) {
        let shown = options.checkout_shown.clone().unwrap_or_else(|| checkout.display().to_string());
        let info = Diagnostic::new(Severity::Info, Kind::Render, plan::checkout_info(&shown));
        super::output::eprint_line(&info.to_string());
    }
    let plan::Plan { builds: plan, deferred, .. } = planned;
    if plan.len() > options.max_builds {
        return Err(Exit::Unusable(format!(
            "the render holds {} Kustomizations to build, more than --max-builds ({}): raise --max-builds, or build \
             one with --kustomization",
            plan.len(),
            options.max_builds
        )));
    }
    let tool = match plan.is_empty() {
        true => Vec::new(),
        false => kustomize_tool().ok_or_else(|| Exit::Unusable(NO_KUSTOMIZE.to_string()))?,
    };
    let mut run = Run {
        options,
        rendered,
        limits,
        tool,
        budget: Budget::new(limits),
        copies: Copies::default(),
        built: Vec::new(),
        failed: blocked,
        results,
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        planned: plan.len(),
        started: 0,
        known: kustomizations.iter().map(|k| k.id.clone()).collect(),
        waiting: deferred.iter().map(|&i| kustomizations[i].id.clone()).collect(),
        postponed: Vec::new(),
    };
    for (i, origin) in plan {
        run.build(&kustomizations[i], &origin);
    }
    // Kustomizations a build gives are applied, and then built, by the controller: with the
    // parent's patches, namespace and substitution already in them. Not when --kustomization
    // names one of the render's, which is built alone, as `flux build kustomization` builds one.
    if only.is_none() {
        run.nested();
        if !deferred.is_empty() {
            run.deferred(&kustomizations, &deferred);
            run.nested();
        }
    }
    let Run { mut built, results, known, .. } = run;
    report_results(&results, Some(files));
    let failed = results.iter().any(Diagnostic::is_error);
    if let (Some((flag, _, _)), false) = (&options.only, only_in_render) {
        if !known.iter().any(&wanted) {
            return Err(Exit::Unusable(plan::kustomization_not_found(flag, &known)));
        }
        built.retain(|(id, _)| wanted(id));
    }
    Ok((built, failed))
}

/// The state of one `flux-build` run: what is built, what failed, the results so far.
struct Run<'a> {
    options: &'a Options,
    rendered: &'a [Item],
    limits: Limits,
    tool: Vec<String>,
    budget: Budget,
    copies: Copies,
    built: Built,
    failed: Vec<Name>,
    results: Vec<Diagnostic>,
    /// Whether stderr is a terminal, to show progress on.
    progress: bool,
    /// Builds planned so far, and started.
    planned: usize,
    started: usize,
    /// Every Kustomization found so far: the render's and those builds gave.
    known: Vec<Name>,
    /// The render's Kustomizations that wait for an ArtifactGenerator a build may apply, until
    /// they are built; and the builds a build gave that depend on one of them, held till then.
    waiting: Vec<Name>,
    postponed: Vec<(Kustomization, Origin)>,
}

/// The objects a cluster holds at this point of the run: the render's and those every build so
/// far applied (sources, generators, variables are looked for among them).
fn applied<'a>(rendered: &'a [Item], built: &'a Built) -> impl Iterator<Item = &'a Value> + Clone {
    rendered.iter().map(|item| &**item).chain(built.iter().flat_map(|(_, items)| items.iter().map(|i| &**i)))
}

impl Run<'_> {
    /// Builds one Kustomization from its source, as the controller reconciles it: not when one it
    /// depends on failed; its objects post-built, or its failure an error result.
    fn build(&mut self, kustomization: &Kustomization, origin: &Origin) {
        // A cluster waits for a dependency that waits for its generator.
        if kustomization.depends_on.iter().any(|d| self.waiting.contains(d)) {
            self.postponed.push((kustomization.clone(), origin.clone()));
            return;
        }
        self.started += 1;
        if self.progress {
            super::output::eprint_line(&format!(
                "[{}/{}] building Kustomization {} (source {}, path {:?})",
                self.started, self.planned, kustomization.id, kustomization.source, kustomization.path
            ));
        }
        if let Some(dependency) = kustomization.depends_on.iter().find(|d| self.failed.contains(d)) {
            self.results.push(
                Diagnostic::warning(
                    Kind::Render,
                    format!("not built: it depends on Kustomization {dependency}, which failed"),
                )
                .about(&kustomization.object),
            );
            self.failed.push(kustomization.id.clone());
            return;
        }
        let (limits, show_secrets) = (self.limits, self.options.show_secrets);
        let copy = match origin {
            Origin::Dir(dir) => {
                let rules = fluxbuild::artifact_rules(applied(self.rendered, &self.built), &kustomization.source);
                self.copies.copy_of(dir, &rules, limits)
            }
            Origin::Generated => self.generated(kustomization),
        };
        let tool = &self.tool;
        let built_objects = copy.and_then(|copy| build(kustomization, &copy, tool, limits, show_secrets));
        let mut objects = match built_objects {
            Ok(objects) => objects,
            Err(message) => {
                let message = format!("source {}, path {:?}: {message}", kustomization.source, kustomization.path);
                self.results.push(kustomization.error(message));
                self.failed.push(kustomization.id.clone());
                return;
            }
        };
        let pool = applied(self.rendered, &self.built);
        let post_built = match fluxbuild::variables(kustomization, pool, self.options.strict_substitutions) {
            Ok(variables) => fluxbuild::post_build(kustomization, &mut objects, variables.as_ref(), &self.budget),
            Err(message) => vec![kustomization.error(message)],
        };
        // The controller applies nothing of a Kustomization whose post-build failed.
        if post_built.iter().any(Diagnostic::is_error) {
            self.failed.push(kustomization.id.clone());
        } else {
            self.built.push((kustomization.id.clone(), objects));
        }
        self.results.extend(post_built);
    }

    /// The ExternalArtifact of `kustomization` as source-watcher makes it, from the first
    /// ArtifactGenerator in its namespace (the render's, then those builds so far applied) that
    /// makes it: each of the generator's sources laid out as its own artifact, under its alias,
    /// the path pattern expanded over them, then the artifact's copy operations. Each artifact is
    /// made once per run.
    fn generated(&mut self, kustomization: &Kustomization) -> Result<PathBuf, String> {
        // A failure is remembered for this build only: a build since may have applied what was
        // missing.
        self.copies.external.retain(|(_, made)| made.is_ok());
        self.external_artifact(&kustomization.source, &mut Vec::new())
    }

    /// The ExternalArtifact `source`, made by its generator; a generator source that is itself
    /// an ExternalArtifact with no `--source` is made first (`chain`: those being made).
    fn external_artifact(
        &mut self,
        source: &fluxbuild::SourceRef,
        chain: &mut Vec<fluxbuild::SourceRef>,
    ) -> Result<PathBuf, String> {
        if chain.contains(source) {
            let names: Vec<String> = chain.iter().chain([source]).map(|s| s.to_string()).collect();
            return Err(format!(
                "the ExternalArtifacts are made from each other: {}: give one of them with --source",
                names.join(" <- ")
            ));
        }
        if let Some((_, made)) = self.copies.external.iter().find(|(s, _)| s == source) {
            return made.clone();
        }
        let made = self.make_external_artifact(source, chain);
        self.copies.external.push((source.clone(), made.clone()));
        made
    }

    fn make_external_artifact(
        &mut self,
        source: &fluxbuild::SourceRef,
        chain: &mut Vec<fluxbuild::SourceRef>,
    ) -> Result<PathBuf, String> {
        let objects: Vec<&Value> = applied(self.rendered, &self.built).collect();
        let mut problems = Vec::new();
        let found = plan::generators(objects.iter().copied(), &mut problems);
        // A generator that cannot be read is an error result once (the render's were reported
        // when the run began); the others may still make the artifact.
        for problem in problems {
            if !self.results.iter().any(|r| r.message == problem.message) {
                self.results.push(problem);
            }
        }
        // Each source's artifact rules, read before a chained artifact is made (which may build).
        let makers: Vec<(&fluxbuild::generator::Generator, Vec<ArtifactRules>)> = found
            .iter()
            .filter(|g| g.may_make(&source.namespace, &source.name))
            .map(|g| {
                (g, g.sources.iter().map(|e| fluxbuild::artifact_rules(objects.iter().copied(), &e.source)).collect())
            })
            .collect();
        for (generator, rules) in makers {
            let mut local: Vec<(String, PathBuf)> = Vec::new();
            for (entry, rules) in generator.sources.iter().zip(&rules) {
                let given = self.options.sources.dir(&entry.source);
                if given.is_none() && entry.source.kind == "ExternalArtifact" {
                    chain.push(source.clone());
                    let made = self.external_artifact(&entry.source, chain);
                    chain.pop();
                    let made = made
                        .map_err(|err| format!("ArtifactGenerator {}, source @{}: {err}", generator.id, entry.alias))?;
                    local.push((entry.alias.clone(), made));
                    continue;
                }
                let Some(dir) = given else {
                    return Err(format!(
                        "ArtifactGenerator {} lists the source {} as @{}, and no directory is given for it: give --source {}=DIR",
                        generator.id, entry.source, entry.alias, entry.source
                    ));
                };
                let copy = self
                    .copies
                    .copy_of(dir, rules, self.limits)
                    .map_err(|err| format!("ArtifactGenerator {}, source @{}: {err}", generator.id, entry.alias))?;
                local.push((entry.alias.clone(), copy));
            }
            let dirs = match generator.pattern_alias()? {
                Some((alias, _)) => {
                    let Some((_, root)) = local.iter().find(|(a, _)| a == alias) else {
                        return Err(format!(
                            "ArtifactGenerator {}: pathPattern names the source alias {alias}, which spec.sources does not list: add it, or change pathPattern",
                            generator.id
                        ));
                    };
                    artifact::directories(root)?
                }
                None => Vec::new(),
            };
            let requests = generator.requests(&dirs)?;
            let Some(request) = requests.iter().find(|r| r.name == source.name) else { continue };
            return self
                .copies
                .artifact(&generator.id, request, &local, self.limits)
                .map_err(|err| format!("ArtifactGenerator {}, artifact {}: {err}", generator.id, request.name));
        }
        Err(format!(
            "no ArtifactGenerator in namespace {} makes the ExternalArtifact {}: add the generator to the inputs, or give --source {source}=DIR",
            source.namespace, source.name
        ))
    }

    /// Builds the Kustomizations the builds so far gave, round after round, until a round gives
    /// none new, at most `--max-nesting` rounds deep: each round in `dependsOn` order (a
    /// dependency may be one built before), each from its source as the first round finds it;
    /// problems are results, as the run has started.
    fn nested(&mut self) {
        let mut from = 0;
        for round in 1.. {
            let produced: Vec<Item> =
                self.built[from..].iter().flat_map(|(_, objects)| objects.iter().cloned()).collect();
            from = self.built.len();
            let (mut found, errors) = fluxbuild::kustomizations(&produced);
            self.results.extend(errors);
            let mut seen = std::collections::HashSet::new();
            found.retain(|k| !self.known.contains(&k.id) && seen.insert(k.id.clone()));
            if found.is_empty() {
                return;
            }
            if round > self.options.max_nesting {
                let names: Vec<String> = found.iter().map(|k| k.id.to_string()).collect();
                self.results.push(Diagnostic::error(
                    Kind::Render,
                    format!(
                        "not built: Kustomizations {} come out of builds nested more than --max-nesting ({}) \
                         deep: raise --max-nesting if the nesting is meant",
                        names.join(", "),
                        self.options.max_nesting
                    ),
                ));
                return;
            }
            let known = &self.known;
            let (order, problems) = fluxbuild::build_order(&found, &|d| known.contains(d));
            self.results.extend(problems);
            self.known.extend(found.iter().map(|k| k.id.clone()));
            self.planned += found.len();
            for i in order {
                self.build_found(&found[i]);
            }
        }
    }

    /// The render's Kustomizations whose ExternalArtifact's generator none of the render's
    /// objects is, once everything else is built: each built from a generator a build applied,
    /// or missing its source.
    fn deferred(&mut self, kustomizations: &[Kustomization], deferred: &[usize]) {
        self.planned += deferred.len();
        for &i in deferred {
            let kustomization = &kustomizations[i];
            self.build_found(kustomization);
            self.waiting.retain(|id| *id != kustomization.id);
        }
        self.waiting.clear();
        for (kustomization, origin) in std::mem::take(&mut self.postponed) {
            self.build(&kustomization, &origin);
        }
    }

    /// A Kustomization found once the run has started (a build gave it, or it waited for its
    /// generator): built from its source as the objects applied so far give it, unless
    /// `--max-builds` is reached.
    fn build_found(&mut self, kustomization: &Kustomization) {
        if self.started >= self.options.max_builds {
            self.results.push(kustomization.error(format!(
                "not built: more than --max-builds ({}) Kustomizations to build: raise --max-builds",
                self.options.max_builds
            )));
            self.failed.push(kustomization.id.clone());
            return;
        }
        let known_generators = plan::generators(applied(self.rendered, &self.built), &mut Vec::new());
        match plan::origin_of(&self.options.sources, kustomization, &known_generators) {
            Ok(origin) => self.build(kustomization, &origin),
            Err(sources) => self.not_built(kustomization, &sources),
        }
    }

    /// A Kustomization whose sources have no directory, found once the run has started.
    fn not_built(&mut self, kustomization: &Kustomization, sources: &[fluxbuild::SourceRef]) {
        self.results.push(plan::not_built(kustomization, sources, self.options.skip_missing_sources));
        self.failed.push(kustomization.id.clone());
    }
}

/// `NAMESPACE/NAME` or `NAME`.
fn parse_name(text: &str) -> Result<(Option<String>, String), String> {
    match text.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((Some(namespace.to_string()), name.to_string()))
        }
        None if !text.is_empty() => Ok((None, text.to_string())),
        _ => Err(format!("--kustomization {text:?}: write NAMESPACE/NAME or NAME")),
    }
}

const NO_KUSTOMIZE: &str = "flux-build runs kustomize, and neither `kustomize` nor `kubectl` is on PATH: install \
                            kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) or kubectl, which \
                            includes it as `kubectl kustomize`";

/// The kustomize to run: `kustomize build`, else `kubectl kustomize`.
fn kustomize_tool() -> Option<Vec<String>> {
    let on_path = |name: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
    };
    if on_path("kustomize") {
        Some(vec!["kustomize".into(), "build".into()])
    } else if on_path("kubectl") {
        Some(vec!["kubectl".into(), "kustomize".into()])
    } else {
        None
    }
}

/// The temporary copies of the sources. Each source is copied once per run, however many
/// Kustomizations it serves (a copy per build made a few hundred bytes of package cost a copy of
/// the source each); a build puts back the one file it writes, so each sees the source as it is.
#[derive(Default)]
struct Copies {
    /// Made with the first copy; the guard removes it on SIGINT and SIGTERM.
    work: Option<(tempfile::TempDir, super::cleanup::Temporary)>,
    /// Each source directory as given, the rules its artifact was made by, and its copy.
    copied: Vec<(PathBuf, ArtifactRules, PathBuf)>,
    /// Each ExternalArtifact made: its generator, its name, its directory.
    artifacts: Vec<(Name, String, PathBuf)>,
    /// Each ExternalArtifact source asked for, and what making it gave: a chain of generators
    /// that share their sources (a diamond) makes each once.
    external: Vec<(fluxbuild::SourceRef, Result<PathBuf, String>)>,
}

impl Copies {
    fn work(&mut self) -> Result<PathBuf, String> {
        match &self.work {
            Some((work, _)) => Ok(work.path().to_path_buf()),
            None => {
                let (work, guard) = super::cleanup::temp_dir("render-blueprint-flux-")?;
                let path = work.path().to_path_buf();
                self.work = Some((work, guard));
                Ok(path)
            }
        }
    }

    /// The ExternalArtifact `request` of `generator`, made from its sources' copies once.
    fn artifact(
        &mut self,
        generator: &Name,
        request: &fluxbuild::generator::OutputArtifact,
        sources: &[(String, PathBuf)],
        limits: Limits,
    ) -> Result<PathBuf, String> {
        if let Some((_, _, dir)) = self.artifacts.iter().find(|(g, n, _)| g == generator && *n == request.name) {
            return Ok(dir.clone());
        }
        let work = self.work()?;
        let into = work.join(format!("artifact-{}", self.artifacts.len()));
        let staging = work.join(format!("staging-{}", self.artifacts.len()));
        if let Err(message) = artifact::make(request, sources, &staging, &into, limits) {
            let _ = std::fs::remove_dir_all(&staging);
            let _ = std::fs::remove_dir_all(&into);
            return Err(message);
        }
        self.artifacts.push((generator.clone(), request.name.clone(), into.clone()));
        Ok(into)
    }

    fn copy_of(&mut self, source: &Path, rules: &ArtifactRules, limits: Limits) -> Result<PathBuf, String> {
        if let Some((_, _, copy)) = self.copied.iter().find(|(dir, r, _)| dir == source && r == rules) {
            return Ok(copy.clone());
        }
        if !source.is_dir() {
            return Err(format!("the source directory {} does not exist", source.display()));
        }
        let work = self.work()?;
        let copy = work.join(format!("source-{}", self.copied.len()));
        if let Err(message) = copy_artifact(source, &copy, rules, limits) {
            let _ = std::fs::remove_dir_all(&copy);
            return Err(message);
        }
        self.copied.push((source.to_path_buf(), rules.clone(), copy.clone()));
        Ok(copy)
    }
}

/// The kustomization file a build wrote, and its text before (`None`: there was none).
type Written = Option<(PathBuf, Option<String>)>;

/// Builds one Kustomization in the copy of its source: the objects kustomize prints. A
/// failure's message has the values of the source's Secrets taken out unless `show_secrets`.
/// The copy is left as it was found, for the next Kustomization of the same source.
fn build(
    kustomization: &Kustomization,
    copy: &Path,
    tool: &[String],
    limits: Limits,
    show_secrets: bool,
) -> Result<Vec<Item>, String> {
    let mut written = None;
    let result = build_in(kustomization, copy, tool, limits, &mut written).map_err(|message| match show_secrets {
        true => message,
        false => fluxbuild::redact_message(&message, &secret_values_in(copy, copy, limits)),
    });
    let restored = match written {
        Some((file, Some(text))) => std::fs::write(&file, text),
        Some((file, None)) => std::fs::remove_file(&file),
        None => Ok(()),
    };
    match restored {
        Err(err) if result.is_ok() => Err(format!("cannot restore the copy of the source: {err}")),
        _ => result,
    }
}

fn build_in(
    kustomization: &Kustomization,
    copy: &Path,
    tool: &[String],
    limits: Limits,
    written: &mut Written,
) -> Result<Vec<Item>, String> {
    let copy = copy.to_path_buf();
    let mut dir = copy.clone();
    for part in fluxbuild::path_in_source(&kustomization.path) {
        dir.push(part);
    }
    if !dir.is_dir() {
        return Err(format!("kustomization path not found: {:?} is not a directory in the source", kustomization.path));
    }
    let existing = KUSTOMIZATION_FILES.iter().map(|name| dir.join(name)).find(|path| path.is_file());
    let (existing_value, file) = match &existing {
        Some(path) => {
            let text = read_regular_file(path, limits.max_file_bytes)
                .map_err(|err| format!("{}: {err}", shown(path, &copy)))?;
            let mut documents =
                read_yaml_documents(&text).map_err(|err| format!("{}: {}", shown(path, &copy), err.message))?;
            (Some((documents.pop().unwrap_or(Value::Null), text)), path.clone())
        }
        None => (None, dir.join(KUSTOMIZATION_FILES[0])),
    };
    let (existing_value, existing_text) =
        existing_value.map_or((None, None), |(value, text)| (Some(value), Some(text)));
    let generated = match existing {
        Some(_) => GeneratedResources(Vec::new()),
        None => GeneratedResources(scan_manifests(&dir, &dir, limits, &copy)?),
    };
    let component_exists = |component: &str| dir.join(component).exists();
    let value = fluxbuild::kustomization_file(existing_value, &generated, kustomization, &component_exists)?;
    *written = Some((file.clone(), existing_text));
    std::fs::write(&file, to_yaml(&value)).map_err(|err| format!("cannot write the kustomization file: {err}"))?;
    let base = fluxbuild::path_in_source(&kustomization.path).into_iter().map(String::from).collect();
    confine(&copy, base, &mut Vec::new(), limits)?;
    let mut command = Command::new(&tool[0]);
    command.args(&tool[1..]).arg("--load-restrictor").arg("LoadRestrictionsNone").arg(&dir);
    let output = super::cleanup::output(&mut command).map_err(|err| format!("cannot run {}: {err}", tool[0]))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr = stderr.trim().replace(&*copy.to_string_lossy(), "<source>");
        return Err(format!("kustomize build failed: {stderr}"));
    }
    let text = String::from_utf8(output.stdout).map_err(|_| "kustomize printed text that is not UTF-8".to_string())?;
    let documents =
        read_yaml_documents_with_starts(&text).map_err(|err| format!("kustomize's output: {}", err.message))?;
    let mut stream = StreamItems::new(&text);
    let mut objects = Vec::with_capacity(documents.len());
    for (index, (document, start)) in documents.into_iter().enumerate() {
        let complete = ["apiVersion", "kind"].iter().all(|key| document.get(key).and_then(Value::as_str).is_some())
            && !crate::krm::name_of(&document).is_empty();
        if !complete {
            return Err(format!(
                "failed to decode Kubernetes apiVersion, kind and name from document {} of the build",
                index + 1
            ));
        }
        objects.push(stream.item(index, document, start));
    }
    Ok(objects)
}

/// A path inside the temporary copy, as the source names it.
fn shown(path: &Path, copy: &Path) -> String {
    path.strip_prefix(copy).map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// Copies a source directory as source-controller makes its artifact ([`fluxbuild::ignore`]):
/// symbolic links are left out (the artifact's walk keeps regular files and directories only),
/// and so are `.git`, the files a clone does not hold (those `.gitignore` files name, when the
/// directory is in a git work tree) and, for a GitRepository or a Bucket, the files its
/// `.sourceignore` files, its `spec.ignore` and the default excludes name.
fn copy_artifact(from: &Path, to: &Path, rules: &ArtifactRules, limits: Limits) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|err| format!("cannot copy the source: {err}"))?;
    let real = from.canonicalize().map_err(|err| format!("{}: {err}", from.display()))?;
    let mut ignores = Ignores::default();
    // Above the source, in its work tree: the .gitignore files on the way down apply too.
    if let Some(top) = real.ancestors().find(|dir| dir.join(".git").exists()) {
        let prefix: Vec<String> = real
            .strip_prefix(top)
            .map(|rest| rest.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        for depth in 0..prefix.len() {
            let dir = prefix[..depth].iter().fold(top.to_path_buf(), |path, part| path.join(part));
            ignores.read_git(&dir, &prefix[..depth], limits)?;
        }
        // A directory git ignores (an artifact unpacked into `build/`) is no checkout: it is
        // taken as it is.
        let ignored = (1..=prefix.len()).any(|depth| {
            let path: Vec<&str> = prefix[..depth].iter().map(String::as_str).collect();
            ignores.git.excludes(&path, true)
        });
        match ignored {
            true => ignores.git = Matcher::default(),
            false => ignores.git_prefix = Some(prefix),
        }
    }
    ignores.load(&real, &mut Vec::new(), rules.filtered, limits)?;
    let mut patterns = std::mem::take(&mut ignores.source);
    if let Some(text) = &rules.ignore {
        patterns.extend(fluxbuild::ignore::read_patterns(text, &[]));
    }
    let artifact = rules.filtered.then(|| Matcher::artifact(patterns));
    copy_files(&real, to, &mut Vec::new(), &ignores, artifact.as_ref())
}

/// The ignore patterns of a source: its work tree's (`.gitignore`, scoped from the work tree's
/// top, which is `git_prefix` above the source) and its own (`.sourceignore`).
#[derive(Default)]
struct Ignores {
    git_prefix: Option<Vec<String>>,
    git: Matcher,
    source: Vec<fluxbuild::ignore::Pattern>,
}

impl Ignores {
    fn read_git(&mut self, dir: &Path, domain: &[String], limits: Limits) -> Result<(), String> {
        let file = dir.join(".gitignore");
        if file.is_file() && !file.is_symlink() {
            let text =
                read_regular_file(&file, limits.max_file_bytes).map_err(|err| format!("{}: {err}", file.display()))?;
            self.git.extend(fluxbuild::ignore::read_patterns(&text, domain));
        }
        Ok(())
    }

    /// Whether a path below the source (`parts`) is one a clone does not hold.
    fn not_in_clone(&self, parts: &[String], is_dir: bool) -> bool {
        let Some(prefix) = &self.git_prefix else { return false };
        let path: Vec<&str> = prefix.iter().chain(parts).map(String::as_str).collect();
        self.git.excludes(&path, is_dir)
    }

    /// Reads the `.gitignore` and (`sourceignore`) `.sourceignore` files of `dir` (`parts` below
    /// the source) and below, as source-controller reads them: each directory's before its
    /// sub-directories', in name order, not into `.git`, links or what a clone does not hold.
    fn load(&mut self, dir: &Path, parts: &mut Vec<String>, sourceignore: bool, limits: Limits) -> Result<(), String> {
        if let Some(prefix) = self.git_prefix.clone() {
            let domain: Vec<String> = prefix.into_iter().chain(parts.iter().cloned()).collect();
            self.read_git(dir, &domain, limits)?;
        }
        let file = dir.join(fluxbuild::ignore::IGNORE_FILE);
        if sourceignore && file.is_file() && !file.is_symlink() {
            let text =
                read_regular_file(&file, limits.max_file_bytes).map_err(|err| format!("{}: {err}", file.display()))?;
            self.source.extend(fluxbuild::ignore::read_patterns(&text, parts));
        }
        for (name, path) in sorted_entries(dir)? {
            let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir());
            if !is_dir || name == ".git" {
                continue;
            }
            parts.push(name);
            if !self.not_in_clone(parts, true) {
                self.load(&path, parts, sourceignore, limits)?;
            }
            parts.pop();
        }
        Ok(())
    }
}

fn sorted_entries(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|err| format!("{}: {err}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| (entry.file_name().to_string_lossy().into_owned(), entry.path()))
        .collect();
    entries.sort();
    Ok(entries)
}

/// Copies the files of `from` (`parts` below the source) the artifact holds into `to`. A
/// directory the artifact leaves out is still walked (a later `!pattern` may bring a file in it
/// back), as source-controller's walk does; it is made only for the files kept in it.
fn copy_files(
    from: &Path,
    to: &Path,
    parts: &mut Vec<String>,
    ignores: &Ignores,
    artifact: Option<&Matcher>,
) -> Result<(), String> {
    for (name, path) in sorted_entries(from)? {
        if name == ".git" {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        // Links, FIFOs, sockets and devices: the artifact holds regular files and directories.
        if !(meta.is_dir() || meta.is_file()) {
            continue;
        }
        parts.push(name.clone());
        let target = to.join(&name);
        let excluded = |is_dir: bool| {
            let path: Vec<&str> = parts.iter().map(String::as_str).collect();
            artifact.is_some_and(|matcher| matcher.excludes(&path, is_dir))
        };
        let result = if ignores.not_in_clone(parts, meta.is_dir()) {
            Ok(())
        } else if meta.is_dir() {
            let made = match excluded(true) {
                true => Ok(()),
                false => {
                    std::fs::create_dir_all(&target).map_err(|err| format!("cannot copy {}: {err}", path.display()))
                }
            };
            made.and_then(|()| copy_files(&path, &target, parts, ignores, artifact))
        } else if excluded(false) {
            Ok(())
        } else {
            std::fs::create_dir_all(to)
                .and_then(|()| std::fs::copy(&path, &target))
                .map(|_| ())
                .map_err(|err| format!("cannot copy {}: {err}", path.display()))
        };
        parts.pop();
        result?;
    }
    Ok(())
}

/// Refuses a build that would read outside the source, as kustomize-controller's filesystem
/// rooted at the source does: every path the kustomization in `base` (parts below `copy`)
/// names, the plugin configuration files it names, and the kustomizations its `resources`,
/// `bases` and `components` lead to, must resolve inside `copy` ([`fluxbuild::named_paths`]).
/// Only what the build reaches is checked, as only that is read.
fn confine(copy: &Path, base: Vec<String>, visited: &mut Vec<Vec<String>>, limits: Limits) -> Result<(), String> {
    if visited.contains(&base) {
        return Ok(());
    }
    let dir = base.iter().fold(copy.to_path_buf(), |path, part| path.join(part));
    visited.push(base.clone());
    let Some(path) = KUSTOMIZATION_FILES.iter().map(|name| dir.join(name)).find(|path| path.is_file()) else {
        return Ok(());
    };
    let documents = read_documents(&path, copy, limits)?;
    let mut configs = Vec::new();
    let mut directories = Vec::new();
    for document in &documents {
        check_paths(&path, copy, &base, document)?;
        configs.extend(fluxbuild::config_files(document));
        for field in ["resources", "bases", "components"] {
            let entries = document.get(field).and_then(Value::as_array).into_iter().flatten();
            directories.extend(entries.filter_map(Value::as_str).map(String::from));
        }
    }
    for config in configs {
        // Checked above to be inside; one that is not a local file is not configuration.
        let Some(parts) = fluxbuild::resolve(&base, &config) else { continue };
        let config_path = parts.iter().fold(copy.to_path_buf(), |path, part| path.join(part));
        if config_path.is_file() {
            let config_base = &parts[..parts.len().saturating_sub(1)];
            for document in &read_documents(&config_path, copy, limits)? {
                check_paths(&config_path, copy, config_base, document)?;
            }
        }
    }
    for entry in directories {
        let Some(parts) = fluxbuild::resolve(&base, &entry) else { continue };
        if parts.iter().fold(copy.to_path_buf(), |path, part| path.join(part)).is_dir() {
            confine(copy, parts, visited, limits)?;
        }
    }
    Ok(())
}

fn read_documents(path: &Path, copy: &Path, limits: Limits) -> Result<Vec<Value>, String> {
    let text = read_regular_file(path, limits.max_file_bytes).map_err(|err| format!("{}: {err}", shown(path, copy)))?;
    read_yaml_documents(&text).map_err(|err| format!("{}: {}", shown(path, copy), err.message))
}

fn check_paths(file: &Path, copy: &Path, base: &[String], document: &Value) -> Result<(), String> {
    for (field, named) in fluxbuild::named_paths(document) {
        if fluxbuild::resolve(base, &named).is_none() {
            return Err(format!(
                "{} names {named:?} in {field}, which is outside the source: kustomize-controller builds on a \
                 filesystem rooted at the source and cannot read it; keep every path inside the source",
                shown(file, copy)
            ));
        }
    }
    Ok(())
}

/// Every value a Secret under `dir` of the copy may hold: Secret manifests, `secretGenerator`
/// literals and the files and env files generators read ([`fluxbuild::secret_values`]). Read only
/// when a build failed, to take them out of its message; what cannot be read holds nothing.
fn secret_values_in(copy: &Path, dir: &Path, limits: Limits) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for path in entries.filter_map(|entry| entry.ok().map(|e| e.path())) {
        if path.is_dir() {
            found.extend(secret_values_in(copy, &path, limits));
            continue;
        }
        let is_kustomization = path.file_name().is_some_and(|name| KUSTOMIZATION_FILES.iter().any(|k| name == *k));
        if !is_kustomization && !path.extension().is_some_and(|ext| ext == "yaml" || ext == "yml") {
            continue;
        }
        let Ok(text) = read_regular_file(&path, limits.max_file_bytes) else { continue };
        let Ok(documents) = read_yaml_documents(&text) else { continue };
        for document in &documents {
            found.extend(fluxbuild::secret_values(document));
            let generators = document.get("secretGenerator").and_then(Value::as_array).into_iter().flatten();
            for generator in generators {
                let named = |key: &str| generator.get(key).and_then(Value::as_array).into_iter().flatten();
                for file in named("files").filter_map(Value::as_str) {
                    let file = file.split_once('=').map_or(file, |(_, path)| path);
                    found.extend(read_inside(copy, dir, file, limits));
                }
                for file in named("envs").chain(generator.get("env")).filter_map(Value::as_str) {
                    let lines = read_inside(copy, dir, file, limits).unwrap_or_default();
                    found.extend(lines.lines().filter_map(|line| line.split_once('=')).map(|(_, v)| v.to_string()));
                }
            }
        }
    }
    found
}

/// The text of `file`, named from `dir`, if it is inside `copy` (nothing outside is ever read).
fn read_inside(copy: &Path, dir: &Path, file: &str, limits: Limits) -> Option<String> {
    let base: Vec<String> =
        dir.strip_prefix(copy).ok()?.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let parts = fluxbuild::resolve(&base, file)?;
    read_regular_file(&parts.iter().fold(copy.to_path_buf(), |path, part| path.join(part)), limits.max_file_bytes).ok()
}

/// Every manifest under `dir` for the kustomization file Flux generates (`scanManifests`): files
/// named `*.yaml`/`*.yml` that read as YAML, and directories with a kustomization file of their
/// own (not descended into), as `./relative` paths in lexical walk order.
fn scan_manifests(base: &Path, dir: &Path, limits: Limits, copy: &Path) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|err| format!("{}: {err}", shown(dir, copy)))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let relative = || format!("./{}", path.strip_prefix(base).unwrap_or(&path).display());
        if path.is_dir() {
            if KUSTOMIZATION_FILES.iter().any(|name| path.join(name).is_file()) {
                found.push(relative());
            } else {
                found.extend(scan_manifests(base, &path, limits, copy)?);
            }
            continue;
        }
        if !path.extension().is_some_and(|ext| ext == "yaml" || ext == "yml") {
            continue;
        }
        let text =
            read_regular_file(&path, limits.max_file_bytes).map_err(|err| format!("{}: {err}", shown(&path, copy)))?;
        if let Err(err) = read_yaml_documents(&text) {
            return Err(format!("failed to decode Kubernetes YAML from {}: {}", shown(&path, copy), err.message));
        }
        found.push(relative());
    }
    Ok(found)
}

/// `--output-dir`: one file per Kustomization, `NAMESPACE_NAME.yaml`. Every file name is checked
/// ([`fluxbuild::output_file_name`]) and two Kustomizations that would share one are refused,
/// before anything is written: the names come from the package, and a bad one must neither
/// write outside `dir` nor overwrite another's objects.
fn write_files(dir: &Path, built: Vec<(Name, Vec<Item>)>) -> Exit {
    let mut files: Vec<(PathBuf, Vec<Item>)> = Vec::with_capacity(built.len());
    let mut seen = std::collections::HashMap::new();
    for (name, objects) in built {
        let file = match fluxbuild::output_file_name(&name) {
            Ok(file) => file,
            Err(message) => return Exit::Unusable(message),
        };
        if let Some(first) = seen.insert(file.clone(), name.clone()) {
            return Exit::Unusable(format!(
                "Kustomizations {first} and {name} would both be written to {file} in --output-dir: rename one, or \
                 build one at a time with --kustomization"
            ));
        }
        files.push((dir.join(file), objects));
    }
    if let Err(err) = std::fs::create_dir_all(dir) {
        return Exit::Unusable(format!("{}: {err}", dir.display()));
    }
    for (path, objects) in files {
        let mut text = Vec::new();
        if let Err(err) = write_stream(&mut text, objects.into_iter()) {
            return Exit::Unusable(format!("{}: {err}", path.display()));
        }
        if let Err(err) = std::fs::write(&path, text) {
            return Exit::Unusable(format!("{}: {err}", path.display()));
        }
    }
    Exit::Ok
}
