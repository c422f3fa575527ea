//! KOTS's static template context (kots `pkg/template/static_context.go`) over Sprig's
//! functions, with the Go signatures KOTS declares, plus the version context's functions with
//! KOTS's results when there is no version (`Sequence` is -1, the rest empty or false).
//!
//! Offline rendering has no cluster, license, admin console or randomness that must stay the
//! same between runs. Functions that need one of them fail, naming themselves and saying what
//! to do instead; `Now`/`NowFmt` read a fixed clock and `Namespace` a configured namespace,
//! and fail when those are not set.

use crate::template::go::{self, define, strconv, Args, Arity::AtLeast, Arity::Exact, FuncMap, GoValue, TemplateError};
use crate::template::sprig::{self, strings, url};
use base64::Engine as _;

/// The option that sets [`Statics::now`], for messages.
pub const NOW_OPTION: &str = "spec.kots.now";
/// The option that sets [`Statics::namespace`], for messages.
pub const NAMESPACE_OPTION: &str = "spec.kots.namespace";

/// What the static functions may read: all absent unless configured, so a render never
/// depends on the clock or the machine.
#[derive(Clone, Debug, Default)]
pub struct Statics {
    /// The time `Now` and `NowFmt` report.
    pub now: Option<Instant>,
    /// The namespace `Namespace` reports.
    pub namespace: Option<String>,
    /// What `IsKurl` reports (`spec.kots.isKurl`); unset: false, said once.
    pub is_kurl: Option<bool>,
    /// What `IsAirgap` reports (`spec.kots.isAirgap`).
    pub is_airgap: Option<bool>,
    /// What `ChannelName` reports (`spec.kots.channelName`).
    pub channel_name: Option<String>,
    /// What `Sequence` reports (`spec.kots.sequence`).
    pub sequence: Option<i64>,
    /// The registry KOTS pushes images to (`spec.kots.localRegistry`), for `LocalImageName` and
    /// its siblings; none: images are pulled from where they are.
    pub local_registry: Option<LocalRegistry>,
    /// The application's slug (`spec.kots.appSlug`, else its `Application`'s name, with the
    /// item's name when so) for `ImagePullSecretName`.
    pub app_slug: Option<(String, Option<String>)>,
    /// Which functions answered from a default this render.
    pub defaulted: Defaulted,
}

/// A local registry: its host, and the namespace (path) images go under.
#[derive(Clone, Debug, Default)]
pub struct LocalRegistry {
    pub host: String,
    pub namespace: String,
    pub username: String,
    pub password: String,
}

/// The functions that answered from a default this render, each with what to tell the user
/// (`warning`: the default is a guess that may be wrong), said once per render, not per call.
#[derive(Clone, Debug, Default)]
pub struct Defaulted(std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, (bool, String)>>>);

impl Defaulted {
    fn note(&self, name: &str, warning: bool, message: String) {
        if let Ok(mut noted) = self.0.lock() {
            noted.entry(name.to_string()).or_insert((warning, message));
        }
    }

    /// What was noted, by function name: (warning, message).
    pub fn take(&self) -> Vec<(bool, String)> {
        self.0.lock().map(|mut noted| std::mem::take(&mut *noted).into_values().collect()).unwrap_or_default()
    }
}

/// A moment in UTC: seconds since the Unix epoch and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instant {
    pub seconds: i64,
    pub nanos: u32,
}

/// Functions that read the cluster KOTS runs in.
const CLUSTER: &[&str] = &[
    "KotsVersion",
    "Distribution",
    "NodeCount",
    "KubernetesVersion",
    "KubernetesMajorVersion",
    "KubernetesMinorVersion",
    "Lookup",
    "HTTPSProxy",
    "HTTPProxy",
    "NoProxy",
    "PrivateCACert",
    "KurlAll",
    "KurlBool",
    "KurlInt",
    "KurlOption",
    "KurlString",
    "IdentityServiceEnabled",
    "IdentityServiceClientID",
    "IdentityServiceClientSecret",
    "IdentityServiceRoles",
];

/// Functions whose result differs on every call (random values, generated keys).
const RANDOM: &[&str] =
    &["RandomString", "RandomBytes", "TLSCert", "TLSKey", "TLSCACert", "TLSCertFromCA", "TLSKeyFromCA", "KubeSeal"];

/// Functions that read the installed license.
const LICENSE: &[&str] = &["LicenseFieldValue", "LicenseDockerCfg"];

/// The error of a function that needs the cluster.
pub fn needs_cluster(name: &str) -> TemplateError {
    go::fail(
        name,
        format!(
            "{name} is a KOTS function that reads the cluster or the admin console KOTS runs in: it is not \
             available when rendering offline; put the value in ConfigValues and read it with ConfigOption"
        ),
    )
}

