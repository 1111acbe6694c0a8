//! Policies (DESIGN.md §14): ordered rules deciding which tools a caller may see and call.
//!
//! A rule matches a call when every "who" field it has matches the caller (`callers`,
//! `groups`, `claims`), every "what" field matches the tool (`toolkits`, `tools` with globs and
//! version ranges, `destructive`), and its `when` condition (CEL, on the validated input) holds.
//! The first rule that matches decides (`allow` or `deny`). No policies: everything is allowed,
//! as before policies existed. Once any exists, what no rule allows is denied.
//!
//! Visibility is decided without an input: a tool is visible when the first rule whose who and
//! what match is an `allow` (with or without a condition: some input may be allowed), or when a
//! conditional `deny` is followed by such an `allow`. A tool a caller may not see is answered
//! exactly like one that does not exist; a visible tool whose call no rule allows is refused
//! with the `reason` of the rule that decided (never its expression).

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cel::common::value::{CowVal, Val};

use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::caller::Caller;
use super::native::{self, Native};
use crate::catalog::registry::Entry;

/// `allow` or `deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// The call may be made (and the tool is listed).
    Allow,
    /// The call is refused (and, without a condition, the tool is not listed).
    Deny,
}

/// One entry of `policies:` in the configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// A name for logs, metrics and `otc-bridge policy explain` (default: its position, `#1`).
    #[serde(default)]
    pub name: Option<String>,
    /// What the rule decides.
    pub effect: Effect,
    /// Caller names (globs: `ci-*`); any of them.
    #[serde(default)]
    pub callers: Vec<String>,
    /// Groups; the caller must be in one of them.
    #[serde(default)]
    pub groups: Vec<String>,
    /// JWT claims the caller's token must carry: the claim equals the value, or (an array, or a
    /// space-separated string such as `scope`) contains it.
    #[serde(default)]
    pub claims: BTreeMap<String, Value>,
    /// Toolkits (globs: `Github*`); any of them.
    #[serde(default)]
    pub toolkits: Vec<String>,
    /// Tool ids with globs and an optional version range: `Github.Pulls*`, `Github.Pulls*@^3`,
    /// `Stripe.*@>=2, <4`; any of them.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Only tools that are (`true`) or are not (`false`) destructive.
    #[serde(default)]
    pub destructive: Option<bool>,
    /// A CEL condition on the call: `input` (the validated arguments), `caller` (`name`,
    /// `groups`, `claims`) and `tool` (`id`, `name`, `toolkit`, `version`, `destructive`).
    #[serde(default)]
    pub when: Option<String>,
    /// What a caller refused by this rule is told (default: a generic refusal).
    #[serde(default)]
    pub reason: Option<String>,
}

/// Why a configuration's policies cannot be used; names the rule.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A glob does not parse.
    #[error("policy {rule}: '{pattern}' is not a valid pattern: {source}")]
    Pattern {
        /// The rule's name or position.
        rule: String,
        /// The pattern.
        pattern: String,
        /// Why.
        #[source]
        source: globset::Error,
    },
    /// A tool pattern's version range does not parse.
    #[error("policy {rule}: '{pattern}' has no valid version range after '@' ({source})")]
    Versions {
        /// The rule's name or position.
        rule: String,
        /// The pattern.
        pattern: String,
        /// Why.
        #[source]
        source: semver::Error,
    },
    /// The condition is not CEL.
    #[error("policy {rule}: 'when' is not a valid CEL expression: {reason}")]
    Condition {
        /// The rule's name or position.
        rule: String,
        /// The parser's words.
        reason: String,
    },
    /// The condition reads a variable there is none of.
    #[error("policy {rule}: 'when' reads '{variable}', which is not one of input, caller and tool")]
    UnknownVariable {
        /// The rule's name or position.
        rule: String,
        /// The variable.
        variable: String,
    },
    /// The rule names a group no caller can be in.
    #[error(
        "policy {rule}: group '{group}' is not given to any API key or to `mcp.caller` (and JWTs, which could carry it, are not accepted)"
    )]
    UnknownGroup {
        /// The rule's name or position.
        rule: String,
        /// The group.
        group: String,
    },
    /// Two rules share a name.
    #[error("policy name '{0}' is used twice; names identify rules in logs and metrics")]
    DuplicateName(String),
}

/// The variables a condition may read.
const VARIABLES: [&str; 3] = ["input", "caller", "tool"];

/// The compiled policies; empty when the configuration has none.
#[derive(Default)]
pub struct Policies {
    /// Which tools of a catalog each recent caller sees, found as searches ask.
    visible: Mutex<HashMap<(u64, String), Arc<Visible>>>,
    rules: Vec<Rule>,
    /// The rules' name patterns, matched once per decision for all rules.
    index: Index,
    /// Which rules' what matches each tool, as tools are asked about.
    covered: Covered,
    /// CEL's standard library, built once: a condition is evaluated in a context over it.
    env: Option<Arc<cel::Env>>,
    /// What of the input the conditions read ([`InputRead`]).
    input_read: InputRead,
    /// The names the conditions ask CEL's resolver for ([`read_names`]).
    names: Vec<String>,
}

impl std::fmt::Debug for Policies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policies")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

/// A tool id pattern: a glob over `Toolkit.Tool` and an optional version range.
#[derive(Debug)]
struct ToolPattern {
    name: GlobMatcher,
    versions: Option<semver::VersionReq>,
}

#[derive(Debug)]
struct Rule {
    label: String,
    effect: Effect,
    callers: Option<GlobSet>,
    groups: Vec<String>,
    claims: Vec<(String, Value)>,
    toolkits: Option<GlobSet>,
    tools: Vec<ToolPattern>,
    destructive: Option<bool>,
    when: Option<Condition>,
    reason: Option<String>,
    /// Which of its name patterns the rule has ([`CALLERS`], [`TOOLKITS`], [`TOOLS`]): each
    /// must match for the rule to apply.
    patterns: u8,
}

/// The bits of [`Rule::patterns`] and of what [`Index::covering`] found.
const CALLERS: u8 = 1;
const TOOLKITS: u8 = 2;
const TOOLS: u8 = 4;

/// Every rule's name patterns in one set per field, with the rule each pattern belongs to, so
/// that a decision matches the caller's name, the toolkit and the tool's `Toolkit.Tool` once
/// each (one pass of a combined automaton) instead of once per rule: with 100 rules, matching
/// rule by rule was most of a decision's time.
#[derive(Debug, Default)]
struct Index {
    /// How many rules there are.
    rules: usize,
    callers: PatternSet,
    toolkits: PatternSet,
    tools: PatternSet,
    /// The version range of each pattern of `tools`, in the same order.
    versions: Vec<Option<semver::VersionReq>>,
}

/// Globs from several rules, and the rule of each.
#[derive(Debug, Default)]
struct PatternSet {
    set: GlobSet,
    rules: Vec<usize>,
}

struct Condition {
    program: cel::Program,
    /// The condition answered without the interpreter where that is certain ([`Native`]).
    native: Option<Native>,
}

impl std::fmt::Debug for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Condition").finish_non_exhaustive()
    }
}

/// How many callers' views [`Policies::visible_to`] keeps.
const VISIBLE_CALLERS: usize = 256;

const UNKNOWN: u8 = 0;
const SEEN: u8 = 1;
const HIDDEN: u8 = 2;

/// What one caller sees of one catalog, by position, as far as it was asked.
#[derive(Debug)]
pub(crate) struct Visible {
    seen: Box<[AtomicU8]>,
}

impl Visible {
    /// Whether the tool at `position` is seen: known, or decided by `sees` now and kept.
    pub(crate) fn sees(&self, position: usize, sees: impl FnOnce() -> bool) -> bool {
        let Some(slot) = self.seen.get(position) else {
            return sees();
        };
        match slot.load(Ordering::Relaxed) {
            SEEN => true,
            HIDDEN => false,
            _ => {
                let seen = sees();
                slot.store(if seen { SEEN } else { HIDDEN }, Ordering::Relaxed);
                seen
            }
        }
    }
}

/// How a call was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The call may be made; by the rule at this index (`None`: there are no policies).
    Allowed(Option<usize>),
    /// The tool is visible but this call is refused: by the rule at this index, or (`None`) by
    /// no rule allowing it (the index of the conditional rule that did not allow it, if any).
    Refused(Option<usize>),
    /// The caller may not see the tool: answered as if it did not exist.
    Hidden,
}

impl Policies {
    /// Compiles `configs`. `known_groups` are the groups callers can be in (API keys', the stdio
    /// caller's); `None` when JWTs are accepted (a token may carry any group), so that no group
    /// can be refused as unknown.
    pub fn compile(
        configs: &[PolicyConfig],
        known_groups: Option<&[String]>,
    ) -> Result<Self, PolicyError> {
        let mut names = std::collections::HashSet::new();
        let mut rules = Vec::with_capacity(configs.len());
        for (index, config) in configs.iter().enumerate() {
            if let Some(name) = &config.name
                && !names.insert(name.as_str())
            {
                return Err(PolicyError::DuplicateName(name.clone()));
            }
            rules.push(Rule::compile(index, config, known_groups)?);
        }
        let env = rules
            .iter()
            .any(|r| r.when.is_some())
            .then(|| Arc::new(cel::Env::stdlib()));
        let index = Index::build(configs, &rules)?;
        let conditions = || rules.iter().filter_map(|r| r.when.as_ref());
        let mut names = Vec::new();
        for condition in conditions() {
            read_names(condition.program.expression(), &mut names);
        }
        let input_read = InputRead::of(conditions(), &names);
        Ok(Self {
            visible: Mutex::default(),
            rules,
            index,
            covered: Covered::default(),
            env,
            input_read,
            names,
        })
    }

