use otc_mappings::otc::{ToolDefinition, ToolId, ToolVersion};
use otc_mappings::{MappedTool, Target};
use serde_json::json;

use super::tokenize::{STOP_WORDS, Stems, Tokenizer, split_identifier};
use super::*;

fn tool(toolkit: &str, name: &str, description: &str, params: &serde_json::Value) -> MappedTool {
    let definition = ToolDefinition {
        id: ToolId::exact(toolkit, name, ToolVersion::new(1, 0, 0)),
        name: format!("{toolkit}_{name}"),
        description: description.to_owned(),
        version: ToolVersion::new(1, 0, 0),
        input_schema: json!({"type": "object", "properties": params}).into(),
        output_schema: None,
        requirements: None,
    };
    MappedTool {
        definition: std::sync::Arc::new(definition),
        target: Target::Named {
            name: name.to_owned(),
        },
        destructive: false,
        label: None,
        hidden_inputs: Vec::new(),
    }
}

fn catalog() -> Vec<MappedTool> {
    vec![
        tool(
            "GitHub",
            "ReposGet",
            "Get a repository.",
            &json!({"owner": {"type": "string", "description": "The account owner."},
                   "repo": {"type": "string", "description": "The name of the repository."}}),
        ),
        tool(
            "GitHub",
            "ReposListForUser",
            "Lists public repositories for the specified user.",
            &json!({"username": {"type": "string", "description": "The handle of the account."}}),
        ),
        tool(
            "GitHub",
            "IssuesCreate",
            "Create an issue in a repository.",
            &json!({"title": {"type": "string"}, "body": {"type": "string"}}),
        ),
        tool(
            "Jira",
            "CreateIssue",
            "Creates an issue or a sub-task in a project.",
            &json!({"fields": {"type": "object", "properties": {
                "summary": {"type": "string", "description": "A short summary."}}}}),
        ),
        tool(
            "Jira",
            "GetProject",
            "Returns the project details.",
            &json!({"projectIdOrKey": {"type": "string"}}),
        ),
        tool(
            "SwaggerPetstore",
            "AddPet",
            "Add a new pet to the store.",
            &json!({"name": {"type": "string"}, "status": {"type": "string",
                   "description": "pet status in the store"}}),
        ),
    ]
}

fn ids(index: &SearchIndex, tools: &[MappedTool], query: &str) -> Vec<String> {
    index
        .search(query, 10, None)
        .iter()
        .map(|h| {
            format!(
                "{}.{}",
                tools[h.position].definition.id.toolkit, tools[h.position].definition.id.tool
            )
        })
        .collect()
}

#[test]
fn identifiers_split_at_case_digits_and_acronyms() {
    assert_eq!(
        split_identifier("listForAuthenticatedUser"),
        ["list", "For", "Authenticated", "User"]
    );
    assert_eq!(split_identifier("HTTPServer2"), ["HTTP", "Server", "2"]);
    assert_eq!(
        split_identifier("GitHubV3RestApi"),
        ["Git", "Hub", "V", "3", "Rest", "Api"]
    );
    assert_eq!(split_identifier("repos"), ["repos"]);
}

#[test]
fn snake_kebab_and_camel_meet_on_the_same_terms() {
    let tokenizer = Tokenizer::default();
    let units = |text: &str| -> Vec<String> {
        tokenizer
            .collect(text, false)
            .into_iter()
            .filter(|t| !t.joined)
            .map(|t| t.term)
            .collect()
    };
    assert_eq!(units("reposListForUser"), units("repos_list_for_user"));
    assert_eq!(
        units("repos-list-for-user"),
        units("repos: listing for users")
    );
    // Whole product names are kept beside their parts, and stop words and lone digits dropped.
    let all: Vec<String> = tokenizer
        .collect("GitHubV3", false)
        .into_iter()
        .map(|t| t.term)
        .collect();
    assert!(all.contains(&"github".to_owned()), "{all:?}");
    assert!(!all.contains(&"3".to_owned()), "{all:?}");
}

