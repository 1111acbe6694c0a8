//! What kind of thing a tool does, and what kind a request asks for: list, read one, create,
//! update, delete.
//!
//! Sibling operations share every noun (`ListComplianceJobs`, `GetComplianceJob`,
//! `CreateComplianceJob`) and differ only in what they do, which a request often says in a word
//! ("… by id", "remove …", "every …") that is not the tool's own verb. A tool's actions come
//! from its HTTP method and path (a `GET` ending in a path parameter reads one thing; without
//! one it lists) and from the verbs in its name (a `POST …/destroy` deletes); a request's from
//! the verbs and phrases it uses. A tool doing what the request asks for ranks above its
//! siblings; nothing is excluded. Which word names which action is [`super::vocab`]'s table.

// The set of actions is defined beside the words that name them (one table, no cycle).
pub(crate) use super::vocab::{Actions, verb};

/// Determiners that, before a noun, ask for many of it ("every script tag", "all webhooks").
const MANY: &[&str] = &["every", "all"];

/// A tool's actions. With an HTTP operation (`method`, `path` template), from the method and
/// path: a `GET` ending in a path parameter reads one thing, one ending in a plural word lists,
/// any other may do either (`/user`, `/glossary`); the verbs of its name add only what the
/// method does not say (`POST …/destroy` deletes), since "get" in a generated name is just the
/// method. An RPC-style API posts to a verb (`POST /subaccounts/list.json`,
/// `POST /messages/info`): a `POST` whose last segment is a verb does what the verb says, not
/// necessarily create. Without an operation (an MCP tool), from the verbs of its name.
pub(crate) fn of_tool<'a>(
    operation: Option<(&str, &str)>,
    name_words: impl IntoIterator<Item = &'a str>,
) -> Actions {
    let named = name_words
        .into_iter()
        .fold(Actions::empty(), |a, w| a | verb(w));
    let Some((method, path)) = operation else {
        return named;
    };
    let last = last_segment(path);
    let is_parameter = last.starts_with('{') && last.ends_with('}');
    let from_method = match method.to_ascii_uppercase().as_str() {
        "GET" | "HEAD" if is_parameter => Actions::READ,
        "GET" | "HEAD" if is_plural(last) => Actions::LIST,
        "GET" | "HEAD" => Actions::LIST | Actions::READ,
        "POST" if !is_parameter && !verb(last).is_empty() => verb(last),
        "POST" => Actions::CREATE,
        "PUT" | "PATCH" => Actions::UPDATE,
        "DELETE" => Actions::DELETE,
        _ => Actions::empty(),
    };
    let changes = Actions::CREATE | Actions::UPDATE | Actions::DELETE;
    from_method | (named & changes)
}

/// The last segment of a path template, without the response format some APIs append to it:
/// an extension (`/script_tags.json`, `/{id}.xml`) or a parameter glued to it
/// (`/Accounts{mediaTypeExtension}`, `/{id}{format}`). What the operation acts on is the part
/// before.
fn last_segment(path: &str) -> &str {
    let mut last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    if last.ends_with('}')
        && let Some(open) = last.rfind('{')
        && open > 0
    {
        last = &last[..open];
    }
    if let Some((stem, extension)) = last.rsplit_once('.')
        && !stem.is_empty()
        && (1..=5).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphabetic())
    {
        last = stem;
    }
    last
}

/// Whether a path segment reads as a plural noun (`script_tags`, `branches`; not `status`,
/// `access`, `analysis`).
fn is_plural(segment: &str) -> bool {
    let word = segment
        .rsplit(|c: char| !c.is_ascii_alphabetic())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_lowercase();
    word.len() > 3 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|e| word.ends_with(e))
}

/// Words that, before a noun, ask for one particular thing ("a single update", "that specific
/// order").
const ONE: &[&str] = &["single", "specific", "particular", "individual"];

/// Words that may come before a request's verb without being its subject ("please", "can you",
/// "I'd like to", "help me").
const POLITE: &[&str] = &[
    "please", "kindly", "can", "could", "would", "will", "you", "i", "i'd", "we", "want", "need",
    "like", "to", "help", "me", "us", "let's", "lets", "let", "go", "ahead", "just", "now", "then",
    "also", "hey", "hi", "ok", "okay",
];

/// Words that open a question. A question asks to know something, which is reading or listing,
/// not changing anything ("which actions are allowed…?" reads the setting rather than sets it).
const QUESTION: &[&str] = &[
    "what", "what's", "whats", "which", "who", "whose", "where", "when", "how", "is", "are",
    "does", "do", "did", "has", "have",
];