/// KOTS's static functions over Sprig's.
pub fn functions(options: &Statics) -> FuncMap {
    let mut funcs = sprig::functions();
    for &name in CLUSTER {
        define(&mut funcs, name, AtLeast(0), |args| Err(needs_cluster(args.name())));
    }
    for &name in LICENSE {
        define(&mut funcs, name, AtLeast(0), |args| {
            let name = args.name();
            Err(go::fail(
                name,
                format!(
                    "{name} needs the license installed in a cluster: it is not available when rendering offline; put \
                     the value in ConfigValues and read it with ConfigOption"
                ),
            ))
        });
    }
    for &name in RANDOM {
        define(&mut funcs, name, AtLeast(0), |args| {
            let name = args.name();
            Err(go::fail(
                name,
                format!(
                    "{name} is not available: its result changes from run to run, and a render must be reproducible; \
                     generate the value once, put it in ConfigValues and read it with ConfigOption"
                ),
            ))
        });
    }
    version_functions(&mut funcs, options);
    registry_functions(&mut funcs, options);
    define(&mut funcs, "ToLower", Exact(1), |args| Ok(go::string(strings::to_lower(args.string(0)?))));
    define(&mut funcs, "ToUpper", Exact(1), |args| Ok(go::string(strings::to_upper(args.string(0)?))));
    define(&mut funcs, "TrimSpace", Exact(1), |args| Ok(go::string(args.string(0)?.trim())));
    define(&mut funcs, "Trim", AtLeast(1), |args| {
        let s = args.string(0)?;
        Ok(go::string(if args.len() == 1 {
            s.trim().to_string()
        } else {
            let cutset = args.string(1)?;
            s.trim_matches(|c| cutset.contains(c)).to_string()
        }))
    });
    define(&mut funcs, "UrlEncode", Exact(1), |args| Ok(go::string(url::query_escape(args.string(0)?))));
    define(&mut funcs, "Base64Encode", Exact(1), |args| {
        Ok(go::string(base64::engine::general_purpose::STANDARD.encode(args.string(0)?)))
    });
    define(&mut funcs, "Base64Decode", Exact(1), |args| {
        let decoded = base64::engine::general_purpose::STANDARD.decode(args.string(0)?.replace(['\r', '\n'], ""));
        Ok(go::string(decoded.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()).unwrap_or_default()))
    });
    define(&mut funcs, "Split", Exact(2), |args| {
        Ok(strings::strings_list(strings::go_split(args.string(0)?, args.string(1)?, -1)))
    });
    define(&mut funcs, "Add", Exact(2), |args| arithmetic(args, Op::Add));
    define(&mut funcs, "Sub", Exact(2), |args| arithmetic(args, Op::Sub));
    define(&mut funcs, "Mult", Exact(2), |args| arithmetic(args, Op::Mul));
    define(&mut funcs, "Div", Exact(2), |args| arithmetic(args, Op::Div));
    define(&mut funcs, "ParseBool", Exact(1), |args| {
        Ok(GoValue::Bool(strconv::parse_bool(args.string(0)?).unwrap_or(false)))
    });
    define(&mut funcs, "ParseFloat", Exact(1), |args| {
        Ok(GoValue::Float(strconv::parse_float(args.string(0)?).unwrap_or_else(strconv::NumError::value)))
    });
    define(&mut funcs, "ParseInt", AtLeast(1), |args| {
        let base = if args.len() > 1 { args.int(1)? } else { 10 };
        Ok(GoValue::Int(strconv::parse_int(args.string(0)?, base).unwrap_or_else(strconv::NumError::value)))
    });
    define(&mut funcs, "ParseUint", AtLeast(1), |args| {
        let base = if args.len() > 1 { args.int(1)? } else { 10 };
        Ok(GoValue::Uint(strconv::parse_uint(args.string(0)?, base).unwrap_or_else(strconv::NumError::value)))
    });
    define(&mut funcs, "HumanSize", Exact(1), |args| Ok(go::string(human_size(number(args.any(0))))));
    define(&mut funcs, "YamlEscape", Exact(1), |args| {
        let pad = " ".repeat(20);
        let marshalled = yaml_v3_string(args.string(0)?);
        Ok(go::string(format!("{pad}{}", marshalled.replace('\n', &format!("\n{pad}")))))
    });
    // Configured values: closures over the options.
    let now = options.now;
    go::define_closure(&mut funcs, "Now", Exact(0), move |args| {
        let now = now.ok_or_else(|| no_clock(args.name()))?;
        Ok(go::string(format_go(now, RFC3339)))
    });
    go::define_closure(&mut funcs, "NowFmt", Exact(1), move |args| {
        let layout = args.string(0)?;
        let now = now.ok_or_else(|| no_clock(args.name()))?;
        Ok(go::string(format_go(now, if layout.is_empty() { RFC3339 } else { layout })))
    });
    let namespace = options.namespace.clone();
    go::define_closure(&mut funcs, "Namespace", Exact(0), move |args| {
        let namespace = namespace.as_deref().ok_or_else(|| {
            go::fail(
                args.name(),
                format!("Namespace needs the namespace the application is installed in: set {NAMESPACE_OPTION}"),
            )
        })?;
        Ok(go::string(namespace))
    });
    funcs
}