#[test]
fn stop_words_are_sorted_for_their_binary_search() {
    assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_catalog_read_through_the_stem_memo_gives_the_tokenizers_terms() {
    let tokenizer = Tokenizer::default();
    let mut stems = Stems::default();
    // Twice: the second pass reads every stem from the memo.
    for _ in 0..2 {
        for text in [
            "GitHubV3 reposListForUser: lists the repositories of a user",
            "Ünïcode ΣΊΣΥΦΟΣ OAuth2Token, the pet of store HTTPServer2 a 42",
        ] {
            for join_words in [false, true] {
                let mut memoised = Vec::new();
                stems.tokens(&tokenizer, text, join_words, |term, joined| {
                    memoised.push((term.to_owned(), joined));
                });
                let direct: Vec<(String, bool)> = tokenizer
                    .collect(text, join_words)
                    .into_iter()
                    .map(|t| (t.term, t.joined))
                    .collect();
                assert_eq!(memoised, direct, "{text}");
            }
        }
    }
}

#[test]
fn same_catalog_and_query_give_the_same_hits() {
    let tools = catalog();
    let first = SearchIndex::build(&tools).search("create an issue", 10, None);
    let second = SearchIndex::build(&tools).search("create an issue", 10, None);
    assert!(!first.is_empty());
    assert_eq!(first, second);
}

#[test]
fn ties_are_broken_by_position() {
    let tools = vec![
        tool("A", "Ping", "Ping the server.", &json!({})),
        tool("B", "Ping", "Ping the server.", &json!({})),
    ];
    let hits = SearchIndex::build(&tools).search("ping", 10, None);
    assert_eq!(hits.iter().map(|h| h.position).collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn an_exact_id_or_name_ranks_that_tool_first() {
    let tools = catalog();
    let index = SearchIndex::build(&tools);
    for tool in &tools {
        let tool = &tool.definition;
        let id = format!("{}.{}", tool.id.toolkit, tool.id.tool);
        assert_eq!(ids(&index, &tools, &id).first(), Some(&id), "query {id}");
        assert_eq!(
            ids(&index, &tools, &tool.name).first(),
            Some(&id),
            "query {}",
            tool.name
        );
    }
}

#[test]
fn a_natural_request_finds_its_tool() {
    let tools = catalog();
    let index = SearchIndex::build(&tools);
    assert_eq!(
        ids(&index, &tools, "list the repositories of user octocat")
            .first()
            .map(String::as_str),
        Some("GitHub.ReposListForUser")
    );
    assert_eq!(
        ids(&index, &tools, "create a Jira issue in project ABC")
            .first()
            .map(String::as_str),
        Some("Jira.CreateIssue")
    );
    assert_eq!(
        ids(&index, &tools, "add 'doggie' to the pet store")
            .first()
            .map(String::as_str),
        Some("SwaggerPetstore.AddPet")
    );
}

#[test]
fn an_unrelated_query_returns_nothing() {
    let index = SearchIndex::build(&catalog());
    assert!(
        index
            .search("book a flight from Paris to Rome", 10, None)
            .is_empty()
    );
    assert!(index.search("", 10, None).is_empty());
    assert!(index.search("the of and", 10, None).is_empty());
    // A product the catalog does not serve, with words it does have.
    assert!(
        index
            .search("create a Shopify issue for the store", 10, None)
            .is_empty()
    );
}

#[test]
fn the_toolkit_filter_keeps_only_that_toolkit() {
    let tools = catalog();
    let index = SearchIndex::build(&tools);
    let hits = index.search("create issue", 10, Some("jira"));
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| tools[h.position].definition.id.toolkit == "Jira")
    );
    let hits = index.search("create issue", 10, Some("GITHUB"));
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| tools[h.position].definition.id.toolkit == "GitHub")
    );
    assert!(index.search("create issue", 10, Some("Gitlab")).is_empty());
}

#[test]
fn the_limit_is_respected() {
    let index = SearchIndex::build(&catalog());
    assert!(
        index
            .search("create issue repository project", 10, None)
            .len()
            > 1
    );
    assert_eq!(
        index
            .search("create issue repository project", 1, None)
            .len(),
        1
    );
    assert!(index.search("create issue", 0, None).is_empty());
}

#[test]
fn an_empty_catalog_finds_nothing_and_holds_little() {
    let index = SearchIndex::build(std::iter::empty());
    assert!(index.search("anything", 5, None).is_empty());
    assert!(index.heap_bytes() < 1024);
}

#[test]
fn index_is_send_and_sync() {
    fn check<T: Send + Sync + std::fmt::Debug>() {}
    check::<SearchIndex>();
}

fn http(tool: MappedTool, method: &str, path: &str) -> MappedTool {
    let plan = otc_mappings::openapi::RequestPlan {
        operation: format!("{method} {path}"),
        method: method.to_owned(),
        path: path.to_owned(),
        server_url: None,
        params: Vec::new(),
        body: None,
        security: Vec::new(),
        accept: Vec::new(),
        operation_id: None,
        tags: Vec::new(),
    };
    MappedTool {
        target: Target::Http(std::sync::Arc::new(plan)),
        ..tool
    }
}