    /// Whether there are no policies (everything is allowed).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// The rule at `index`'s name (or `#position`).
    pub fn label(&self, index: usize) -> &str {
        self.rules.get(index).map_or("", |r| r.label.as_str())
    }

    /// What a caller refused by the rule at `index` is told.
    pub fn reason(&self, index: Option<usize>) -> Option<&str> {
        self.rules.get(index?)?.reason.as_deref()
    }

    /// Whether `caller` may see `entry`.
    pub fn sees(&self, caller: &Caller, entry: &Entry) -> bool {
        if self.rules.is_empty() {
            return true;
        }
        let applying = self.applying(caller, entry);
        self.visible(&applying)
    }

    /// What `caller` sees of the catalog `catalog_id` (of `len` tools, by position), filled in
    /// as it is asked and kept for the next requests of the same caller: a search asks about
    /// thousands of candidates, and asking the rules about each, every time, made a restricted
    /// search four times slower than an unrestricted one. At most [`VISIBLE_CALLERS`] are kept;
    /// past that the cache starts over. A new catalog or new rules (a reload) start empty.
    pub(crate) fn visible_to(&self, caller: &Caller, catalog_id: u64, len: usize) -> Arc<Visible> {
        let key = (
            catalog_id,
            format!(
                "{}\u{0}{}\u{0}{}",
                caller.name,
                caller.groups.join("\u{0}"),
                Value::Object(caller.claims.clone())
            ),
        );
        let mut visible = self.visible.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = visible.get(&key) {
            return Arc::clone(known);
        }
        if visible.len() >= VISIBLE_CALLERS {
            visible.clear();
        }
        let known = Arc::new(Visible {
            seen: (0..len).map(|_| AtomicU8::new(UNKNOWN)).collect(),
        });
        visible.insert(key, Arc::clone(&known));
        known
    }

    /// Which rules' who and what match `caller` and `entry` (conditions aside): the what is
    /// read from [`Covered`] (matched once per tool), the who is checked as each rule is asked
    /// about, so a question answered by the first rules asks no further and nothing is
    /// collected.
    fn applying<'p>(&'p self, caller: &'p Caller, entry: &Entry) -> Applying<'p> {
        Applying {
            caller,
            covered: self
                .covered
                .get_or_insert(entry, || self.index.covering(&self.rules, entry)),
            named: self.index.named(&caller.name),
        }
    }

    /// Whether a tool is visible, given which rules' who and what match it.
    fn visible(&self, applying: &Applying<'_>) -> bool {
        for (_, rule) in applying.rules(&self.rules) {
            match (rule.effect, &rule.when) {
                (Effect::Allow, _) => return true,
                (Effect::Deny, None) => return false,
                // Some input may escape this deny: a later rule decides what is seen.
                (Effect::Deny, Some(_)) => {}
            }
        }
        false
    }

    /// Decides a call of `entry` by `caller` with the validated `input`.
    pub fn decide(&self, caller: &Caller, entry: &Entry, input: &Map<String, Value>) -> Verdict {
        self.decide_as(caller, entry, input, Visibility::Unknown)
    }

    /// [`Policies::decide`] for a tool found among those `caller` sees under these same rules
    /// ([`crate::call::resolve`]): whether it is seen is not asked a second time. (Asking again
    /// was a tenth of what policies add to a call.)
    pub(crate) fn decide_seen(
        &self,
        caller: &Caller,
        entry: &Entry,
        input: &Map<String, Value>,
    ) -> Verdict {
        self.decide_as(caller, entry, input, Visibility::Known)
    }

    fn decide_as(
        &self,
        caller: &Caller,
        entry: &Entry,
        input: &Map<String, Value>,
        visibility: Visibility,
    ) -> Verdict {
        if self.rules.is_empty() {
            return Verdict::Allowed(None);
        }
        // Who and what are matched once for all rules; the conditions' variables are built
        // once, when the first condition needs them.
        let applying = self.applying(caller, entry);
        if visibility == Visibility::Unknown && !self.visible(&applying) {
            return Verdict::Hidden;
        }
        let vars = Variables::new(caller, entry, input, self);
        // The first rule that applies and whose condition holds decides; when none does, the
        // first conditional rule that applied is the one whose reason explains the refusal.
        let mut unmet = None;
        for (index, rule) in applying.rules(&self.rules) {
            let holds = match &rule.when {
                None => true,
                Some(condition) => self.holds(condition, &vars),
            };
            match (rule.effect, holds) {
                (Effect::Allow, true) => return Verdict::Allowed(Some(index)),
                (Effect::Deny, true) => return Verdict::Refused(Some(index)),
                (Effect::Allow, false) => {
                    unmet.get_or_insert(index);
                }
                (Effect::Deny, false) => {}
            }
        }
        Verdict::Refused(unmet)
    }

    /// Whether `condition` holds for this call. An expression that fails to evaluate (a field
    /// the input lacks, a type mismatch) or yields no boolean does not hold: an `allow` then
    /// does not allow, and a `deny` does not deny, so a conditional rule never decides on a
    /// value it could not read; what no rule allows is refused.
    fn holds(&self, condition: &Condition, vars: &Variables<'_>) -> bool {
        let call = native::Call {
            input: vars.input,
            caller: vars.caller,
            entry: vars.entry,
        };
        if let Some(holds) = condition.native.as_ref().and_then(|n| n.holds(call)) {
            return holds;
        }
        self.interpreted(condition, vars)
    }

    /// Whether `condition` holds, as CEL's interpreter evaluates it.
    fn interpreted(&self, condition: &Condition, vars: &Variables<'_>) -> bool {
        let Some(env) = &self.env else {
            return false;
        };
        // A context costs a pointer copy; the variables it reads are the resolver's.
        let mut context = cel::Context::with_env(Arc::clone(env));
        context.set_variable_resolver(vars);
        matches!(
            condition.program.execute(&context),
            Ok(cel::Value::Bool(true))
        )
    }
}

/// Whether the tool a decision is about is known to be seen by its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visibility {
    /// Found among the tools the caller sees, under the same rules.
    Known,
    /// Not asked yet: a tool the caller does not see is [`Verdict::Hidden`].
    Unknown,
}

/// Which rules apply to one caller and one tool, asked rule by rule ([`Policies::applying`]).
struct Applying<'p> {
    caller: &'p Caller,
    /// The rules whose what covers the tool.
    covered: Arc<Rules>,
    /// Per rule, whether one of its caller patterns names the caller (empty when no rule has
    /// one).
    named: Vec<u8>,
}

impl Applying<'_> {
    /// The rules that apply, in order, each with its index: only those whose what covers the
    /// tool are asked about their who. (Asking each rule whether it covers the tool was a tenth
    /// of a decision's instructions with 100 rules, callgrind.)
    fn rules<'r>(&self, rules: &'r [Rule]) -> impl Iterator<Item = (usize, &'r Rule)> {
        self.covered
            .iter()
            .filter_map(move |index| rules.get(index).map(|rule| (index, rule)))
            .filter(|&(index, rule)| self.applies(index, rule))
    }

    /// Whether the who of `rule`, the rule at `index`, matches.
    fn applies(&self, index: usize, rule: &Rule) -> bool {
        (rule.patterns & CALLERS == 0 || self.named.get(index).is_some_and(|&n| n != 0))
            && rule.is_in_groups(self.caller)
            && rule.has_claims(self.caller)
    }
}

/// What rules match a call by, each made once per decision and only when a rule needs it: the
/// tool's `Toolkit.Tool` name and the caller's name as glob candidates (not one per pattern),
/// and the tool's version. A rule on groups and toolkits needs none of them.
struct Facts<'a> {
    entry: &'a Entry,
    caller_name: &'a str,
    /// Where the tool's name is kept once made (the candidate borrows it).
    name_text: &'a std::cell::OnceCell<String>,
    name: std::cell::OnceCell<globset::Candidate<'a>>,
    caller: std::cell::OnceCell<globset::Candidate<'a>>,
    version: std::cell::OnceCell<semver::Version>,
}

impl<'a> Facts<'a> {
    fn new(entry: &'a Entry, name: &'a std::cell::OnceCell<String>, caller: &'a Caller) -> Self {
        Self {
            entry,
            caller_name: &caller.name,
            name_text: name,
            name: std::cell::OnceCell::new(),
            caller: std::cell::OnceCell::new(),
            version: std::cell::OnceCell::new(),
        }
    }

    fn name(&self) -> &globset::Candidate<'a> {
        self.name.get_or_init(|| {
            let text: &'a String = self
                .name_text
                .get_or_init(|| self.entry.definition().id.name());
            globset::Candidate::new(text.as_str())
        })
    }

    fn caller(&self) -> &globset::Candidate<'a> {
        self.caller
            .get_or_init(|| globset::Candidate::new(self.caller_name))
    }

    fn version(&self) -> &semver::Version {
        self.version.get_or_init(|| {
            let v = self.entry.definition().version;
            semver::Version::new(v.major, v.minor, v.patch)
        })
    }
}