/// The version context. KOTS answers from the version being deployed; offline there is none,
/// so these give KOTS's answers without a version (`Sequence` -1, the rest empty or false), or
/// what `spec.kots` sets, and each says once per render that it had no version to read.
fn version_functions(funcs: &mut FuncMap, options: &Statics) {
    let no_version = |name: &str, value: &str, setting: Option<&str>| {
        let set = setting.map(|s| format!("; set spec.kots.{s} to give it one")).unwrap_or_default();
        format!("{name} has no release to read when rendering offline: it gives {value} as KOTS does without one{set}")
    };
    let mut fixed = |name: &'static str, configured: Option<GoValue>, default: GoValue, shown: &str, setting| {
        let message = no_version(name, shown, setting);
        let defaulted = options.defaulted.clone();
        go::define_closure(funcs, name, Exact(0), move |_| {
            Ok(match &configured {
                Some(value) => value.clone(),
                None => {
                    defaulted.note(name, true, message.clone());
                    default.clone()
                }
            })
        });
    };
    fixed("Sequence", options.sequence.map(GoValue::Int), GoValue::Int(-1), "-1", Some("sequence"));
    fixed("ChannelName", options.channel_name.clone().map(go::string), go::string(""), "\"\"", Some("channelName"));
    fixed("IsAirgap", options.is_airgap.map(GoValue::Bool), GoValue::Bool(false), "false", Some("isAirgap"));
    fixed("IsRequired", None, GoValue::Bool(false), "false", None);
    for name in ["Cursor", "VersionLabel", "ReleaseNotes", "ReplicatedRegistryDomain", "ReplicatedProxyDomain"] {
        fixed(name, None, go::string(""), "\"\"", None);
    }
    let is_kurl = options.is_kurl;
    let defaulted = options.defaulted.clone();
    go::define_closure(funcs, "IsKurl", Exact(0), move |_| {
        Ok(GoValue::Bool(is_kurl.unwrap_or_else(|| {
            let message = "IsKurl gives false: rendering offline, the cluster is taken not to be a kURL cluster; set \
                           spec.kots.isKurl: true if it is";
            defaulted.note("IsKurl", false, message.to_string());
            false
        })))
    });
    // Made of the app's slug alone, as KOTS makes them: the pull secret `<slug>-registry` ("" for
    // no slug), the identity service `<slug>-dex` on port 5556 (pkg/identity/types).
    slug_function(funcs, options, "ImagePullSecretName", |slug| {
        if slug.is_empty() {
            String::new()
        } else {
            format!("{slug}-registry")
        }
    });
    slug_function(funcs, options, "IdentityServiceName", |slug| format!("{slug}-dex"));
    slug_function(funcs, options, "IdentityServicePort", |_| "5556".to_string());
}

/// A function of no arguments whose value KOTS makes from the app's slug; an info result says
/// where the slug came from when it is an `Application`'s name, and without a slug it is an
/// error saying how to give one.
fn slug_function(funcs: &mut FuncMap, options: &Statics, name: &'static str, make: fn(&str) -> String) {
    let slug = options.app_slug.clone();
    let defaulted = options.defaulted.clone();
    go::define_closure(funcs, name, Exact(0), move |_| match &slug {
        Some((slug, from)) => {
            let value = make(slug);
            if let Some(application) = from {
                let message = format!(
                    "{name} gives \"{value}\": the app slug is the name of Application {application:?}; set \
                         spec.kots.appSlug to name it otherwise"
                );
                defaulted.note(name, false, message);
            }
            Ok(go::string(value))
        }
        None => Err(go::fail(
            name,
            format!(
                "{name} is made of the app's slug, and the package says none: set spec.kots.appSlug, or add \
                     the app's kots.io/v1beta1 Application (its metadata.name is the slug)"
            ),
        )),
    });
}

/// The local-registry functions (KOTS's config context). With `spec.kots.localRegistry` they
/// answer as KOTS does for that registry; without, as KOTS does for an online install with no
/// local registry: `LocalImageName` keeps the image where it is.
fn registry_functions(funcs: &mut FuncMap, options: &Statics) {
    let registry = options.local_registry.clone().filter(|r| !r.host.is_empty());
    let address = registry.as_ref().map(|r| {
        if r.namespace.is_empty() {
            r.host.clone()
        } else {
            format!("{}/{}", r.host, r.namespace)
        }
    });
    let host = registry.as_ref().map(|r| r.host.clone()).unwrap_or_default();
    let namespace = registry.as_ref().map(|r| r.namespace.clone()).unwrap_or_default();
    let has = registry.is_some();
    closure(funcs, "HasLocalRegistry", 0, move |_| Ok(GoValue::Bool(has)));
    let h = host.clone();
    closure(funcs, "LocalRegistryHost", 0, move |_| Ok(go::string(h.clone())));
    let n = namespace.clone();
    closure(funcs, "LocalRegistryNamespace", 0, move |_| Ok(go::string(n.clone())));
    let a = address.clone().unwrap_or_default();
    closure(funcs, "LocalRegistryAddress", 0, move |_| Ok(go::string(a.clone())));
    let defaulted = options.defaulted.clone();
    let target = address.clone();
    closure(funcs, "LocalImageName", 1, move |args| {
        let image = args.string(0)?;
        Ok(go::string(match &target {
            Some(address) => format!("{address}/{}", last_component(image)),
            None => {
                let message = "LocalImageName keeps images where they are: no local registry is set \
                               (spec.kots.localRegistry), as for an online install; KOTS would also send a private \
                               image through the Replicated proxy, which needs the license";
                defaulted.note("LocalImageName", false, message.to_string());
                image.to_string()
            }
        }))
    });
    let secret = registry.as_ref().map(|r| {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let auth = b64(&format!("{}:{}", r.username, r.password));
        let host = r.host.split('/').next().unwrap_or_default();
        let config = serde_json::json!({"auths": {host: {"auth": auth}}});
        b64(&config.to_string())
    });
    closure(funcs, "LocalRegistryImagePullSecret", 0, move |args| match &secret {
        Some(secret) => Ok(go::string(secret.clone())),
        None => Err(go::fail(
            args.name(),
            "LocalRegistryImagePullSecret without a local registry is the Replicated proxy's pull secret, which needs \
             the license installed in a cluster: set spec.kots.localRegistry, or put the secret in ConfigValues and \
             read it with ConfigOption",
        )),
    });
}

