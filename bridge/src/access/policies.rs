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

use std::collections::BTreeMap;
use std::sync::Arc;

use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::caller::Caller;
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
    rules: Vec<Rule>,
    /// CEL's standard library, built once: a condition is evaluated in a context over it.
    env: Option<Arc<cel::Env>>,
    /// Which of [`VARIABLES`] some condition reads: only those are built for a decision.
    reads: [bool; 3],
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
}

struct Condition {
    program: cel::Program,
    /// Which of [`VARIABLES`] it reads.
    reads: [bool; 3],
}

impl std::fmt::Debug for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Condition").finish_non_exhaustive()
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
        let mut reads = [false; 3];
        for condition in rules.iter().filter_map(|r| r.when.as_ref()) {
            for (read, reads_it) in reads.iter_mut().zip(condition.reads) {
                *read |= reads_it;
            }
        }
        Ok(Self { rules, env, reads })
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
        let name = std::cell::OnceCell::new();
        let facts = Facts::new(entry, &name, caller);
        self.visible(self.rules.iter().map(|rule| rule.applies(caller, &facts)))
    }

    /// Whether a tool is visible, given which rules' who and what match it, in order.
    fn visible(&self, applies: impl Iterator<Item = bool>) -> bool {
        for (rule, applies) in self.rules.iter().zip(applies) {
            if !applies {
                continue;
            }
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
        if self.rules.is_empty() {
            return Verdict::Allowed(None);
        }
        // Who and what are matched once per rule; the conditions' variables are built once,
        // when the first condition needs them.
        let name = std::cell::OnceCell::new();
        let facts = Facts::new(entry, &name, caller);
        let applies: Vec<bool> = self
            .rules
            .iter()
            .map(|rule| rule.applies(caller, &facts))
            .collect();
        if !self.visible(applies.iter().copied()) {
            return Verdict::Hidden;
        }
        let mut vars = Variables::default();
        // The first rule that applies and whose condition holds decides; when none does, the
        // first conditional rule that applied is the one whose reason explains the refusal.
        let mut unmet = None;
        for (index, (rule, applies)) in self.rules.iter().zip(applies).enumerate() {
            if !applies {
                continue;
            }
            let holds = match &rule.when {
                None => true,
                Some(condition) => self.holds(condition, &mut vars, caller, entry, input),
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
    fn holds(
        &self,
        condition: &Condition,
        vars: &mut Variables,
        caller: &Caller,
        entry: &Entry,
        input: &Map<String, Value>,
    ) -> bool {
        let Some(env) = &self.env else {
            return false;
        };
        // One context per decision, holding every variable any condition reads: built when the
        // first condition is evaluated, read by the others.
        let context = vars.context.get_or_insert_with(|| {
            let mut context = cel::Context::with_env(Arc::clone(env));
            let [reads_input, reads_caller, reads_tool] = self.reads;
            if reads_input && let Ok(value) = cel::to_value(input) {
                context.add_variable_from_value("input", value);
            }
            if reads_caller {
                let who =
                    json!({"name": caller.name, "groups": caller.groups, "claims": caller.claims});
                if let Ok(value) = cel::to_value(who) {
                    context.add_variable_from_value("caller", value);
                }
            }
            if reads_tool {
                let def = entry.definition();
                let tool = json!({
                    "id": def.id.to_string(),
                    "name": def.id.name(),
                    "toolkit": def.id.toolkit,
                    "version": def.version.to_string(),
                    "destructive": entry.tool.destructive,
                });
                if let Ok(value) = cel::to_value(tool) {
                    context.add_variable_from_value("tool", value);
                }
            }
            context
        });
        matches!(
            condition.program.execute(context),
            Ok(cel::Value::Bool(true))
        )
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

/// The variables of a decision's conditions, in one CEL context built when the first condition
/// is evaluated.
#[derive(Default)]
struct Variables {
    context: Option<cel::Context<'static, 'static>>,
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
                            let mut vars = Variables::default();
                            if self.holds(condition, &mut vars, caller, entry, input) {
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
            && (self.groups.is_empty() || self.groups.iter().any(|g| caller.in_group(g)))
            && self
                .claims
                .iter()
                .all(|(claim, wanted)| claim_has(caller.claims.get(claim), wanted))
    }

    fn covers(&self, facts: &Facts<'_>) -> bool {
        let entry = facts.entry;
        if self
            .destructive
            .is_some_and(|wanted| wanted != entry.tool.destructive)
        {
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

impl ToolPattern {
    fn compile(rule: &str, pattern: &str) -> Result<Self, PolicyError> {
        let (name, versions) = match pattern.split_once('@') {
            Some((name, range)) => {
                let range =
                    semver::VersionReq::parse(range).map_err(|source| PolicyError::Versions {
                        rule: rule.to_owned(),
                        pattern: pattern.to_owned(),
                        source,
                    })?;
                (name, Some(range))
            }
            None => (pattern, None),
        };
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
        let mut reads = [false; 3];
        for variable in program.references().variables() {
            match VARIABLES.iter().position(|v| *v == variable) {
                Some(i) => reads[i] = true,
                None => {
                    return Err(PolicyError::UnknownVariable {
                        rule: rule.to_owned(),
                        variable: variable.to_owned(),
                    });
                }
            }
        }
        Ok(Self { program, reads })
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
            definition,
            destructive,
            label: None,
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