#[test]
fn a_synonym_finds_the_tool_that_says_it_otherwise() {
    let mut tools = catalog();
    tools.push(tool(
        "SwaggerPetstore",
        "DeletePet",
        "Deletes a pet.",
        &json!({"petId": {"type": "integer"}}),
    ));
    let index = SearchIndex::build(&tools);
    let found = ids(&index, &tools, "remove pet 10 from the pet store");
    assert_eq!(
        found.first().map(String::as_str),
        Some("SwaggerPetstore.DeletePet")
    );
    let found = ids(&index, &tools, "sign in");
    assert!(found.is_empty(), "no login tool here: {found:?}");
}

#[test]
fn what_the_request_asks_orders_siblings() {
    let mut tools = catalog();
    tools.extend([
        http(
            tool("Jobs", "ListComplianceJobs", "Compliance jobs.", &json!({})),
            "GET",
            "/compliance/jobs",
        ),
        http(
            tool("Jobs", "GetComplianceJob", "Compliance job.", &json!({})),
            "GET",
            "/compliance/jobs/{id}",
        ),
        http(
            tool("Jobs", "CreateComplianceJob", "Compliance job.", &json!({})),
            "POST",
            "/compliance/jobs",
        ),
    ]);
    let index = SearchIndex::build(&tools);
    let first = |q: &str| ids(&index, &tools, q).into_iter().next();
    assert_eq!(
        first("compliance job by id").as_deref(),
        Some("Jobs.GetComplianceJob")
    );
    assert_eq!(
        first("every compliance job").as_deref(),
        Some("Jobs.ListComplianceJobs")
    );
    assert_eq!(
        first("make a compliance job").as_deref(),
        Some("Jobs.CreateComplianceJob")
    );
}

#[test]
fn the_literal_segments_of_a_path_are_searched() {
    let mut tools = catalog();
    tools.push(http(
        tool("Shop", "GetInline", "Returns them.", &json!({})),
        "GET",
        "/appstore/v1/inline_script_tags/{inlineScriptTagId}.json",
    ));
    let index = SearchIndex::build(&tools);
    let found = ids(&index, &tools, "inline script tags");
    assert_eq!(found.first().map(String::as_str), Some("Shop.GetInline"));
    // A path parameter's name is an input, not what the tool is about.
    assert!(document::path_literals("/tags/{inlineScriptTagId}.json").contains("tags"));
    assert!(!document::path_literals("/tags/{inlineScriptTagId}.json").contains("inline"));
}

#[test]
fn the_filler_of_spoken_requests_is_not_a_word_to_match() {
    let tokenizer = Tokenizer::default();
    let terms: Vec<String> = tokenizer
        .collect("I actually need to know which repos I currently own", false)
        .into_iter()
        .map(|t| t.term)
        .collect();
    assert_eq!(terms, ["repo"]);
    let tools = catalog();
    let index = SearchIndex::build(&tools);
    assert_eq!(
        ids(&index, &tools, "get the repository"),
        ids(&index, &tools, "actually just get the repository again now")
    );
}

#[test]
fn a_deprecated_tool_ranks_below_its_replacement() {
    assert!(document::is_deprecated("Deprecated.  Get a team (Legacy)"));
    assert!(document::is_deprecated(
        "watch changes to a Service. deprecated: use the 'watch' parameter instead."
    ));
    assert!(!document::is_deprecated(
        "Update an organization. The `members_can_create` parameter is deprecated."
    ));
    assert!(!document::is_deprecated(
        "Deprecation notices of the account."
    ));
    let mut tools = catalog();
    tools.insert(
        0,
        tool("Teams", "GetTeam", "Deprecated. Get a team.", &json!({})),
    );
    tools.push(tool(
        "Teams",
        "GetTeamV2",
        "Get a team by slug.",
        &json!({}),
    ));
    let index = SearchIndex::build(&tools);
    assert_eq!(ids(&index, &tools, "get a team")[0], "Teams.GetTeamV2");
}