/// A function of `arity` arguments that closes over configured values.
fn closure(
    funcs: &mut FuncMap,
    name: &'static str,
    arity: usize,
    f: impl Fn(&Args) -> Result<GoValue, TemplateError> + Send + Sync + 'static,
) {
    go::define_closure(funcs, name, Exact(arity), f);
}

/// An image reference's last path component, as KOTS names it in a local registry: `:latest`
/// when it has neither tag nor digest, and the digest alone when it has both.
fn last_component(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    let (name_tag, digest) = match last.split_once('@') {
        Some((name_tag, digest)) => (name_tag, Some(digest)),
        None => (last, None),
    };
    let name = name_tag.split_once(':').map_or(name_tag, |(name, _)| name);
    match digest {
        Some(digest) => format!("{name}@{digest}"),
        None if name == name_tag => format!("{name}:latest"),
        None => name_tag.to_string(),
    }
}

fn no_clock(name: &str) -> TemplateError {
    go::fail(
        name,
        format!(
            "{name} needs a fixed clock so that renders are reproducible: set {NOW_OPTION} to an RFC 3339 time \
             (2024-01-02T15:04:05Z)"
        ),
    )
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// A number as KOTS's reflection sees it.
#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Uint(u64),
    Float(f64),
    Other,
}

fn number(value: &GoValue) -> Number {
    match value {
        GoValue::Int(n) => Number::Int(*n),
        GoValue::Uint(n) => Number::Uint(*n),
        GoValue::Float(f) => Number::Float(*f),
        _ => Number::Other,
    }
}

fn to_float(n: Number) -> f64 {
    match n {
        Number::Int(i) => i as f64,
        Number::Uint(u) => u as f64,
        Number::Float(f) => f,
        Number::Other => 0.0,
    }
}

/// KOTS's `Add`/`Sub`/`Mult`/`Div`: floats if either is a float, else integer arithmetic of
/// the first operand's kind (wrapping, as Go's), else 0.
fn arithmetic(args: &Args<'_>, op: Op) -> Result<GoValue, TemplateError> {
    let (a, b) = (number(args.any(0)), number(args.any(1)));
    let reflect = |method: &str, kind: &str| {
        go::fail(args.name(), format!("reflect: call of reflect.Value.{method} on {kind} Value"))
    };
    let divide_by_zero = || go::fail(args.name(), "runtime error: integer divide by zero");
    Ok(match (a, b) {
        (Number::Float(_), _) | (_, Number::Float(_)) => {
            let (x, y) = (to_float(a), to_float(b));
            GoValue::Float(match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => x / y,
            })
        }
        (Number::Int(x), b) => {
            let y = match b {
                Number::Int(y) => y,
                Number::Uint(_) => return Err(reflect("Int", "uint64")),
                _ => 0,
            };
            GoValue::Int(match op {
                Op::Add => x.wrapping_add(y),
                Op::Sub => x.wrapping_sub(y),
                Op::Mul => x.wrapping_mul(y),
                Op::Div if y == 0 => return Err(divide_by_zero()),
                Op::Div => x.wrapping_div(y),
            })
        }
        (Number::Uint(x), b) => {
            let y = match b {
                Number::Uint(y) => y,
                Number::Int(_) => return Err(reflect("Uint", "int")),
                _ => 0,
            };
            GoValue::Uint(match op {
                Op::Add => x.wrapping_add(y),
                Op::Sub => x.wrapping_sub(y),
                Op::Mul => x.wrapping_mul(y),
                Op::Div if y == 0 => return Err(divide_by_zero()),
                Op::Div => x / y,
            })
        }
        _ => GoValue::Int(0),
    })
}

/// docker/go-units `HumanSize`: decimal units (1000), four significant digits (`387.3GB`).
fn human_size(n: Number) -> String {
    const UNITS: [&str; 9] = ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
    let mut size = to_float(n);
    let mut unit = 0;
    while size >= 1000.0 && unit < UNITS.len() - 1 {
        size /= 1000.0;
        unit += 1;
    }
    format!("{}{}", format_g(size, 4), UNITS[unit])
}