/// What a request asks to do: its verbs, plus "by id"/"by key" and "single"/"specific" (one
/// thing, read) and "every"/"all" (many, listed). A request that opens with a
/// verb is imperative: that verb (and those joined to it by "or"/"and") is what it asks, and
/// later verb-like words are its nouns ("replace the list of users", "get the latest update").
/// A question without a verb of its own (one ending in "?" or opening with "what", "which",
/// "is" …) asks to read or list. Empty when it says nothing about it.
pub(crate) fn of_query(query: &str) -> Actions {
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .collect();
    // An imperative request opens with its verb ("get the scheduled update", "replace the
    // list of users"); later verb-like words are then its nouns, unless joined to the first
    // by "or"/"and" ("create or update …").
    // Politeness before the verb ("please", "can you", "I want to") does not make it less so.
    let start = words
        .iter()
        .position(|w| !POLITE.contains(&w.to_ascii_lowercase().as_str()))
        .unwrap_or(words.len());
    let mut leading = words.get(start).map_or(Actions::empty(), |w| verb(w));
    if !leading.is_empty() {
        let mut at = start + 1;
        while let [joint, next, ..] = &words[at.min(words.len())..]
            && matches!(joint.to_ascii_lowercase().as_str(), "or" | "and")
            && !verb(next).is_empty()
        {
            leading |= verb(next);
            at += 2;
        }
    }
    let mut actions = leading;
    for (i, word) in words.iter().enumerate() {
        if leading.is_empty() {
            actions |= verb(word);
        }
        let lower = word.to_ascii_lowercase();
        if MANY.contains(&lower.as_str()) {
            actions |= Actions::LIST;
        }
        if ONE.contains(&lower.as_str()) {
            actions |= Actions::READ;
        }
        if lower == "by"
            && words
                .get(i + 1)
                .is_some_and(|next| matches!(next.to_ascii_lowercase().as_str(), "id" | "key"))
        {
            actions |= Actions::READ;
        }
    }
    let question = query.trim_end().ends_with('?')
        || words
            .first()
            .is_some_and(|w| QUESTION.contains(&w.to_ascii_lowercase().as_str()));
    let changes = Actions::CREATE | Actions::UPDATE | Actions::DELETE;
    if question && !actions.intersects(changes) {
        actions |= Actions::LIST | Actions::READ;
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: Actions = Actions::LIST;
    const READ: Actions = Actions::READ;
    const CREATE: Actions = Actions::CREATE;
    const UPDATE: Actions = Actions::UPDATE;
    const DELETE: Actions = Actions::DELETE;

    #[test]
    fn a_tool_acts_by_its_method_path_and_name() {
        assert_eq!(of_tool(Some(("GET", "/jobs/{id}")), ["Get", "Job"]), READ);
        assert_eq!(of_tool(Some(("get", "/jobs")), ["Get", "Jobs"]), LIST);
        assert_eq!(
            of_tool(Some(("GET", "/user")), ["Get", "User"]),
            LIST | READ
        );
        assert_eq!(
            of_tool(Some(("GET", "/jobs/status")), ["Status"]),
            LIST | READ
        );
        assert_eq!(
            of_tool(
                Some(("POST", "/direct_messages/{id}/destroy")),
                ["Direct", "Messages", "Destroy"]
            ),
            DELETE
        );
        assert_eq!(
            of_tool(
                Some(("POST", "/direct_messages")),
                ["Direct", "Messages", "Destroy"]
            ),
            CREATE | DELETE
        );
        assert_eq!(of_tool(None, ["delete", "file"]), DELETE);
        assert_eq!(of_tool(None, ["ping"]), Actions::empty());
    }

    #[test]
    fn a_response_format_after_the_last_segment_is_not_what_is_acted_on() {
        assert_eq!(
            of_tool(Some(("GET", "/v1/script_tags.json")), ["Get"]),
            LIST
        );
        assert_eq!(
            of_tool(Some(("GET", "/v1/script_tags/{id}.json")), ["Get"]),
            READ
        );
        assert_eq!(
            of_tool(Some(("GET", "/Accounts{mediaTypeExtension}")), ["Get"]),
            LIST
        );
        assert_eq!(
            of_tool(Some(("GET", "/updates/{id}{format}")), ["Get"]),
            READ
        );
        // A parameter alone, or a dot inside a word, is not a format.
        assert_eq!(of_tool(Some(("GET", "/files/{path}")), ["Get"]), READ);
        assert_eq!(of_tool(Some(("GET", "/v1.2/jobs")), ["Get"]), LIST);
    }

    #[test]
    fn an_rpc_post_does_what_its_last_segment_says() {
        assert_eq!(
            of_tool(Some(("POST", "/subaccounts/list.json")), ["Post"]),
            LIST
        );
        assert_eq!(
            of_tool(Some(("POST", "/messages/delete")), ["Post"]),
            DELETE
        );
        assert_eq!(of_tool(Some(("POST", "/messages/send")), ["Post"]), CREATE);
        assert_eq!(of_tool(Some(("POST", "/pets/{list}")), ["Post"]), CREATE);
    }

    #[test]
    fn a_question_asks_to_read_unless_it_names_a_change() {
        assert_eq!(of_query("which actions are allowed in acme?"), LIST | READ);
        assert_eq!(of_query("what's the status of order 7"), LIST | READ);
        assert_eq!(of_query("can you delete order 7?"), DELETE);
        assert_eq!(of_query("order 7 status"), Actions::empty());
    }

    #[test]
    fn an_imperative_request_does_what_its_first_verb_says() {
        assert_eq!(of_query("replace the list of users allowed"), UPDATE);
        assert_eq!(of_query("get the latest update of the order"), READ);
        assert_eq!(of_query("create or update three events"), CREATE | UPDATE);
        assert_eq!(of_query("delete and add a label"), DELETE | CREATE);
        assert_eq!(of_query("please get the latest update"), READ);
        assert_eq!(of_query("can you show me the list of users"), READ);
        // Not imperative: every verb-like word counts.
        assert_eq!(of_query("badges list"), LIST);
        assert_eq!(
            of_query("a new label, then delete the old"),
            CREATE | DELETE
        );
    }

    #[test]
    fn single_asks_for_one_thing() {
        assert_eq!(of_query("a single scheduled post"), READ);
        assert_eq!(of_query("that specific invoice"), READ);
    }

    #[test]
    fn a_request_says_what_it_wants_done() {
        assert_eq!(of_query("twitter compliance job status by id"), READ);
        assert_eq!(of_query("list every script tag"), LIST);
        assert_eq!(of_query("remove pet 10 from the store"), DELETE);
        assert_eq!(of_query("create or update three events"), CREATE | UPDATE);
        assert_eq!(of_query("privileges of the account"), Actions::empty());
    }
}