#[test]
fn two_words_written_as_one_identifier_count_once() {
    // `PullRequests` is `pull`, `request` and the joined `pullrequest`; a request saying "pull
    // requests" matches all three, and the join must not add to the two words it is made of.
    let mut tools = catalog();
    tools.extend([
        tool(
            "GitHub",
            "ReposListPullRequestsAssociatedWithCommit",
            "Lists the merged pull request that introduced the commit to the repository.",
            &json!({"commit_sha": {"type": "string"}}),
        ),
        tool(
            "GitHub",
            "PullsList",
            "Lists pull requests in a repository.",
            &json!({"state": {"type": "string"}}),
        ),
    ]);
    let index = SearchIndex::build(&tools);
    assert_eq!(
        ids(&index, &tools, "list pull requests of a repository")
            .first()
            .map(String::as_str),
        Some("GitHub.PullsList")
    );
}

#[test]
fn a_request_that_names_a_product_is_about_it() {
    let mut tools = catalog();
    tools.push(tool(
        "Wolfram",
        "GetResults",
        "Ask Wolfram|Alpha a question in plain language.",
        &json!({"input": {"type": "string", "description": "The question."}}),
    ));
    let index = SearchIndex::build(&tools);
    // `Mars` and `Earth` are values of the question, not services the catalog lacks; a word
    // split at punctuation (`Wolfram|Alpha`) is whole, unlike one split at a case change.
    assert_eq!(
        ids(
            &index,
            &tools,
            "ask Wolfram|Alpha: distance from Earth to Mars today"
        )
        .first(),
        Some(&"Wolfram.GetResults".to_owned())
    );
    // Without the product's name the same words name services nobody serves.
    assert!(
        index
            .search("distance from Earth to Mars today", 10, None)
            .is_empty()
    );
    // The product's name alone is not a request it serves.
    assert!(
        index
            .search("make Wolfram book my flight", 10, None)
            .is_empty()
    );
}

#[test]
fn a_toolkit_named_in_one_word_is_found_by_its_words_apart() {
    let mut tools = catalog();
    tools.push(tool(
        "SwaggerPetstore",
        "LoginUser",
        "Logs user into the system.",
        &json!({"username": {"type": "string"}, "password": {"type": "string"}}),
    ));
    let index = SearchIndex::build(&tools);
    assert_eq!(
        ids(&index, &tools, "sign in to the pet shop as 'theUser'").first(),
        Some(&"SwaggerPetstore.LoginUser".to_owned())
    );
}

#[test]
fn what_a_tool_answers_is_weak_evidence() {
    let mut tools = catalog();
    let mut get = tool("Zoo", "GetAnimal", "Returns one animal.", &json!({}));
    std::sync::Arc::make_mut(&mut get.definition).output_schema = Some(
        json!({"type": "object", "properties": {"name": {"type": "string"},
                                                "status": {"type": "string"}}})
        .into(),
    );
    tools.push(tool(
        "Zoo",
        "ListAnimals",
        "Returns the animals.",
        &json!({}),
    ));
    tools.push(get);
    let index = SearchIndex::build(&tools);
    // Asked by what it answers, the tool that answers it ranks first.
    assert_eq!(
        ids(&index, &tools, "get the name and status of animal 7").first(),
        Some(&"Zoo.GetAnimal".to_owned())
    );
    // An output property alone is not enough to be relevant.
    assert!(index.search("feeding schedule", 10, None).is_empty());
}

#[test]
fn a_tool_is_one_hit_however_many_ways_it_matches() {
    // `image` stands for `picture` (here only in what the tool answers) and `photo` (in its
    // description): two synonym matches of one tool, the first in its output.
    let mut upload = tool("Album", "Upload", "Uploads a photo.", &json!({}));
    std::sync::Arc::make_mut(&mut upload.definition).output_schema =
        Some(json!({"type": "object", "properties": {"picture": {"type": "string"}}}).into());
    let tools = vec![
        upload,
        tool("Album", "ListAlbums", "Lists the albums.", &json!({})),
    ];
    let index = SearchIndex::build(&tools);
    let hits = index.search("image", 10, None);
    let mut positions: Vec<usize> = hits.iter().map(|h| h.position).collect();
    positions.dedup();
    assert_eq!(positions.len(), hits.len(), "{hits:?}");
    assert_eq!(positions, [0]);
}

#[test]
fn only_the_first_thousand_characters_of_a_request_are_read() {
    let tools = catalog();
    let index = SearchIndex::build(&tools);
    let request = |filler: usize| format!("{} create a jira issue", "x".repeat(filler));
    assert_eq!(
        ids(&index, &tools, &request(MAX_QUERY_CHARS - 100))
            .first()
            .map(String::as_str),
        Some("Jira.CreateIssue")
    );
    assert!(index.search(&request(MAX_QUERY_CHARS), 10, None).is_empty());
}