/// Go's `%.<precision>g`: scientific when the exponent is below -4 or at least the precision,
/// trailing zeros dropped.
fn format_g(f: f64, precision: usize) -> String {
    if !f.is_finite() {
        return go::go_float(f);
    }
    let scientific = format!("{:.*e}", precision.saturating_sub(1), f);
    let Some((mantissa, exponent)) = scientific.split_once('e') else { return scientific };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mantissa), exponent.abs());
    }
    let decimals = usize::try_from(precision as i32 - 1 - exponent).unwrap_or(0);
    trim(&format!("{f:.decimals$}"))
}

/// yaml.v3's `Marshal` of a string: plain when it reads back as the same string, a literal
/// block (`|`, indented 4) when it has line breaks, else quoted, as yaml.v3's emitter decides.
/// Not modelled: the `...` document end yaml.v3 may add after a `|+` block. yaml.v2 (through
/// sigs.k8s.io/yaml) writes a single-line string the same way.
pub fn yaml_v3_string(s: &str) -> String {
    let analysis = crate::doc::analyze_scalar(s);
    let plain_ok = resolves_to_string(s);
    if s.contains('\n') && analysis.block_allowed {
        // At the top of a document yaml.v3 indents a block by four.
        return format!("{}\n", crate::doc::literal_block(s, 4));
    }
    if !s.contains('\n') && plain_ok && analysis.plain_allowed {
        return format!("{s}\n");
    }
    if !s.contains('\n') && plain_ok && analysis.single_quoted_allowed {
        return format!("'{}'\n", s.replace('\'', "''"));
    }
    format!("{}\n", crate::doc::double_quoted(s))
}

/// Whether yaml.v3 reads `s`, unquoted, back as the same string (not null, bool, number,
/// timestamp or merge key; nor a YAML 1.1 bool or sexagesimal number, which it also quotes).
fn resolves_to_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y", "yes", "Yes",
        "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF", ".inf", ".Inf", ".INF", "+.inf",
        "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", "<<",
    ];
    if SPECIAL.contains(&s) {
        return false;
    }
    if !s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) {
        return true;
    }
    let plain = s.replace('_', "");
    let binary = |t: &str| t.strip_prefix("0b").is_some_and(|b| strconv::parse_int(b, 2).is_ok());
    let number = strconv::parse_int(&plain, 0).is_ok()
        || strconv::parse_uint(&plain, 0).is_ok()
        || binary(&plain)
        || plain.strip_prefix(['-', '+']).is_some_and(binary)
        || crate::doc::is_yaml_float(&plain);
    !(number || is_timestamp(s) || crate::doc::is_base60(s))
}