/// The variables of a decision's conditions (`input`, `caller`, `tool`), made into CEL values
/// only as far as an expression reads them: CEL asks for `input.a` before `input`, and the
/// answer is `input["a"]` alone. The values of the names the conditions read
/// ([`Policies::names`]) are kept for the decision's other conditions; scalars are kept in
/// place ([`Held`]) and the input's strings and keys are borrowed ([`borrowed`]).
/// `has(input.a)` asks for the whole input, which is then a view that reads the fields the
/// conditions name in place (the variables themselves, as a CEL map), when that is all they
/// read of it ([`InputRead`]). Converting the whole input and caller for every decision, and then a map
/// and a boxed name and value for every name read, were most of a decision's cost.
struct Variables<'a> {
    input: &'a Map<String, Value>,
    caller: &'a Caller,
    entry: &'a Entry,
    /// The top-level fields of `input` the conditions read, when that is all they read of it
    /// ([`InputRead::Fields`]), each with the position of its name (`input.a`) in `names`.
    fields: Option<&'a [(String, Option<usize>)]>,
    /// The names the conditions read; the value of the one at position `i` is `kept[i]`.
    names: &'a [String],
    /// The values of `names` asked for so far (`None`: a field that is not there); a name
    /// past the last slot, or not among `names`, is converted each time it is asked for.
    kept: [OnceLock<Option<Held<'a>>>; 8],
}

/// The variables besides the input, which are made as JSON and converted.
#[derive(Debug, Clone, Copy)]
enum About {
    Caller,
    Tool,
}

impl<'a> Variables<'a> {
    fn new(
        caller: &'a Caller,
        entry: &'a Entry,
        input: &'a Map<String, Value>,
        policies: &'a Policies,
    ) -> Self {
        let fields = match &policies.input_read {
            InputRead::Fields(fields) => Some(fields.as_slice()),
            InputRead::Whole => None,
        };
        Self {
            input,
            caller,
            entry,
            fields,
            names: &policies.names,
            kept: Default::default(),
        }
    }

    /// The CEL value of `name` (`input`, `input.a.b`, `caller.name`), or `None` as for
    /// [`Variables::value`]. The input's values borrow it.
    fn held(&self, name: &str) -> Option<Held<'a>> {
        let input: &'a Map<String, Value> = self.input;
        match name.split_once('.') {
            None if name == "input" => Some(Held::Boxed(borrowed_map(input.iter()))),
            Some(("input", path)) => {
                let mut fields = path.split('.');
                let mut value = input.get(fields.next()?)?;
                for field in fields {
                    value = value.get(field)?;
                }
                Some(Held::of(value))
            }
            _ => self.value(name).and_then(to_val).map(Held::Boxed),
        }
    }

    /// The value of `name` when it is `caller`, `tool` or a path in them (`caller.name`), or
    /// `None` when it is neither or is a path that cannot be read without the whole variable.
    /// (The input is read by [`Variables::held`], borrowed.)
    fn value(&self, name: &str) -> Option<Value> {
        let (root, path) = match name.split_once('.') {
            Some((root, path)) => (root, Some(path)),
            None => (name, None),
        };
        let about = match root {
            "caller" => About::Caller,
            "tool" => About::Tool,
            _ => return None,
        };
        match path {
            Some(path) => self.field(about, path),
            None => Some(self.json(about)),
        }
    }

    /// The caller or the tool as JSON.
    fn json(&self, about: About) -> Value {
        match about {
            About::Caller => json!({
                "name": self.caller.name,
                "groups": self.caller.groups,
                "claims": self.caller.claims,
            }),
            About::Tool => {
                let def = self.entry.definition();
                json!({
                    "id": def.id.to_string(),
                    "name": def.id.name(),
                    "toolkit": def.id.toolkit,
                    "version": def.version.to_string(),
                    "destructive": self.entry.tool.destructive,
                })
            }
        }
    }

    /// `path` (one or more fields) inside the caller or the tool, when it can be read without
    /// converting the whole variable. `None` also where the field is missing: CEL then asks
    /// for a shorter name, down to the whole variable, and reports the missing field itself.
    fn field(&self, about: About, path: &str) -> Option<Value> {
        let mut fields = path.split('.');
        let first = fields.next()?;
        let def = || self.entry.definition();
        let mut value = match (about, first) {
            (About::Caller, "name") => Value::String(self.caller.name.clone()),
            // `has(caller.claims.scope)` asks for the claims whole.
            (About::Caller, "claims") => match fields.next() {
                Some(claim) => self.caller.claims.get(claim)?.clone(),
                None => Value::Object(self.caller.claims.clone()),
            },
            (About::Caller, "groups") => json!(self.caller.groups),
            (About::Tool, "destructive") => Value::Bool(self.entry.tool.destructive),
            (About::Tool, "toolkit") => Value::String(def().id.toolkit.clone()),
            (About::Tool, "id") => Value::String(def().id.to_string()),
            (About::Tool, "name") => Value::String(def().id.name()),
            (About::Tool, "version") => Value::String(def().version.to_string()),
            _ => return None,
        };
        for field in fields {
            value = value.get(field)?.clone();
        }
        Some(value)
    }
}

impl cel::context::VariableResolver for Variables<'_> {
    fn resolve<'b>(&'b self, name: &str) -> Option<CowVal<'b, 'b>> {
        if name == "input" && self.fields.is_some() {
            return Some(CowVal::Borrowed(self));
        }
        let kept = self
            .names
            .iter()
            .position(|n| n == name)
            .and_then(|at| self.kept.get(at));
        match kept {
            Some(slot) => slot
                .get_or_init(|| self.held(name))
                .as_ref()
                .map(|held| CowVal::Borrowed(held.val())),
            None => self.held(name).map(|held| CowVal::Owned(held.into_boxed())),
        }
    }
}

fn to_val(value: Value) -> Option<Box<dyn Val>> {
    cel_value(value).try_into().ok()
}

/// A CEL value of a decision's variables: a scalar in place, where most of what conditions
/// read is one (`input.a < 1000`), a container boxed. The input's strings and keys are
/// borrowed.
#[derive(Debug)]
enum Held<'a> {
    Null(cel::common::types::CelNull),
    Bool(cel::common::types::CelBool),
    Int(cel::common::types::CelInt),
    UInt(cel::common::types::CelUInt),
    Double(cel::common::types::CelDouble),
    String(cel::common::types::CelString<'a>),
    Boxed(Box<dyn Val + 'a>),
}

impl<'a> Held<'a> {
    /// JSON as a CEL value that borrows its strings and keys: no copy of the input, and one
    /// conversion (JSON → CEL's value types) instead of two (JSON → `cel::Value` → CEL's value
    /// types). Numbers as in [`cel_value`].
    fn of(value: &'a Value) -> Self {
        use cel::common::types::{
            CelBool, CelDouble, CelInt, CelList, CelNull, CelString, CelUInt,
        };
        match value {
            Value::Null => Self::Null(CelNull),
            Value::Bool(b) => Self::Bool(CelBool::from(*b)),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Self::Int(CelInt::from(i)),
                (None, Some(u)) => Self::UInt(CelUInt::from(u)),
                (None, None) => Self::Double(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
            },
            Value::String(s) => Self::String(CelString::from(s.as_str())),
            Value::Array(items) => Self::Boxed(Box::new(CelList::from(
                items.iter().map(borrowed).collect::<Vec<_>>(),
            ))),
            Value::Object(members) => Self::Boxed(borrowed_map(members.iter())),
        }
    }

    fn val(&self) -> &(dyn Val + 'a) {
        match self {
            Self::Null(v) => v,
            Self::Bool(v) => v,
            Self::Int(v) => v,
            Self::UInt(v) => v,
            Self::Double(v) => v,
            Self::String(v) => v,
            Self::Boxed(v) => v.as_ref(),
        }
    }

    fn into_boxed(self) -> Box<dyn Val + 'a> {
        match self {
            Self::Null(v) => Box::new(v),
            Self::Bool(v) => Box::new(v),
            Self::Int(v) => Box::new(v),
            Self::UInt(v) => Box::new(v),
            Self::Double(v) => Box::new(v),
            Self::String(v) => Box::new(v),
            Self::Boxed(v) => v,
        }
    }
}

/// JSON as a boxed CEL value, as [`Held::of`].
fn borrowed(value: &Value) -> Box<dyn Val + '_> {
    Held::of(value).into_boxed()
}

/// JSON object members as a CEL map, as [`borrowed`].
fn borrowed_map<'a>(members: impl Iterator<Item = (&'a String, &'a Value)>) -> Box<dyn Val + 'a> {
    use cel::common::types::{CelMap, CelMapKey};
    Box::new(CelMap::from(
        members
            .map(|(k, v)| (CelMapKey::from(k.as_str()), borrowed(v)))
            .collect::<HashMap<_, _>>(),
    ))
}

/// The CEL type of the variables as the input ([`InputRead::Fields`]): a map, as the input is.
static MAP_TYPE: cel::common::types::Type = cel::common::types::MAP_TYPE;

impl std::fmt::Debug for Variables<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variables")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

/// The input as CEL sees it when the conditions read only named fields of it
/// ([`InputRead::Fields`]): a map of those fields, read in place by name and kept as the same
/// name's value is (`has(input.a)` then `input.a` reads `a` once). No such expression asks
/// anything of `input` but a field by its name (`has(input.a)`, or `input.a` once CEL found no
/// `input.a` of its own), so nothing is built for it: building a map of the fields for every
/// `has()` was most of what such a condition cost.
impl Val for Variables<'_> {
    fn get_type(&self) -> &cel::common::types::Type {
        &MAP_TYPE
    }

    fn cel_type() -> &'static cel::common::types::Type {
        &MAP_TYPE
    }

    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn cel::common::traits::Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }

    /// The named fields as a map of their own.
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v>
    where
        Self: 'v,
    {
        let input = self.input;
        borrowed_map(
            self.fields
                .unwrap_or_default()
                .iter()
                .filter_map(|(field, _)| input.get_key_value(field.as_str())),
        )
    }
}

