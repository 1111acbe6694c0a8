//! The words whose meaning the ranker knows, in one table: which say the same thing to an API
//! (synonyms, read by [`super::synonyms`]) and which name what a tool does (verbs, read by
//! [`super::action`]).
//!
//! Both readers need the same knowledge, "remove" means "delete", and two lists kept apart
//! drift: here a word is written once, with what it is used for. The table is general English
//! and general API vocabulary (actions, the common nouns of REST APIs, the old and new names of
//! lists), not the words of any one catalog or query set.
//!
//! A word is not always both. Inflections ("deletes") name an action but are no new synonym
//! (stemming already makes them one); words that are nouns as often as verbs, or that mean
//! something near but not the same ("rename", "new"), name an action without standing for the
//! group's other words; phrases ("take off") and some words ("discard", "lookup") are only
//! synonyms. Words that are nouns as often as verbs in API names ("post", "set" as in "data
//! set", "open") are not verbs at all: they would mislabel more tools than they label.

use std::sync::LazyLock;

use Word::{Both, Synonym, Verb};

bitflags::bitflags! {
    /// A set of actions.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub(crate) struct Actions: u8 {
        const LIST = 1;
        const READ = 1 << 1;
        const CREATE = 1 << 2;
        const UPDATE = 1 << 3;
        const DELETE = 1 << 4;
    }
}

/// One word (lowercased, unstemmed) of a [`Group`], and what it is used for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Word {
    /// A synonym of the group's other synonyms, and a verb naming the group's action.
    Both(&'static str),
    /// A verb naming the group's action, not looked up for the group's other words.
    Verb(&'static str),
    /// A word or phrase standing for the group's other synonyms; it names no action.
    Synonym(&'static str),
}

impl Word {
    /// The word, when it is a synonym.
    pub(crate) fn synonym(self) -> Option<&'static str> {
        match self {
            Word::Both(text) | Word::Synonym(text) => Some(text),
            Word::Verb(_) => None,
        }
    }

    /// The word, when it is a verb.
    fn verb(self) -> Option<&'static str> {
        match self {
            Word::Both(text) | Word::Verb(text) => Some(text),
            Word::Synonym(_) => None,
        }
    }
}

/// Words that mean the same thing, and the action their verbs name (empty for nouns, and for
/// verbs that do not tell siblings apart: "start", "subscribe").
#[derive(Debug)]
pub(crate) struct Group {
    pub(crate) action: Actions,
    /// In the order they are looked up: the first synonym a tool has is the one that counts.
    pub(crate) words: &'static [Word],
}

const fn group(action: Actions, words: &'static [Word]) -> Group {
    Group { action, words }
}

const fn synonyms(words: &'static [Word]) -> Group {
    Group {
        action: Actions::empty(),
        words,
    }
}