#[test]
fn an_explanation_says_what_the_search_decided() {
    let mut tools = catalog();
    tools.push(tool(
        "SwaggerPetstore",
        "LoginUser",
        "Logs user into the system.",
        &json!({"username": {"type": "string"}, "password": {"type": "string"}}),
    ));
    let index = SearchIndex::build(&tools);
    let queries = [
        "create an issue in a jira project",
        "sign in to the pet shop as 'theUser'",
        "get a repository",
        "feeding schedule",
    ];
    for query in queries {
        let hits = index.search(query, tools.len(), None);
        for position in 0..tools.len() {
            // The explanation runs the ranker's phases on its own path: it admits exactly the
            // hits, at their scores, and searching again after it finds the same.
            let explained = index.explain(query, position);
            let admitted = explained.tool.as_ref().and_then(|tool| tool.admitted);
            let hit = hits.iter().find(|h| h.position == position);
            assert_eq!(admitted, hit.map(|h| h.score), "{query}: {explained}");
        }
        assert_eq!(index.search(query, tools.len(), None), hits);
    }

    let explained = index.explain("sign in to the pet shop as 'theUser'", 6);
    let terms: Vec<&str> = explained.terms.iter().map(|t| t.term.as_str()).collect();
    assert!(terms.contains(&"shop"), "{explained}");
    assert!(
        explained.synonyms.contains(&"login".to_owned()),
        "{explained}"
    );
    assert!(
        explained.synonyms.contains(&"store".to_owned()),
        "{explained}"
    );
    let tool = explained
        .tool
        .as_ref()
        .expect("the request reaches LoginUser");
    assert!(tool.synonym.contains(&"sign".to_owned()), "{explained}");
    assert!(tool.admitted.is_some(), "{explained}");
    assert!(explained.to_string().contains("admitted"), "{explained}");
    // A tool no term reaches is explained as such.
    assert!(index.explain("feeding schedule", 0).tool.is_none());
}

#[test]
fn the_model_alone_answers_unsure_above_its_bar_and_never_for_a_product_the_catalog_lacks() {
    let tools = catalog();
    let index = SearchIndex::build(&tools);
    // Tool `p` lies along axis `p`; a request's vector is close to tools 0 and 1 by the cosines
    // its words ask for, the rest of its length on an axis no tool has.
    let dims = tools.len() + 1;
    let mut vectors = Vectors::new(dims, tools.len());
    for p in 0..tools.len() {
        let mut v = vec![0.0; dims];
        v[p] = 1.0;
        vectors.set(p, &Quantized::of(&v));
    }
    let embed_one = |text: &str| {
        let (first, second) = if text.contains("certain") {
            (0.8, 0.1)
        } else if text.contains("vague") {
            (0.3, 0.25)
        } else {
            (0.2, 0.15)
        };
        let mut v = vec![0.0f32; dims];
        v[0] = first;
        v[1] = second;
        v[dims - 1] = (1.0f32 - first * first - second * second).sqrt();
        v
    };
    let embed = |parts: &[&str]| Some(parts.iter().map(|p| embed_one(p)).collect());
    let meaning = Meaning {
        vectors: &vectors,
        embed: &embed,
        bars: Bars::default(),
    };
    let find = |query: &str| index.find(query, 5, Scope::default(), Some(&meaning)).hits;
    // No word of these requests is in the catalog: the model alone answers.
    let sure = find("zorblax certain quuxify");
    assert_eq!(sure.first().map(|h| (h.position, h.sure)), Some((0, true)));
    let unsure = find("zorblax vague quuxify");
    assert_eq!(unsure.first().map(|h| h.position), Some(0));
    assert!(unsure.iter().all(|h| !h.sure), "{unsure:?}");
    assert!(find("zorblax dim quuxify").is_empty());
    // However close the model, a product the catalog does not serve gets nothing; a place it
    // has never heard of is only a word.
    assert!(find("zorblax certain quuxify on Spotify").is_empty());
    assert!(!find("zorblax certain quuxify in Delhi").is_empty());
    // The words admitting a tool make the answer sure.
    assert!(
        find("create an issue in a repository, vague")
            .iter()
            .all(|h| h.sure)
    );
    // A request that opens with a part no ranker is sure of: the sure part's tools come first
    // in each turn, the unsure part still has its turn.
    let both = find("zorblax vague quuxify. Create an issue in a repository.");
    assert_eq!(
        both.iter()
            .map(|h| (h.part, h.sure))
            .take(2)
            .collect::<Vec<_>>(),
        [(1, true), (0, false)],
        "{both:?}"
    );
}