impl cel::common::traits::Indexer for Variables<'_> {
    fn get<'b, 'v>(&'b self, key: &dyn Val) -> Result<CowVal<'b, 'v>, cel::ExecutionError>
    where
        Self: 'v,
    {
        let Some(key) = key.downcast_ref::<cel::common::types::CelString<'_>>() else {
            return Err(cel::ExecutionError::UnexpectedType {
                got: key.get_type().name().to_owned(),
                want: "map key".to_owned(),
            });
        };
        let key = key.inner();
        let missing = || cel::ExecutionError::no_such_key(key);
        let (_, at) = self
            .fields
            .unwrap_or_default()
            .iter()
            .find(|(field, _)| field == key)
            .ok_or_else(missing)?;
        let input: &Map<String, Value> = self.input;
        match at.and_then(|at| self.kept.get(at)) {
            Some(slot) => slot
                .get_or_init(|| input.get(key).map(Held::of))
                .as_ref()
                .map(|held| CowVal::Borrowed(held.val()))
                .ok_or_else(missing),
            None => input
                .get(key)
                .map(|value| CowVal::Owned(borrowed(value)))
                .ok_or_else(missing),
        }
    }

    fn steal<'v>(self: Box<Self>, key: &dyn Val) -> Result<Box<dyn Val + 'v>, cel::ExecutionError>
    where
        Self: 'v,
    {
        self.get(key).map(CowVal::into_owned)
    }
}

/// JSON as a CEL value. An integer is an `int` where it fits: JSON has one kind of number, and
/// CEL's literals (`1000`) are `int`, so an `int` compares on CEL's direct path where a `uint`
/// (what serde's conversion gives a positive number) takes its slower mixed-type one. Larger
/// integers are `uint`, the rest `double`.
fn cel_value(value: Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            (None, None) => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::String(Arc::new(s)),
        Value::Array(items) => {
            cel::Value::List(Arc::new(items.into_iter().map(cel_value).collect()))
        }
        Value::Object(members) => cel::Value::from(
            members
                .into_iter()
                .map(|(k, v)| (k, cel_value(v)))
                .collect::<std::collections::HashMap<_, _>>(),
        ),
    }
}

/// The who and what of a rule, for rules that are not policies (rate limits): the same keys,
/// matched the same way.
#[derive(Debug)]
pub(crate) struct Matcher(Rule);

impl Matcher {
    /// Compiles the who and what of `config` (its effect, condition and reason are not read).
    pub(crate) fn compile(
        index: usize,
        config: &PolicyConfig,
        known_groups: Option<&[String]>,
    ) -> Result<Self, PolicyError> {
        Rule::compile(index, config, known_groups).map(Self)
    }

    /// The rule's name or position.
    pub(crate) fn label(&self) -> &str {
        &self.0.label
    }

    /// Whether the who and what match.
    pub(crate) fn applies(&self, caller: &Caller, entry: &Entry) -> bool {
        let name = std::cell::OnceCell::new();
        self.0.applies(caller, &Facts::new(entry, &name, caller))
    }

    /// The first of the rule's groups the caller is in (what a per-group counter counts).
    pub(crate) fn group_of<'c>(&self, caller: &'c Caller) -> Option<&'c str> {
        caller
            .groups
            .iter()
            .find(|g| self.0.groups.is_empty() || self.0.groups.contains(g))
            .map(String::as_str)
    }
}

/// One rule as `otc-bridge policy explain` shows it: its label and effect, and what it made of
/// the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleTrace {
    /// The rule's name, or `#position`.
    pub label: String,
    /// What it decides when it applies.
    pub effect: Effect,
    /// Why it applies or not, in words.
    pub outcome: String,
}

impl Policies {
    /// Every rule's view of a call of `entry` by `caller` (with `input`, its condition is
    /// evaluated; without, it is not), in order: for `otc-bridge policy explain`. The verdict
    /// itself is [`Policies::decide`]'s.
    pub fn trace(
        &self,
        caller: &Caller,
        entry: &Entry,
        input: Option<&Map<String, Value>>,
    ) -> Vec<RuleTrace> {
        self.rules
            .iter()
            .map(|rule| {
                let outcome = match rule.mismatch(caller, entry) {
                    Some(why) => format!("does not apply: {why}"),
                    None => match (&rule.when, input) {
                        (None, _) => "applies".to_owned(),
                        (Some(_), None) => "applies when its condition holds".to_owned(),
                        (Some(condition), Some(input)) => {
                            let vars = Variables::new(caller, entry, input, self);
                            if self.holds(condition, &vars) {
                                "applies: its condition holds".to_owned()
                            } else {
                                "does not apply: its condition does not hold".to_owned()
                            }
                        }
                    },
                };
                RuleTrace {
                    label: rule.label.clone(),
                    effect: rule.effect,
                    outcome,
                }
            })
            .collect()
    }
}

impl Rule {
    fn compile(
        index: usize,
        config: &PolicyConfig,
        known_groups: Option<&[String]>,
    ) -> Result<Self, PolicyError> {
        let label = config
            .name
            .clone()
            .unwrap_or_else(|| format!("#{}", index + 1));
        let globs = |patterns: &[String]| -> Result<Option<GlobSet>, PolicyError> {
            if patterns.is_empty() {
                return Ok(None);
            }
            let mut set = GlobSetBuilder::new();
            for pattern in patterns {
                set.add(glob(&label, pattern)?);
            }
            set.build()
                .map(Some)
                .map_err(|source| PolicyError::Pattern {
                    rule: label.clone(),
                    pattern: patterns.join(", "),
                    source,
                })
        };
        if let Some(known) = known_groups
            && let Some(group) = config.groups.iter().find(|g| !known.contains(g))
        {
            return Err(PolicyError::UnknownGroup {
                rule: label,
                group: group.clone(),
            });
        }
        let tools = config
            .tools
            .iter()
            .map(|pattern| ToolPattern::compile(&label, pattern))
            .collect::<Result<_, _>>()?;
        let when = match &config.when {
            Some(source) => Some(Condition::compile(&label, source)?),
            None => None,
        };
        Ok(Self {
            callers: globs(&config.callers)?,
            groups: config.groups.clone(),
            claims: config
                .claims
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            toolkits: globs(&config.toolkits)?,
            tools,
            destructive: config.destructive,
            when,
            reason: config.reason.clone(),
            effect: config.effect,
            patterns: [
                (CALLERS, &config.callers),
                (TOOLKITS, &config.toolkits),
                (TOOLS, &config.tools),
            ]
            .into_iter()
            .filter(|(_, patterns)| !patterns.is_empty())
            .fold(0, |bits, (bit, _)| bits | bit),
            label,
        })
    }

    /// Whether the rule's who and what match (its condition aside).
    fn applies(&self, caller: &Caller, facts: &Facts<'_>) -> bool {
        self.is_for(caller, facts) && self.covers(facts)
    }

    /// Why the rule's who or what does not match, in words (the slow path of
    /// [`Rule::applies`], for explanations).
    fn mismatch(&self, caller: &Caller, entry: &Entry) -> Option<String> {
        if self
            .callers
            .as_ref()
            .is_some_and(|set| !set.is_match(&caller.name))
        {
            return Some("the caller's name matches none of its callers".to_owned());
        }
        if !self.groups.is_empty() && !self.groups.iter().any(|g| caller.in_group(g)) {
            return Some(format!(
                "the caller is in none of its groups ({})",
                self.groups.join(", ")
            ));
        }
        if let Some((claim, wanted)) = self
            .claims
            .iter()
            .find(|(claim, wanted)| !claim_has(caller.claims.get(claim), wanted))
        {
            return Some(format!(
                "the caller's claim '{claim}' does not hold {wanted}"
            ));
        }
        let name = std::cell::OnceCell::new();
        if !self.covers(&Facts::new(entry, &name, caller)) {
            return Some("the tool is not one it names".to_owned());
        }
        None
    }

    fn is_for(&self, caller: &Caller, facts: &Facts<'_>) -> bool {
        self.callers
            .as_ref()
            .is_none_or(|set| set.is_match_candidate(facts.caller()))
            && self.is_in_groups(caller)
            && self.has_claims(caller)
    }

    fn is_in_groups(&self, caller: &Caller) -> bool {
        self.groups.is_empty() || self.groups.iter().any(|g| caller.in_group(g))
    }

    fn has_claims(&self, caller: &Caller) -> bool {
        self.claims
            .iter()
            .all(|(claim, wanted)| claim_has(caller.claims.get(claim), wanted))
    }

    fn is_destructive_as(&self, entry: &Entry) -> bool {
        self.destructive
            .is_none_or(|wanted| wanted == entry.tool.destructive)
    }

    fn covers(&self, facts: &Facts<'_>) -> bool {
        let entry = facts.entry;
        if !self.is_destructive_as(entry) {
            return false;
        }
        if let Some(set) = &self.toolkits
            && !set.is_match(&entry.definition().id.toolkit)
        {
            return false;
        }
        if self.tools.is_empty() {
            return true;
        }
        self.tools.iter().any(|pattern| {
            pattern.name.is_match_candidate(facts.name())
                && pattern
                    .versions
                    .as_ref()
                    .is_none_or(|range| range.matches(facts.version()))
        })
    }
}