/// A YAML timestamp as yaml.v3 reads one: `2006-1-2`, optionally with a time.
fn is_timestamp(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.len() < 8 || !bytes[..4].iter().all(u8::is_ascii_digit) || bytes[4] != b'-' {
        return false;
    }
    let date_end = s.find(['T', 't', ' ']).unwrap_or(s.len());
    let mut parts = s[5..date_end].split('-');
    let ok = |p: Option<&str>| p.is_some_and(|p| (1..=2).contains(&p.len()) && p.bytes().all(|c| c.is_ascii_digit()));
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

/// Go's `time.RFC3339` layout.
const RFC3339: &str = "2006-01-02T15:04:05Z07:00";

impl Instant {
    /// Reads an RFC 3339 time (`2024-01-02T15:04:05Z`, `…+02:00`, with optional fractional
    /// seconds), as the moment in UTC.
    pub fn parse_rfc3339(text: &str) -> Result<Instant, String> {
        let bad = || format!("{text:?} is not an RFC 3339 time such as 2024-01-02T15:04:05Z");
        let b = text.as_bytes();
        if b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || !matches!(b[10], b'T' | b't')
            || b[13] != b':'
            || b[16] != b':'
        {
            return Err(bad());
        }
        let field = |range: std::ops::Range<usize>| -> Result<i64, String> {
            let part = text.get(range).ok_or_else(bad)?;
            if !part.bytes().all(|c| c.is_ascii_digit()) {
                return Err(bad());
            }
            part.parse().map_err(|_| bad())
        };
        let (year, month, day) = (field(0..4)?, field(5..7)?, field(8..10)?);
        let (hour, minute, second) = (field(11..13)?, field(14..16)?, field(17..19)?);
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 59
        {
            return Err(bad());
        }
        let mut rest = &text[19..];
        let mut nanos = 0u32;
        if let Some(fraction) = rest.strip_prefix('.') {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || digits > 9 {
                return Err(bad());
            }
            nanos = format!("{:0<9}", &fraction[..digits]).parse().map_err(|_| bad())?;
            rest = &fraction[digits..];
        }
        let offset = match rest {
            "Z" | "z" => 0,
            _ => {
                let sign = match rest.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return Err(bad()),
                };
                let ob = rest.as_bytes();
                if ob.len() != 6 || ob[3] != b':' {
                    return Err(bad());
                }
                let hours: i64 = rest.get(1..3).and_then(|h| h.parse().ok()).ok_or_else(bad)?;
                let minutes: i64 = rest.get(4..6).and_then(|m| m.parse().ok()).ok_or_else(bad)?;
                sign * (hours * 3600 + minutes * 60)
            }
        };
        let days = days_from_civil(year, month, day);
        Ok(Instant { seconds: days * 86_400 + hour * 3600 + minute * 60 + second - offset, nanos })
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (if month <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, month, day)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// Go's `Time.Format` of a UTC time: the layout's elements (`2006`, `01`, `Jan`, `15`, `04`,
/// `05`, `.000`, `Z07:00`, `MST`…) are replaced, everything else is copied.
pub fn format_go(at: Instant, layout: &str) -> String {
    let days = at.seconds.div_euclid(86_400);
    let secs = at.seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute, second) = (secs / 3600, secs / 60 % 60, secs % 60);
    let weekday = (days + 4).rem_euclid(7) as usize;
    let yday = days - days_from_civil(year, 1, 1) + 1;
    let month_name = MONTHS[(month - 1) as usize];
    let hour12 = if hour % 12 == 0 { 12 } else { hour % 12 };
    let mut out = String::new();
    let mut rest = layout;
    while !rest.is_empty() {
        // Fractional seconds: `.000`/`,999…` not followed by a digit.
        if rest.starts_with(['.', ',']) {
            let kind = rest.as_bytes().get(1).copied();
            if matches!(kind, Some(b'0' | b'9')) {
                let run = rest[1..].bytes().take_while(|&c| Some(c) == kind).count();
                if !rest[1 + run..].starts_with(|c: char| c.is_ascii_digit()) {
                    let digits = format!("{:09}", at.nanos);
                    let mut fraction = digits[..run.min(9)].to_string();
                    if kind == Some(b'9') {
                        fraction = fraction.trim_end_matches('0').to_string();
                    }
                    if !fraction.is_empty() {
                        out.push_str(&rest[..1]);
                        out.push_str(&fraction);
                    }
                    rest = &rest[1 + run..];
                    continue;
                }
            }
        }
        let elements: &[(&str, String)] = &[
            ("January", month_name.to_string()),
            ("Jan", month_name[..3].to_string()),
            ("Monday", DAYS[weekday].to_string()),
            ("Mon", DAYS[weekday][..3].to_string()),
            ("MST", "UTC".to_string()),
            ("2006", format!("{year:04}")),
            ("Z07:00:00", "Z".to_string()),
            ("Z070000", "Z".to_string()),
            ("Z07:00", "Z".to_string()),
            ("Z0700", "Z".to_string()),
            ("Z07", "Z".to_string()),
            ("-07:00:00", "+00:00:00".to_string()),
            ("-070000", "+000000".to_string()),
            ("-07:00", "+00:00".to_string()),
            ("-0700", "+0000".to_string()),
            ("-07", "+00".to_string()),
            ("002", format!("{yday:03}")),
            ("__2", format!("{yday:>3}")),
            ("_2", format!("{day:>2}")),
            ("01", format!("{month:02}")),
            ("02", format!("{day:02}")),
            ("03", format!("{hour12:02}")),
            ("04", format!("{minute:02}")),
            ("05", format!("{second:02}")),
            ("06", format!("{:02}", year.rem_euclid(100))),
            ("15", format!("{hour:02}")),
            ("PM", if hour >= 12 { "PM" } else { "AM" }.to_string()),
            ("pm", if hour >= 12 { "pm" } else { "am" }.to_string()),
            ("1", month.to_string()),
            ("2", day.to_string()),
            ("3", hour12.to_string()),
            ("4", minute.to_string()),
            ("5", second.to_string()),
        ];
        match elements.iter().find(|(element, _)| rest.starts_with(element)) {
            Some((element, value)) => {
                out.push_str(value);
                rest = &rest[element.len()..];
            }
            None => {
                let c = rest.chars().next().unwrap_or_default();
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;

    fn run(source: &str, options: &Statics) -> Result<String, String> {
        Ok(go::compile(source, ("{{repl", "}}"), &functions(options).into())?
            .execute(&GoValue::Nil, &Budget::default())?)
    }

    fn expect(cases: &[(&str, &str)]) {
        for (source, expected) in cases {
            assert_eq!(run(source, &Statics::default()).as_deref(), Ok(*expected), "{source}");
        }
    }

    #[test]
    fn kots_build_strings() {
        // kots pkg/template/builder_test.go TestBuildStrings, as in
        // tests/fixtures/repeat/kots/static-functions (ConfigOption lives in the config context).
        expect(&[
            (r#"{{repl ToLower "ABcd87-()"}}"#, "abcd87-()"),
            (r#"{{repl (ToUpper "ABcd87-()") }}"#, "ABCD87-()"),
            ("{{repl TrimSpace \"   maybe spaces,\\tmaybe not \\t  \"}}", "maybe spaces,\tmaybe not"),
            ("{{repl Trim \"aaaaamaybe spaces,\\tmaybe not \\taaa\" \"a\"}}", "maybe spaces,\tmaybe not \t"),
            (r#"{{repl UrlEncode "?some url unsafe=%value"}}"#, "%3Fsome+url+unsafe%3D%25value"),
            (r#"{{repl Base64Encode "clear text"}}"#, "Y2xlYXIgdGV4dA=="),
            (r#"{{repl Base64Decode "Y2xlYXIgdGV4dA=="}}"#, "clear text"),
            (r#"{{repl Split "1,2,3,4" ","}}"#, "[1 2 3 4]"),
            (r#"{{repl HumanSize 387346587344}}"#, "387.3GB"),
            (r#"{{repl Mult 34 2}}"#, "68"),
            (r#"{{repl ParseInt "-15"}}"#, "-15"),
            (r#"{{repl Add 2 3}}"#, "5"),
            (r#"{{repl ParseUint "15"}}"#, "15"),
            (r#"{{repl Sub 1.5 1}}"#, "0.5"),
            (r#"{{repl Div 15.0 2}}"#, "7.5"),
            (r#"{{repl ParseFloat "1.5"}}"#, "1.5"),
            (r#"{{repl ParseBool "True"}}"#, "true"),
            (
                r#"{{repl print "abc\n123 456\nabc\n" | YamlEscape }}"#,
                "                    |\n                        abc\n                        123 456\n                        abc\n                    ",
            ),
        ]);
    }

    #[test]
    fn upstream_pending_static_functions() {
        // Every template in tests/fixtures/repeat/kots/static-functions gives the value its
        // expected.yaml shows (ConfigOption belongs to the config context and is skipped).
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/repeat/kots/static-functions");
        let read = |name: &str| {
            let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap_or_default();
            crate::doc::read_yaml_documents(&text).unwrap_or_default().into_iter().next().unwrap_or_default()
        };
        let (input, expected) = (read("input.yaml"), read("expected.yaml"));
        let items = |doc: &crate::doc::Value| doc["items"].as_array().cloned().unwrap_or_default();
        let mut checked = 0;
        for item in items(&input) {
            let name = item["metadata"]["name"].as_str().unwrap_or_default();
            let Some(want) = items(&expected).into_iter().find(|e| {
                e["metadata"]["name"] == name
                    && !e["metadata"]["annotations"]["fn.blueprint.dev/generated-by"].is_null()
            }) else {
                continue;
            };
            for field in ["data", "typed"] {
                // YamlEscape writes YAML: the fixture shows what its result reads as in the text.
                for (key, template) in
                    item[field].as_object().into_iter().flatten().filter(|(k, _)| !k.starts_with("YamlEscape"))
                {
                    let Some(template) =
                        template.as_str().filter(|t| t.contains("repl") && !t.contains("ConfigOption"))
                    else {
                        continue;
                    };
                    let want = match &want[field][key] {
                        crate::doc::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let got = run(&template.replace("repl{{", "{{repl"), &Statics::default());
                    assert_eq!(got.as_deref(), Ok(want.as_str()), "{name}.{field}.{key}: {template}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 17 + 8);
    }

    #[test]
    fn offline_defaults_and_settings() {
        let defaults = Statics::default();
        let got = run(
            "{{repl IsKurl}} {{repl IsAirgap}} {{repl Sequence}} [{{repl ChannelName}}] {{repl LocalImageName \"nginx:1.7.9\"}} \
             {{repl HasLocalRegistry}} [{{repl LocalRegistryAddress}}]",
            &defaults,
        );
        assert_eq!(got.as_deref(), Ok("false false -1 [] nginx:1.7.9 false []"));
        let said: Vec<(bool, String)> = defaults.defaulted.take();
        let names: Vec<&str> = said.iter().map(|(_, m)| m.split(' ').next().unwrap_or_default()).collect();
        assert_eq!(names, ["ChannelName", "IsAirgap", "IsKurl", "LocalImageName", "Sequence"]);
        assert_eq!(said.iter().filter(|(warning, _)| *warning).count(), 3, "{said:?}");
        let registry = LocalRegistry { host: "r.example.com".into(), namespace: "apps".into(), ..Default::default() };
        let set =
            Statics { is_kurl: Some(true), sequence: Some(7), local_registry: Some(registry), ..Statics::default() };
        let got = run(
            "{{repl IsKurl}} {{repl Sequence}} {{repl LocalImageName \"nginx\"}} {{repl LocalImageName \"quay.io/a/b:1.2\"}} \
             {{repl LocalImageName \"b:1@sha256:00\"}} {{repl LocalRegistryAddress}}",
            &set,
        );
        assert_eq!(
            got.as_deref(),
            Ok("true 7 r.example.com/apps/nginx:latest r.example.com/apps/b:1.2 r.example.com/apps/b@sha256:00 r.example.com/apps")
        );
        assert!(set.defaulted.take().is_empty());
    }

    #[test]
    fn kots_static_semantics() {
        // kots static_context.go: Trim without a cutset trims space; Base64Decode of bad input is
        // ""; arithmetic of non-numbers is 0; Parse* give Go's value on error; version context
        // without a version.
        expect(&[
            (r#"{{repl Trim "  x  "}}"#, "x"),
            (r#"{{repl Base64Decode "%%%"}}|"#, "|"),
            (r#"{{repl Add "1" 2}} {{repl Div 7 2}} {{repl Div 7.0 4}} {{repl Sub 2 3.5}}"#, "0 3 1.75 -1.5"),
            (
                r#"{{repl ParseInt "ff" 16}} {{repl ParseInt "x"}} {{repl ParseFloat "x"}} {{repl ParseBool "yes"}}"#,
                "255 0 0 false",
            ),
            (r#"{{repl ParseInt "99999999999999999999"}}"#, "9223372036854775807"),
            (
                r#"{{repl HumanSize 1000}} {{repl HumanSize 10}} {{repl HumanSize 1.5e15}} {{repl HumanSize "x"}}"#,
                "1kB 10B 1.5PB 0B",
            ),
            (r#"{{repl Sequence}} {{repl Cursor}}|{{repl IsAirgap}}"#, "-1 |false"),
            (r#"{{repl upper "sprig too"}}"#, "SPRIG TOO"),
        ]);
        let err = run("{{repl Div 1 0}}", &Statics::default()).err().unwrap_or_default();
        assert!(err.contains("error calling Div: runtime error: integer divide by zero"), "{err}");
        for (name, call, expected) in [
            ("Distribution", "{{repl Distribution}}", "Distribution is a KOTS function that reads the cluster"),
            ("KurlString", r#"{{repl KurlString "x"}}"#, "KurlString is a KOTS function that reads the cluster"),
            ("IdentityServiceRoles", "{{repl IdentityServiceRoles}}", "IdentityServiceRoles is a KOTS function"),
            ("IdentityServiceName", "{{repl IdentityServiceName}}", "IdentityServiceName is made of the app's slug"),
            ("LicenseFieldValue", r#"{{repl LicenseFieldValue "appSlug"}}"#, "LicenseFieldValue needs the license"),
            ("RandomString", "{{repl RandomString 10}}", "RandomString is not available: its result changes"),
            ("Now", "{{repl Now}}", "Now needs a fixed clock so that renders are reproducible: set spec.kots.now"),
            (
                "Namespace",
                "{{repl Namespace}}",
                "Namespace needs the namespace the application is installed in: set spec.kots.namespace",
            ),
        ] {
            let err = run(call, &Statics::default()).err().unwrap_or_default();
            assert!(err.contains(&format!("error calling {name}: {expected}")), "{call}: {err}");
        }
    }

    #[test]
    fn configured_clock_and_namespace() {
        let now = Instant::parse_rfc3339("2024-02-29T23:04:05.123+01:30");
        assert_eq!(now, Ok(Instant { seconds: 1_709_242_445, nanos: 123_000_000 }));
        let options = Statics { now: now.ok(), namespace: Some("apps".into()), ..Statics::default() };
        for (source, expected) in [
            ("{{repl Now}}", "2024-02-29T21:34:05Z"),
            (r#"{{repl NowFmt "2006-01-02T15:04:05Z07:00"}}"#, "2024-02-29T21:34:05Z"),
            (
                r#"{{repl NowFmt "Mon Jan _2 3:04:05.000 PM MST 2006 (002) -0700"}}"#,
                "Thu Feb 29 9:34:05.123 PM UTC 2024 (060) +0000",
            ),
            (r#"{{repl NowFmt "20060102.999999"}}"#, "20240229.123"),
            (r#"{{repl NowFmt ""}}"#, "2024-02-29T21:34:05Z"),
            ("{{repl Namespace}}", "apps"),
        ] {
            assert_eq!(run(source, &options).as_deref(), Ok(expected), "{source}");
        }
        assert!(Instant::parse_rfc3339("2024-02-30T00:00:00Z").is_err());
        assert!(Instant::parse_rfc3339("yesterday").is_err());
    }

    #[test]
    fn yaml_escape_follows_yaml_v3() {
        // kots static_context_test.go TestYamlEscape checks only that the result reads back;
        // these pin yaml.v3's style choices.
        for (input, expected) in [
            ("abc", "abc\n"),
            ("", "\"\"\n"),
            ("true", "\"true\"\n"),
            ("yes", "\"yes\"\n"),
            ("0777", "\"0777\"\n"),
            ("1.5", "\"1.5\"\n"),
            ("2024-01-02", "\"2024-01-02\"\n"),
            ("a: b", "'a: b'\n"),
            (" lead", "' lead'\n"),
            ("it's #1", "'it''s #1'\n"),
            ("tab\there", "\"tab\\there\"\n"),
            ("a\nb", "|-\n    a\n    b\n"),
            ("a\nb\n\n", "|+\n    a\n    b\n\n"),
            (" a\nb\n", "|4\n     a\n    b\n"),
            ("a \nb", "\"a \\nb\"\n"),
        ] {
            assert_eq!(yaml_v3_string(input), expected, "{input:?}");
        }
    }
}