/// The table. A verb names one action: it is in one group only.
#[rustfmt::skip]
pub(crate) const GROUPS: &[Group] = &[
    // Actions.
    group(Actions::LIST, &[
        Verb("list"), Verb("lists"), Verb("listing"), Verb("enumerate"), Verb("browse"),
    ]),
    group(Actions::DELETE, &[
        Both("delete"), Verb("deletes"), Both("remove"), Verb("removes"), Both("drop"),
        Both("erase"), Both("destroy"), Synonym("discard"), Both("purge"), Verb("unregister"),
        Synonym("take off"), Synonym("take down"), Synonym("take away"), Synonym("tear down"),
        Synonym("wipe out"),
    ]),
    group(Actions::CREATE, &[
        Both("create"), Verb("creates"), Both("add"), Verb("adds"), Verb("new"), Both("insert"),
        Both("register"), Verb("make"),
    ]),
    group(Actions::UPDATE, &[
        Both("update"), Verb("updates"), Both("edit"), Both("modify"), Both("change"),
        Synonym("alter"), Verb("rename"), Verb("replace"), Verb("patch"),
    ]),
    group(Actions::READ, &[
        Both("get"), Verb("gets"), Both("fetch"), Both("retrieve"), Verb("retrieves"),
        Both("read"), Verb("reads"), Both("show"), Verb("shows"), Both("view"),
        Verb("describe"), Verb("details"), Verb("detail"), Synonym("lookup"), Synonym("look up"),
    ]),
    synonyms(&[
        Synonym("search"), Synonym("find"), Synonym("query"), Synonym("lookup"),
        Synonym("look for"),
    ]),
    synonyms(&[
        Synonym("start"), Synonym("boot"), Synonym("launch"), Synonym("power on"),
        Synonym("spin up"), Synonym("boot up"), Synonym("kick off"),
    ]),
    synonyms(&[
        Synonym("stop"), Synonym("halt"), Synonym("shutdown"), Synonym("shut down"),
        Synonym("power off"),
    ]),
    synonyms(&[Synonym("restart"), Synonym("reboot")]),
    synonyms(&[
        Synonym("enable"), Synonym("activate"), Synonym("turn on"), Synonym("switch on"),
    ]),
    synonyms(&[
        Synonym("disable"), Synonym("deactivate"), Synonym("suspend"), Synonym("turn off"),
        Synonym("switch off"),
    ]),
    synonyms(&[Synonym("cancel"), Synonym("abort"), Synonym("call off")]),
    synonyms(&[
        Synonym("restore"), Synonym("unarchive"), Synonym("undelete"), Synonym("recover"),
        Synonym("bring back"), Synonym("put back"),
    ]),
    synonyms(&[
        Synonym("rollback"), Synonym("roll back"), Synonym("revert"), Synonym("undo"),
    ]),
    group(Actions::CREATE.union(Actions::UPDATE), &[
        Both("upsert"), Synonym("create or update"), Synonym("insert or update"),
        Synonym("add or update"),
    ]),
    synonyms(&[Synonym("subscribe"), Synonym("opt in")]),
    synonyms(&[Synonym("unsubscribe"), Synonym("opt out")]),
    synonyms(&[Synonym("copy"), Synonym("clone"), Synonym("duplicate")]),
    synonyms(&[Synonym("export"), Synonym("download")]),
    synonyms(&[Synonym("import"), Synonym("upload")]),
    synonyms(&[
        Synonym("shuffle"), Synonym("randomize"), Synonym("randomise"), Synonym("randomly"),
    ]),
    synonyms(&[Synonym("reorder"), Synonym("rearrange"), Synonym("sort")]),
    synonyms(&[
        Synonym("login"), Synonym("log in"), Synonym("sign in"), Synonym("signin"),
        Synonym("logon"), Synonym("log on"),
    ]),
    synonyms(&[
        Synonym("logout"), Synonym("log out"), Synonym("sign out"), Synonym("signout"),
        Synonym("logoff"), Synonym("log off"),
    ]),
    // Nouns.
    synonyms(&[
        Synonym("whitelist"), Synonym("allowlist"), Synonym("allow list"), Synonym("safelist"),
    ]),
    synonyms(&[
        Synonym("blacklist"), Synonym("blocklist"), Synonym("block list"), Synonym("denylist"),
        Synonym("deny list"),
    ]),
    synonyms(&[Synonym("user"), Synonym("member"), Synonym("person"), Synonym("people")]),
    synonyms(&[Synonym("organization"), Synonym("organisation"), Synonym("org")]),
    synonyms(&[Synonym("repo"), Synonym("repository")]),
    synonyms(&[Synonym("email"), Synonym("mail"), Synonym("e-mail")]),
    synonyms(&[Synonym("image"), Synonym("picture"), Synonym("photo")]),
    synonyms(&[Synonym("file"), Synonym("document")]),
    synonyms(&[Synonym("price"), Synonym("cost"), Synonym("pricing"), Synonym("fee")]),
    synonyms(&[Synonym("tag"), Synonym("label")]),
    synonyms(&[Synonym("config"), Synonym("configuration"), Synonym("settings")]),
    synonyms(&[Synonym("status"), Synonym("state"), Synonym("progress")]),
    synonyms(&[Synonym("notification"), Synonym("alert")]),
    synonyms(&[Synonym("shop"), Synonym("store")]),
    synonyms(&[Synonym("permission"), Synonym("privilege")]),
    synonyms(&[Synonym("coupon"), Synonym("discount"), Synonym("promo")]),
    synonyms(&[Synonym("batch"), Synonym("bulk")]),
    synonyms(&[
        Synonym("statistics"), Synonym("stats"), Synonym("metrics"), Synonym("analytics"),
    ]),
    synonyms(&[Synonym("instance"), Synonym("vm"), Synonym("virtual machine")]),
];

/// Every verb and the action it names, flattened once: looked up per word of every tool's name
/// while the index is built.
static VERBS: LazyLock<Vec<(&'static str, Actions)>> = LazyLock::new(|| {
    GROUPS
        .iter()
        .flat_map(|g| {
            g.words
                .iter()
                .filter_map(|w| w.verb())
                .map(|v| (v, g.action))
        })
        .collect()
});

/// The action a single word names, if any (empty when none).
pub(crate) fn verb(word: &str) -> Actions {
    VERBS
        .iter()
        .find(|(v, _)| v.eq_ignore_ascii_case(word))
        .map_or(Actions::empty(), |(_, a)| *a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verb_names_one_action() {
        for (at, (verb, _)) in VERBS.iter().enumerate() {
            assert!(!VERBS[..at].iter().any(|(v, _)| v == verb), "{verb} twice");
            assert!(!verb.contains(' '), "{verb}: a verb is one word");
        }
    }

    #[test]
    fn every_verb_names_an_action() {
        for group in GROUPS {
            assert!(
                group.action.is_empty() == group.words.iter().all(|w| w.verb().is_none()),
                "{group:?}"
            );
        }
    }
}