impl Index {
    /// The patterns of `configs`, whose compiled `rules` are in the same order.
    fn build(configs: &[PolicyConfig], rules: &[Rule]) -> Result<Self, PolicyError> {
        let mut index = Self {
            rules: rules.len(),
            ..Self::default()
        };
        let mut versions = Vec::new();
        let mut tools = Vec::new();
        for (i, (config, rule)) in configs.iter().zip(rules).enumerate() {
            for pattern in &config.tools {
                let (name, range) = ToolPattern::split(&rule.label, pattern)?;
                tools.push((i, glob(&rule.label, name)?));
                versions.push(range);
            }
        }
        index.callers = PatternSet::build(configs, rules, |c| &c.callers)?;
        index.toolkits = PatternSet::build(configs, rules, |c| &c.toolkits)?;
        index.tools = PatternSet::from_globs(tools)?;
        index.versions = versions;
        Ok(index)
    }

    /// Which rules' what (`toolkits`, `tools` with their versions, `destructive`) matches
    /// `entry`: what depends on the tool alone, so [`Covered`] keeps it per tool.
    fn covering(&self, rules: &[Rule], entry: &Entry) -> Rules {
        let mut matched = vec![0; self.rules];
        let mut hits = Vec::new();
        let id = &entry.definition().id;
        self.toolkits
            .mark(&id.toolkit, TOOLKITS, &mut matched, &mut hits, |_| true);
        if !self.tools.rules.is_empty() {
            let version = entry.definition().version;
            let version = semver::Version::new(version.major, version.minor, version.patch);
            self.tools
                .mark(&id.name(), TOOLS, &mut matched, &mut hits, |pattern| {
                    self.versions[pattern]
                        .as_ref()
                        .is_none_or(|range| range.matches(&version))
                });
        }
        rules
            .iter()
            .zip(matched)
            .enumerate()
            .filter(|(_, (rule, matched))| {
                *matched == rule.patterns & (TOOLKITS | TOOLS) && rule.is_destructive_as(entry)
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// Per rule, whether one of its caller patterns matches `name` (not 0), by the bits of
    /// [`PatternSet::mark`]; empty when no rule has caller patterns (none is then asked).
    fn named(&self, name: &str) -> Vec<u8> {
        let mut matched = Vec::new();
        if !self.callers.rules.is_empty() {
            matched.resize(self.rules, 0);
            self.callers
                .mark(name, CALLERS, &mut matched, &mut Vec::new(), |_| true);
        }
        matched
    }
}

/// A set of rules, by index.
type Rules = bit_set::BitSet;

/// How many tools' [`Rules`] [`Covered`] keeps: a catalog's worth, at a few bytes each.
const COVERED_TOOLS: usize = 65_536;

/// Which rules' what matches each tool, by the tool's entry key (an entry's tool never changes),
/// filled in as tools are asked about. A call asks twice (the id is resolved among the tools
/// the caller sees, then the call is decided) and a search about thousands of candidates;
/// matching the rules' globs every time was a fifth of a decision.
struct Covered(quick_cache::sync::Cache<u64, Arc<Rules>>);

impl Default for Covered {
    fn default() -> Self {
        Self(quick_cache::sync::Cache::new(COVERED_TOOLS))
    }
}

impl Covered {
    fn get_or_insert(&self, entry: &Entry, cover: impl FnOnce() -> Rules) -> Arc<Rules> {
        let covered = self
            .0
            .get_or_insert_with(&entry.key(), || Ok::<_, Infallible>(Arc::new(cover())));
        match covered {
            Ok(rules) => rules,
            Err(never) => match never {},
        }
    }
}

impl PatternSet {
    fn build(
        configs: &[PolicyConfig],
        rules: &[Rule],
        field: impl Fn(&PolicyConfig) -> &Vec<String>,
    ) -> Result<Self, PolicyError> {
        let mut globs = Vec::new();
        for (i, (config, rule)) in configs.iter().zip(rules).enumerate() {
            for pattern in field(config) {
                globs.push((i, glob(&rule.label, pattern)?));
            }
        }
        Self::from_globs(globs)
    }

    fn from_globs(globs: Vec<(usize, Glob)>) -> Result<Self, PolicyError> {
        let mut set = GlobSetBuilder::new();
        let mut rules = Vec::with_capacity(globs.len());
        for (rule, glob) in globs {
            set.add(glob);
            rules.push(rule);
        }
        // Each glob was built alone by `Rule::compile` first, so the set only fails to build
        // where one would have.
        let set = set.build().map_err(|source| PolicyError::Pattern {
            rule: "(all)".to_owned(),
            pattern: String::new(),
            source,
        })?;
        Ok(Self { set, rules })
    }

    /// Sets `bit` for each rule one of whose patterns matches `text` and passes `keep` (given
    /// the pattern's position).
    fn mark(
        &self,
        text: &str,
        bit: u8,
        matched: &mut [u8],
        hits: &mut Vec<usize>,
        keep: impl Fn(usize) -> bool,
    ) {
        if self.rules.is_empty() {
            return;
        }
        self.set.matches_into(text, hits);
        for &pattern in hits.iter() {
            if keep(pattern) {
                matched[self.rules[pattern]] |= bit;
            }
        }
    }
}

impl ToolPattern {
    /// `Name*@range` into the name glob and the parsed range.
    fn split<'p>(
        rule: &str,
        pattern: &'p str,
    ) -> Result<(&'p str, Option<semver::VersionReq>), PolicyError> {
        match pattern.split_once('@') {
            Some((name, range)) => {
                let range =
                    semver::VersionReq::parse(range).map_err(|source| PolicyError::Versions {
                        rule: rule.to_owned(),
                        pattern: pattern.to_owned(),
                        source,
                    })?;
                Ok((name, Some(range)))
            }
            None => Ok((pattern, None)),
        }
    }

    fn compile(rule: &str, pattern: &str) -> Result<Self, PolicyError> {
        let (name, versions) = Self::split(rule, pattern)?;
        Ok(Self {
            name: glob(rule, name)?.compile_matcher(),
            versions,
        })
    }
}

impl Condition {
    fn compile(rule: &str, source: &str) -> Result<Self, PolicyError> {
        let program = cel::Program::compile(source).map_err(|e| PolicyError::Condition {
            rule: rule.to_owned(),
            reason: e.to_string(),
        })?;
        let mut bound = Vec::new();
        bound_names(program.expression(), &mut bound);
        if let Some(variable) = program
            .references()
            .variables()
            .into_iter()
            .find(|v| !VARIABLES.contains(v) && !bound.contains(v))
        {
            return Err(PolicyError::UnknownVariable {
                rule: rule.to_owned(),
                variable: variable.to_owned(),
            });
        }
        let native = Native::compile(program.expression());
        Ok(Self { program, native })
    }
}

/// What the conditions read of `input`: only fields named after it (`input.a`, `has(input.a)`,
/// `input.a.b`), or the input as a whole (`size(input)`, `"a" in input`, `input["a"]`,
/// `input == {…}`, a comprehension over it or one that binds the name `input`).
///
/// Where only named fields are read, the input CEL asks for whole (`has(input.a)` does: it
/// tests for `a` on `input`) is made of those fields alone, which no such expression can tell
/// from the whole: it reads a field by its name and nothing else of the map. A call's input
/// may have dozens of arguments; converting all of them for one `has()` was most of what such
/// a condition cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum InputRead {
    /// These top-level fields, by name, and nothing else; each with the position of its name
    /// (`input.a`) among the names the conditions read, where a decision keeps its value
    /// (`None`: a field only tested with `has()`).
    Fields(Vec<(String, Option<usize>)>),
    /// The input as a whole (and with no condition at all: nothing is read then).
    #[default]
    Whole,
}

impl InputRead {
    /// What `conditions`, together, read of the input; `names` are the names they read
    /// ([`read_names`]).
    fn of<'c>(conditions: impl IntoIterator<Item = &'c Condition>, names: &[String]) -> Self {
        let mut fields = Some(Vec::new());
        for condition in conditions {
            input_fields(condition.program.expression(), &mut fields);
        }
        match fields {
            Some(mut fields) => {
                fields.sort_unstable();
                fields.dedup();
                Self::Fields(
                    fields
                        .into_iter()
                        .map(|field| {
                            let name = format!("input.{field}");
                            let kept = names.iter().position(|n| *n == name);
                            (field, kept)
                        })
                        .collect(),
                )
            }
            None => Self::Whole,
        }
    }
}

/// Adds to `fields` the top-level fields of `input` that `expr` reads by name, or makes it
/// `None` when `expr` reads the input otherwise (see [`InputRead`]).
fn input_fields(expr: &cel::IdedExpr, fields: &mut Option<Vec<String>>) {
    use cel::common::ast::Expr;
    let Some(named) = fields else {
        return;
    };
    match &expr.expr {
        Expr::Select(select) if matches!(&select.operand.expr, Expr::Ident(n) if n == "input") => {
            named.push(select.field.clone());
        }
        Expr::Ident(name) if name == "input" => *fields = None,
        Expr::Comprehension(comprehension)
            if [&comprehension.iter_var, &comprehension.accu_var]
                .into_iter()
                .chain(comprehension.iter_var2.as_ref())
                .any(|name| name == "input") =>
        {
            *fields = None;
        }
        _ => {
            for part in subexpressions(expr) {
                input_fields(part, fields);
            }
        }
    }
}

/// Adds to `names` the qualified names of the variables `expr` reads, as CEL's resolver is
/// asked for them: `input.a.b` for `input.a.b`, `input` for `has(input.a)`, each once. (CEL
/// asks for a shorter name only when the longer one is not there.)
fn read_names(expr: &cel::IdedExpr, names: &mut Vec<String>) {
    match qualified(expr) {
        Some(name) => {
            let root = name.split('.').next().unwrap_or_default();
            if VARIABLES.contains(&root) && !names.contains(&name) {
                names.push(name);
            }
        }
        None => {
            for part in subexpressions(expr) {
                read_names(part, names);
            }
        }
    }
}

/// The qualified name `expr` spells (`input.a.b`), if it is one.
fn qualified(expr: &cel::IdedExpr) -> Option<String> {
    use cel::common::ast::Expr;
    match &expr.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(select) if !select.test => {
            Some(format!("{}.{}", qualified(&select.operand)?, select.field))
        }
        _ => None,
    }
}

/// The names `expr`'s comprehensions bind (`x` in `input.tags.exists(x, x > 4)`), which
/// `Program::references` counts among the variables it reads.
fn bound_names<'e>(expr: &'e cel::IdedExpr, names: &mut Vec<&'e str>) {
    if let cel::common::ast::Expr::Comprehension(comprehension) = &expr.expr {
        names.push(&comprehension.iter_var);
        names.extend(comprehension.iter_var2.as_deref());
        names.push(&comprehension.accu_var);
    }
    for part in subexpressions(expr) {
        bound_names(part, names);
    }
}

/// The expressions directly inside `expr`: a call's target and arguments, a comprehension's
/// parts, a list's elements, a map's or a struct's keys and values, a selection's operand.
fn subexpressions(expr: &cel::IdedExpr) -> Vec<&cel::IdedExpr> {
    use cel::common::ast::{EntryExpr, Expr, IdedEntryExpr};
    fn entries(entries: &[IdedEntryExpr]) -> Vec<&cel::IdedExpr> {
        entries
            .iter()
            .flat_map(|entry| match &entry.expr {
                EntryExpr::StructField(field) => vec![&field.value],
                EntryExpr::MapEntry(entry) => vec![&entry.key, &entry.value],
            })
            .collect()
    }
    match &expr.expr {
        Expr::Call(call) => call
            .target
            .as_deref()
            .into_iter()
            .chain(&call.args)
            .collect(),
        Expr::Comprehension(comprehension) => vec![
            &comprehension.iter_range,
            &comprehension.accu_init,
            &comprehension.loop_cond,
            &comprehension.loop_step,
            &comprehension.result,
        ],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => entries(&map.entries),
        Expr::Struct(structure) => entries(&structure.entries),
        Expr::Select(select) => vec![&select.operand],
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => Vec::new(),
    }
}

fn glob(rule: &str, pattern: &str) -> Result<Glob, PolicyError> {
    Glob::new(pattern).map_err(|source| PolicyError::Pattern {
        rule: rule.to_owned(),
        pattern: pattern.to_owned(),
        source,
    })
}

/// Whether a claim's value is or holds `wanted`: equal, an element of an array, or a word of a
/// space-separated string (OAuth's `scope`).
fn claim_has(claim: Option<&Value>, wanted: &Value) -> bool {
    match (claim, wanted) {
        (None, _) => false,
        (Some(Value::Array(items)), wanted) => items.contains(wanted),
        (Some(Value::String(words)), Value::String(word)) => {
            words == word || words.split_whitespace().any(|w| w == word)
        }
        (Some(value), wanted) => value == wanted,
    }
}

#[cfg(test)]
mod tests {
    use otc_adapters::fake::FakeAdapter;
    use otc_mappings::otc::{ToolDefinition, ToolId, ToolVersion};
    use otc_mappings::{MappedTool, Target};

    use super::*;
    use crate::catalog::policy::SourcePolicy;

    /// `Toolkit.Tool@major.0.0`, destructive or not.
    fn entry(toolkit: &str, tool: &str, major: u64, destructive: bool) -> Entry {
        let version = ToolVersion::new(major, 0, 0);
        let definition = ToolDefinition {
            id: ToolId::exact(toolkit, tool, version),
            name: format!("{toolkit}_{tool}"),
            description: String::new(),
            version,
            input_schema: json!({"type": "object"}).into(),
            output_schema: None,
            requirements: None,
        };
        let mapped = MappedTool {
            target: Target::Named {
                name: tool.to_owned(),
            },
            definition: Arc::new(definition),
            destructive,
            label: None,
            hidden_inputs: Vec::new(),
        };
        Entry::new(
            mapped,
            Arc::new(FakeAdapter::new("kit")),
            Arc::new(SourcePolicy::default()),
        )
    }

    fn policies(yaml: &str, groups: Option<&[String]>) -> Policies {
        let configs: Vec<PolicyConfig> = serde_yaml::from_str(yaml).unwrap();
        Policies::compile(&configs, groups).unwrap()
    }

    fn input(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    /// Conditions that read only named fields see the input as those fields alone, and decide
    /// every call as they would over the whole input; any other use of the input reads it all.
    #[test]
    fn conditions_that_read_named_fields_decide_as_over_the_whole_input() {
        // The fields read, by name (`None`: the input whole).
        let read =
            |when: &str| match policies(&format!("- {{effect: allow, when: '{when}'}}"), None)
                .input_read
            {
                InputRead::Fields(fields) => Some(
                    fields
                        .into_iter()
                        .map(|(name, _)| name)
                        .collect::<Vec<String>>(),
                ),
                InputRead::Whole => None,
            };
        let fields = |names: &[&str]| Some(names.iter().map(|n| (*n).to_owned()).collect());
        assert_eq!(
            read("!has(input.priority) || input.priority != \"high\""),
            fields(&["priority"])
        );
        assert_eq!(
            read("input.a.b > 1 && has(input.c.d) && input.tags.exists(t, t == input.z)"),
            fields(&["a", "c", "tags", "z"])
        );
        assert_eq!(read("caller.name == \"x\""), fields(&[]));
        for whole in [
            "size(input) > 1",
            "\"a\" in input",
            "input[\"a\"] == 1",
            "input == {\"a\": 1}",
            "input.all(k, k != \"force\")",
            "[1].exists(input, input == 1) || has(input.a)",
            "has(input.a) && input.size() > 0",
        ] {
            assert_eq!(read(whole), None, "{whole}");
        }
        // One condition reading the whole input makes every condition read it whole.
        let two = policies(
            "- {effect: deny, when: 'has(input.a)'}\n- {effect: allow, when: 'size(input) < 3'}",
            None,
        );
        assert_eq!(two.input_read, InputRead::Whole);

        let conditions = [
            "!has(input.priority) || input.priority != \"high\"",
            "has(input.a) && input.a > 2",
            "has(input.nested.deep) || input.nested.other == 1",
            "input.a.b == 1",
            "input.missing == 1 || has(input.b)",
            "input.tags.exists(t, t == \"x\") || !has(input.tags)",
        ];
        let inputs = [
            json!({}),
            json!({"priority": "high", "a": 3, "b": null}),
            json!({"priority": "low", "a": 1, "tags": ["x"], "nested": {"deep": 1}}),
            json!({"a": {"b": 1}, "nested": {"other": 1}, "extra": [1, 2, 3]}),
            json!({"a": "text", "tags": "not a list", "b": 1, "c": {"d": 2}}),
        ];
        let anyone = Caller::anonymous();
        let tool = entry("Kit", "Tool", 1, false);
        let mut narrowed = 0;
        for when in conditions {
            let yaml = format!("- {{effect: allow, when: '{when}'}}");
            let mut fields = policies(&yaml, None);
            narrowed += usize::from(fields.input_read != InputRead::Whole);
            let mut whole = policies(&yaml, None);
            whole.input_read = InputRead::Whole;
            // The interpreter's two views of the input compared, not the native answers.
            interpreted_only(&mut fields);
            interpreted_only(&mut whole);
            for value in &inputs {
                let value = input(value.clone());
                assert_eq!(
                    fields.decide(&anyone, &tool, &value),
                    whole.decide(&anyone, &tool, &value),
                    "{when} on {value:?}"
                );
            }
        }
        assert_eq!(narrowed, conditions.len());
    }

    /// Every condition of `policies` left to the interpreter.
    fn interpreted_only(policies: &mut Policies) {
        for rule in &mut policies.rules {
            if let Some(condition) = &mut rule.when {
                condition.native = None;
            }
        }
    }

    /// A condition answered without the interpreter is answered as the interpreter answers it:
    /// every shape the native form compiles, on inputs of every JSON type (and missing), both
    /// views of the input. What it cannot be certain of (types that differ, a missing field, a
    /// container) it leaves to the interpreter.
    #[test]
    fn native_conditions_answer_as_the_interpreter_does() {
        let conditions = [
            "!has(input.a) || input.a < 1000",
            "input.owner == \"acme\" && !input.force",
            "input.a == input.b",
            "input.a != 1",
            "input.a <= 2.5",
            "input.a > 3u",
            "input.a >= \"m\"",
            "input.a == null",
            "input.a != true",
            "input.a < true",
            "null == input.b",
            "has(input.a.b)",
            "input.a.b == 1",
            "has(input.a.b.c) || input.a.b.c != \"z\"",
            "!input.a",
            "input.a && input.b",
            "input.a || input.b",
            "!(input.a == 1) && (input.b || false)",
            "input.a",
            "1 < 2 && \"x\" == \"x\"",
            "1 == 1.0",
            "-1 < input.a",
            "caller.name != \"x\" && input.a > 3",
            "caller.claims.scope == \"read\" || caller.claims.org.id == input.a",
            "tool.destructive == input.b || tool.toolkit == \"Kit\"",
            "tool.toolkit < input.a",
        ];
        let values = [
            Some(json!(null)),
            Some(json!(true)),
            Some(json!(false)),
            Some(json!(0)),
            Some(json!(1)),
            Some(json!(999)),
            Some(json!(1000)),
            Some(json!(-3)),
            Some(json!(u64::MAX)),
            Some(json!(2.5)),
            Some(json!(-0.0)),
            Some(json!("m")),
            Some(json!("acme")),
            Some(json!("")),
            Some(json!([1])),
            Some(json!({"b": 1})),
            Some(json!({"b": {"c": "z"}})),
            Some(json!({"b": null})),
            None,
        ];
        let callers = [
            Caller::anonymous(),
            Caller::named("x").with_claims(input(json!({"scope": "read", "org": {"id": 1}}))),
            Caller::named("y").with_claims(input(json!({"scope": 3, "org": "acme"}))),
        ];
        let tools = [
            entry("Kit", "Tool", 1, false),
            entry("Other", "Tool", 1, true),
        ];
        let (mut native, mut left) = (0, 0);
        for when in conditions {
            let yaml = format!("- {{effect: allow, when: '{when}'}}");
            for whole in [false, true] {
                let mut policies = policies(&yaml, None);
                if whole {
                    policies.input_read = InputRead::Whole;
                }
                let condition = policies.rules[0].when.as_ref().unwrap();
                let compiled = condition.native.as_ref();
                // (`-1` may be a negation of a literal, which the native form leaves.)
                assert!(compiled.is_some() || when.starts_with('-'), "{when}");
                let pairs = values
                    .iter()
                    .flat_map(|a| values.iter().map(move |b| (a, b)));
                for (i, (a, b)) in pairs.enumerate() {
                    let (caller, tool) = (&callers[i % 3], &tools[i / 3 % 2]);
                    let mut value = Map::new();
                    for (keys, v) in [(["a", "owner"], a), (["b", "force"], b)] {
                        for key in keys {
                            if let Some(v) = v {
                                value.insert(key.to_owned(), v.clone());
                            }
                        }
                    }
                    let vars = Variables::new(caller, tool, &value, &policies);
                    let interpreted = policies.interpreted(condition, &vars);
                    let call = native::Call {
                        input: &value,
                        caller,
                        entry: tool,
                    };
                    match compiled.and_then(|n| n.holds(call)) {
                        Some(holds) => {
                            native += 1;
                            assert_eq!(holds, interpreted, "{when} on {value:?}");
                        }
                        None => left += 1,
                    }
                }
            }
        }
        // Both kinds were asked (most inputs above mix types on purpose).
        assert!(native > 2_000 && left > 0, "{native} native, {left} left");
        let anyone = Caller::anonymous();
        let holds = |native: &Native, input: &Map<String, Value>| {
            native.holds(native::Call {
                input,
                caller: &anyone,
                entry: &tools[0],
            })
        };
        // The README's condition is answered natively for what it is written for.
        let readme = policies(
            "- {effect: allow, when: '!has(input.a) || input.a < 1000'}",
            None,
        );
        let native = readme.rules[0]
            .when
            .as_ref()
            .unwrap()
            .native
            .as_ref()
            .unwrap();
        for (value, expected) in [
            (json!({}), Some(true)),
            (json!({"a": 999, "b": "x"}), Some(true)),
            (json!({"a": 1000}), Some(false)),
            (json!({"a": "999"}), None),
        ] {
            let value = input(value);
            assert_eq!(holds(native, &value), expected, "{value:?}");
        }
        // Across types, the interpreter decides.
        let across = policies("- {effect: allow, when: '1 == 1.0'}", None);
        let condition = across.rules[0].when.as_ref().unwrap();
        let empty = Map::new();
        assert_eq!(holds(condition.native.as_ref().unwrap(), &empty), None);
        // Anything but literals, input fields, `has`, `!`, `&&`, `||` and comparisons is not
        // compiled.
        for other in [
            "size(input) > 1",
            "input.a in [1, 2]",
            "\"ops\" in caller.groups",
            "tool.name == \"Tool\"",
            "has(caller.claims.scope)",
            "input.a + 1 > 2",
        ] {
            let policies = policies(&format!("- {{effect: allow, when: '{other}'}}"), None);
            assert!(
                policies.rules[0].when.as_ref().unwrap().native.is_none(),
                "{other}"
            );
        }
    }

    #[test]
    fn no_policies_allow_everything_and_any_policy_denies_what_it_does_not_allow() {
        let anyone = Caller::anonymous();
        let pull = entry("Github", "PullsList", 3, false);
        assert!(Policies::default().sees(&anyone, &pull));
        assert_eq!(
            Policies::default().decide(&anyone, &pull, &Map::new()),
            Verdict::Allowed(None)
        );
        let only_stripe = policies("- {effect: allow, toolkits: [Stripe]}", None);
        assert!(!only_stripe.sees(&anyone, &pull));
        assert_eq!(
            only_stripe.decide(&anyone, &pull, &Map::new()),
            Verdict::Hidden
        );
    }

    /// A decision about a tool the caller was found to see agrees with a full decision, for
    /// every kind of rule in front of the one that decides; only a full decision says hidden.
    #[test]
    fn a_decision_about_a_seen_tool_agrees_with_a_full_one() {
        let rules = policies(
            r#"
- {effect: deny, toolkits: [Github], when: 'input.force == true', reason: no force}
- {effect: deny, callers: [mallory]}
- {effect: allow, groups: [ops], when: 'input.n < 10', reason: small}
- {effect: deny, destructive: true}
- {effect: allow, toolkits: [Github, Public]}
"#,
            None,
        );
        let tools = [
            entry("Github", "Push", 1, false),
            entry("Public", "Drop", 1, true),
            entry("Stripe", "Pay", 1, false),
        ];
        let callers = [
            Caller::named("sam").with_groups(["ops"]),
            Caller::named("mallory"),
            Caller::named("kim"),
        ];
        let inputs = [
            json!({}),
            json!({"force": true}),
            json!({"n": 3}),
            json!({"n": 30, "force": false}),
        ];
        let mut hidden = 0;
        for caller in &callers {
            for tool in &tools {
                for value in &inputs {
                    let input = input(value.clone());
                    let full = rules.decide(caller, tool, &input);
                    if rules.sees(caller, tool) {
                        assert_eq!(rules.decide_seen(caller, tool, &input), full);
                    } else {
                        hidden += 1;
                        assert_eq!(full, Verdict::Hidden);
                    }
                }
            }
        }
        assert!(hidden > 0, "no hidden case was tried");
    }

    /// What a caller sees is kept per caller and catalog, and answers as the rules do.
    #[test]
    fn kept_views_answer_as_the_rules_per_caller_and_catalog() {
        let rules = policies(
            "- {effect: allow, groups: [ops]}\n- {effect: allow, toolkits: [Public]}\n",
            None,
        );
        let tools = [
            entry("Github", "Push", 1, false),
            entry("Public", "Read", 1, false),
        ];
        let ops = Caller::named("sam").with_groups(["ops"]);
        let kim = Caller::named("kim");
        for _ in 0..2 {
            for caller in [&ops, &kim] {
                let kept = rules.visible_to(caller, 7, tools.len());
                for (position, tool) in tools.iter().enumerate() {
                    let seen = kept.sees(position, || rules.sees(caller, tool));
                    assert_eq!(seen, rules.sees(caller, tool));
                }
            }
        }
        // Kept: the second time, the rules are not asked.
        let kept = rules.visible_to(&kim, 7, tools.len());
        assert!(!kept.sees(0, || unreachable!("asked again")));
        assert!(kept.sees(1, || unreachable!("asked again")));
        // Another catalog starts over.
        let fresh = rules.visible_to(&kim, 8, tools.len());
        assert!(fresh.sees(1, || true));
    }

    /// The input is read whole (`has`, `in`, `size`, comprehensions, equality) and by field,
    /// nested in objects and lists, as CEL values that borrow it; each expression holds on the
    /// input below and its negation does not.
    #[test]
    fn conditions_read_the_input_whole_and_by_field() {
        let call = input(json!({
            "owner": "acme",
            "count": 3,
            "big": 18_446_744_073_709_551_615_u64,
            "ratio": 0.5,
            "flag": true,
            "none": null,
            "labels": ["a", "b"],
            "nested": {"deep": {"name": "x"}}
        }));
        let tool = entry("Kit", "Tool", 1, false);
        let anyone = Caller::anonymous();
        for expression in [
            "has(input.owner) && !has(input.missing)",
            "'labels' in input && !('missing' in input)",
            "size(input) == 8 && input.size() == 8",
            "input.owner == 'acme' && input['owner'].startsWith('ac')",
            "input.count > 2 && input.count == 3 && input.ratio < 1.0",
            "input.big == 18446744073709551615u",
            "input.flag && input.none == null",
            "input.labels == ['a', 'b'] && 'b' in input.labels && size(input.labels) == 2",
            "input.labels.all(l, l.size() == 1) && input.exists(k, k == 'nested')",
            "input.nested.deep.name == 'x' && has(input.nested.deep)",
            "input.nested == {'deep': {'name': 'x'}}",
        ] {
            for (when, holds) in [
                (expression.to_owned(), true),
                (format!("!({expression})"), false),
            ] {
                let rules = policies(
                    &format!(
                        "- {{effect: allow, when: {}}}",
                        serde_json::to_string(&when).unwrap()
                    ),
                    None,
                );
                let verdict = rules.decide(&anyone, &tool, &call);
                assert_eq!(
                    verdict == Verdict::Allowed(Some(0)),
                    holds,
                    "{when}: {verdict:?}"
                );
            }
        }
    }

    #[test]
    fn tool_patterns_match_names_by_glob_and_versions_by_range() {
        let rules = policies(r#"- {effect: allow, tools: ["Github.Pulls*@^3"]}"#, None);
        let anyone = Caller::anonymous();
        assert!(rules.sees(&anyone, &entry("Github", "PullsList", 3, false)));
        assert!(!rules.sees(&anyone, &entry("Github", "PullsList", 2, false)));
        assert!(!rules.sees(&anyone, &entry("Github", "IssuesList", 3, false)));
        assert!(!rules.sees(&anyone, &entry("Gitlab", "PullsList", 3, false)));
    }

    #[test]
    fn what_a_tool_matches_is_kept_per_tool_past_64_rules_and_asked_again_alike() {
        // 69 rules for other toolkits, then one that allows K's reads to ops: the 70th rule's
        // bit is in the second word of a tool's kept set.
        let mut yaml: String = (0..69)
            .map(|i| format!("- {{effect: allow, toolkits: [Other{i}]}}\n"))
            .collect();
        yaml.push_str("- {effect: allow, groups: [ops], toolkits: [K], destructive: false}\n");
        let rules = policies(&yaml, None);
        let (read, write) = (entry("K", "Get", 1, false), entry("K", "Drop", 1, true));
        let ops = Caller::named("sam").with_groups(["ops"]);
        let other = Caller::named("kim");
        for _ in 0..2 {
            assert!(rules.sees(&ops, &read));
            assert!(!rules.sees(&ops, &write));
            assert!(!rules.sees(&other, &read));
            assert_eq!(
                rules.decide(&ops, &read, &Map::new()),
                Verdict::Allowed(Some(69))
            );
            assert_eq!(rules.decide(&other, &read, &Map::new()), Verdict::Hidden);
        }
    }

    #[test]
    fn who_is_matched_by_name_group_and_claims() {
        let rules = policies(
            r#"
- {effect: allow, callers: ["ci-*"], toolkits: [A]}
- {effect: allow, groups: [ops], toolkits: [B]}
- {effect: allow, claims: {scope: "write", tenant: 7}, toolkits: [C]}
"#,
            None,
        );
        let (a, b, c) = (
            entry("A", "T", 1, false),
            entry("B", "T", 1, false),
            entry("C", "T", 1, false),
        );
        let bot = Caller::named("ci-bot");
        assert!(rules.sees(&bot, &a) && !rules.sees(&bot, &b));
        let ops = Caller::named("sam").with_groups(["ops"]);
        assert!(!rules.sees(&ops, &a) && rules.sees(&ops, &b));
        let token = |claims: Value| Caller::named("t").with_claims(input(claims));
        assert!(rules.sees(&token(json!({"scope": "read write", "tenant": 7})), &c));
        assert!(rules.sees(&token(json!({"scope": ["write"], "tenant": 7})), &c));
        assert!(!rules.sees(&token(json!({"scope": "read", "tenant": 7})), &c));
        assert!(!rules.sees(&token(json!({"scope": "write", "tenant": 8})), &c));
        assert!(!rules.sees(&token(json!({"scope": "write"})), &c));
    }

    #[test]
    fn the_first_rule_that_holds_decides_and_a_failed_condition_gives_its_reason() {
        let rules = policies(
            r#"
- {name: no-force, effect: deny, when: "has(input.force) && input.force", reason: no forcing}
- {name: no-deletes, effect: deny, destructive: true}
- {name: acme, effect: allow, when: 'input.owner == "acme"', reason: only acme's repositories}
"#,
            None,
        );
        let anyone = Caller::anonymous();
        let push = entry("Github", "Push", 1, false);
        assert!(rules.sees(&anyone, &push));
        assert_eq!(
            rules.decide(&anyone, &push, &input(json!({"owner": "acme"}))),
            Verdict::Allowed(Some(2))
        );
        let refused = rules.decide(&anyone, &push, &input(json!({"owner": "evil"})));
        assert_eq!(refused, Verdict::Refused(Some(2)));
        assert_eq!(rules.reason(Some(2)), Some("only acme's repositories"));
        assert_eq!(
            rules.decide(
                &anyone,
                &push,
                &input(json!({"owner": "acme", "force": true}))
            ),
            Verdict::Refused(Some(0))
        );
        // A field the input lacks: the condition does not hold (no allow on a value not read).
        assert_eq!(
            rules.decide(&anyone, &push, &Map::new()),
            Verdict::Refused(Some(2))
        );
        // Destructive tools are denied outright, so not even seen.
        let delete = entry("Github", "Delete", 1, true);
        assert!(!rules.sees(&anyone, &delete));
        assert_eq!(
            rules.decide(&anyone, &delete, &input(json!({"owner": "acme"}))),
            Verdict::Hidden
        );
        assert_eq!(rules.label(1), "no-deletes");
    }

    #[test]
    fn conditions_read_the_caller_and_the_tool() {
        let rules = policies(
            r#"- {effect: allow, when: 'tool.toolkit == "Github" && "ops" in caller.groups && !tool.destructive'}"#,
            None,
        );
        let push = entry("Github", "Push", 1, false);
        let ops = Caller::named("sam").with_groups(["ops"]);
        assert_eq!(
            rules.decide(&ops, &push, &Map::new()),
            Verdict::Allowed(Some(0))
        );
        assert_eq!(
            rules.decide(&Caller::named("kim"), &push, &Map::new()),
            Verdict::Refused(Some(0))
        );
    }

    /// Variables are read field by field where an expression allows it, and whole where it
    /// needs them whole; either way a condition sees the same values.
    #[test]
    fn conditions_read_fields_paths_and_whole_variables_alike() {
        let tool = entry("Github", "Push", 1, false);
        let caller = Caller::named("sam").with_claims(input(json!({"scope": "repo read"})));
        let call = input(json!({
            "repo": {"owner": "acme", "name": "site"},
            "n": 2,
            "big": 18_446_744_073_709_551_615_u64,
            "ratio": 0.5,
            "tags": [1, 5],
            "force": false
        }));
        let holds = |when: &str| {
            let yaml = format!("- {{effect: allow, when: '{when}'}}");
            policies(&yaml, None).decide(&caller, &tool, &call) == Verdict::Allowed(Some(0))
        };
        for when in [
            r#"input.repo.owner == "acme""#,
            "input.n > 1 && input.n < 3 && input.n == 2",
            "input.big > 1",
            "input.ratio < 1",
            "input.tags.exists(t, t > 4)",
            "size(input) == 6",
            r#""repo" in input && has(input.repo.name)"#,
            "!input.force",
            r#"caller.claims.scope.contains("repo") && caller.name == "sam""#,
            r#"has(caller.claims.scope) && !has(caller.claims.missing) && !("ops" in caller.groups)"#,
            r#"tool.id == "Github.Push@1.0.0" && tool.name == "Github.Push""#,
            r#"tool.version == "1.0.0" && size(caller.groups) == 0"#,
            // More names than the decision keeps: the rest are read each time.
            "double(input.n + input.n) + input.ratio + double(size(input.tags)) > 0.0 && \
             input.repo.owner != input.repo.name && input.big > input.n && \
             !has(input.missing) && tool.toolkit != caller.name && !tool.destructive",
        ] {
            assert!(holds(when), "{when}");
        }
        for when in [
            "input.missing == 1",
            "input.repo.missing == 1",
            r#"input.repo.owner.name == "acme""#,
            "input.n > 2",
            "caller.claims.missing == 1",
            "has(caller.claims.missing)",
            "caller.claims.size() == 0",
        ] {
            assert!(!holds(when), "{when}");
        }
    }

    /// The names a decision keeps are those CEL's resolver is asked for first: each qualified
    /// name once, the operand of a `has()`, none a comprehension binds or of no variable.
    #[test]
    fn the_names_kept_are_the_qualified_names_the_conditions_read() {
        let names = policies(
            "- {effect: deny, when: '!has(input.a.b) || input.a.b < 3 || caller.claims.x == tool.name'}\n\
             - {effect: allow, when: 'input.tags.exists(t, t.size() > input.n) && input.n > 0'}",
            None,
        );
        assert_eq!(
            names.names,
            [
                "input.a",
                "input.a.b",
                "caller.claims.x",
                "tool.name",
                "input.tags",
                "input.n"
            ]
        );
        // `has(input.a)` reads `a` where `input.a` is kept; `input.a.b` and the rest are names
        // of their own.
        assert_eq!(
            names.input_read,
            InputRead::Fields(vec![
                ("a".to_owned(), Some(0)),
                ("n".to_owned(), Some(5)),
                ("tags".to_owned(), Some(4))
            ])
        );
    }

    #[test]
    fn bad_rules_are_refused_naming_the_rule() {
        let error = |yaml: &str, groups: Option<&[String]>| {
            let configs: Vec<PolicyConfig> = serde_yaml::from_str(yaml).unwrap();
            Policies::compile(&configs, groups).unwrap_err().to_string()
        };
        assert!(error("- {effect: allow, when: 'a +'}", None).starts_with("policy #1: 'when'"));
        assert!(
            error("- {name: x, effect: allow, tools: ['[a']}", None)
                .starts_with("policy x: '[a' is not a valid pattern")
        );
        let known = ["ci".to_owned()];
        assert!(error("- {effect: allow, groups: [ops]}", Some(&known)).contains("group 'ops'"));
        assert!(
            error(
                "- {name: a, effect: allow}\n- {name: a, effect: deny}",
                None
            )
            .contains("used twice")
        );
    }
}
