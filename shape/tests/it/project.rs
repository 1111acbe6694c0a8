//! Projections: what they compute, the schema they serve, and hostile programs refused or
//! stopped quickly.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use otc_shape::project::{Exhaustion, Limits, Projection, ProjectionError, SchemaOutcome};
use serde_json::{Value, json};

fn run(program: &str, input: Value) -> Result<Value, ProjectionError> {
    Projection::compile(program, Limits::default())?.run(input)
}

fn pulls(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                json!({"number": i, "title": format!("Pull {i}"), "state": "open",
                       "user": {"login": format!("user{i}"), "id": i},
                       "labels": [{"name": "bug"}], "body": "x".repeat(200)})
            })
            .collect(),
    )
}

#[test]
fn outputs_become_one_value_an_array_or_null() {
    let input = pulls(3);
    assert_eq!(
        run(".[] | {number, title, user: .user.login}", input.clone()).unwrap(),
        json!([{"number": 0, "title": "Pull 0", "user": "user0"},
               {"number": 1, "title": "Pull 1", "user": "user1"},
               {"number": 2, "title": "Pull 2", "user": "user2"}])
    );
    assert_eq!(run(".[0].number", input.clone()).unwrap(), json!(0));
    assert_eq!(run("empty", input.clone()).unwrap(), Value::Null);
    assert_eq!(run("map(.number) | add", input.clone()).unwrap(), json!(3));
    assert_eq!(
        run(
            "[.[] | select(.number > 0) | .user.login] | join(\",\")",
            input
        )
        .unwrap(),
        json!("user1,user2")
    );
}

#[test]
fn ordinary_programs_still_work() {
    let input = json!({"a": [3, 1, 2], "s": "Hello", "o": {"k": 1}});
    for (program, expected) in [
        (".a | sort", json!([1, 2, 3])),
        (".a | length", json!(3)),
        ("[.a[] * 2]", json!([6, 2, 4])),
        (".s * 2", json!("HelloHello")),
        (".o | to_entries | map(.key)", json!(["k"])),
        ("[limit(2; .a[])]", json!([3, 1])),
        ("reduce .a[] as $x (0; . + $x)", json!(6)),
        ("[range(3)]", json!([0, 1, 2])),
        ("def inc: . + 1; [.a[] | inc]", json!([4, 2, 3])),
        ("def f(g): [g]; f(.a[])", json!([3, 1, 2])),
        (".o.k *= 5 | .o", json!({"k": 5})),
        ("try error(\"x\") catch .", json!("x")),
        ("\"\\(.s)!\"", json!("Hello!")),
        ("[paths] | length", json!(7)),
        ("[..] | length", json!(8)),
        (".a | first, last", json!([3, 2])),
        ("del(.a, .s)", json!({"o": {"k": 1}})),
        ("[.a[] | tostring]", json!(["3", "1", "2"])),
        (".o | tojson", json!("{\"k\":1}")),
        ("[recurse | numbers]", json!([3, 1, 2, 1])),
    ] {
        assert_eq!(run(program, input.clone()).unwrap(), expected, "{program}");
    }
}

#[test]
fn syntax_and_compile_errors_say_where() {
    let err = run(".a | ", json!(null)).unwrap_err();
    assert!(matches!(err, ProjectionError::Syntax { .. }), "{err}");
    let err = run("{a: .b,\n  c: nope(1)}", json!(null)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "jq compile error at line 2, column 6 (byte 13): undefined filter `nope/1`"
    );
    let err = run(".a | $x", json!(null)).unwrap_err();
    assert!(err.to_string().contains("undefined variable `$x`"), "{err}");
}

#[test]
fn the_environment_inputs_exit_and_log_are_refused_at_compile_time() {
    for program in [
        "env",
        "$ENV",
        "$ENV.HOME",
        "env.SECRET",
        "input",
        "inputs",
        "[inputs]",
        "halt",
        "halt_error",
        "halt_error(1)",
        "debug",
        "debug(\"x\")",
        "stderr",
        "__otc_tick",
        "def __otc_x: 1; 2",
    ] {
        let err = Projection::compile(program, Limits::default()).unwrap_err();
        assert!(
            matches!(err, ProjectionError::Refused { .. }),
            "{program}: {err}"
        );
    }
    let err = Projection::compile(". as $x | env", Limits::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "jq program refused at line 1, column 11 (byte 10): `env/0`: `env` reads the bridge's \
         environment, which holds secrets"
    );
}

#[test]
fn recursion_and_unbounded_generators_are_refused_at_compile_time() {
    for program in [
        "def f: f; f",
        "def f: 1 + f; f",
        "def f(g): g | f(g); f(.)",
        "def f: def g: f; g; f",
        "repeat(.)",
        "until(false; .)",
        "while(true; .)",
        "recurse(.[])",
        "recurse(.; true)",
        "last(repeat(1))",
    ] {
        let err = Projection::compile(program, Limits::default()).unwrap_err();
        assert!(
            matches!(err, ProjectionError::Refused { .. }),
            "{program}: {err}"
        );
    }
    // A name that shadows a refused builtin is the user's own.
    assert_eq!(
        run("def repeat(f): [f, f]; repeat(1)", json!(null)).unwrap(),
        json!([1, 1])
    );
    // Siblings and parameters are not recursion.
    assert_eq!(
        run("def f: 1; def g: f + 1; def h(f): f; h(g)", json!(null)).unwrap(),
        json!(2)
    );
}

#[test]
fn long_or_deeply_nested_programs_are_refused() {
    let long = ".".repeat(20_000);
    assert!(matches!(
        Projection::compile(&long, Limits::default()),
        Err(ProjectionError::Refused { .. })
    ));
    let deep = format!("{}.{}", "[".repeat(1000), "]".repeat(1000));
    assert!(matches!(
        Projection::compile(&deep, Limits::default()),
        Err(ProjectionError::Refused { .. })
    ));
}

/// Runs `program` on a thread and fails the test if it does not finish within `within`.
fn stops(program: &str, within: Duration) -> ProjectionError {
    let projection = Projection::compile(program, Limits::default())
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    thread::spawn(move || {
        let _ = tx.send(projection.run(json!([1, 2, 3])));
    });
    let result = rx
        .recv_timeout(within)
        .unwrap_or_else(|_| panic!("{program} did not stop within {within:?}"));
    let elapsed = started.elapsed();
    match result {
        Ok(value) => panic!("{program} finished with {value} after {elapsed:?}"),
        Err(err) => err,
    }
}

#[test]
fn hostile_programs_stop_quickly_with_an_error() {
    // The time budget is 100 ms; the watchdog allows for an unoptimised build on a busy machine.
    let within = Duration::from_secs(5);
    for program in [
        "last(range(1e18))",
        "reduce range(1e12) as $x (0; .+1)",
        "[range(1e9)]",
        "range(1e18) | empty",
        "last(range(0; infinite))",
        "[limit(1e9; range(1e18))] | length",
        "[.,.] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | \
         [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | \
         [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | \
         [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]] | [.[],.[]]",
        "[.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | \
         [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | \
         [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | \
         [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | [.,.] | tostring",
        "reduce range(64) as $x (.; [., .]) | tostring",
        "reduce range(100000) as $x (.; [.])",
        "(1,2) as $a | (1,2) as $b | (1,2) as $c | (1,2) as $d | (1,2) as $e | (1,2) as $f | \
         (1,2) as $g | (1,2) as $h | (1,2) as $i | (1,2) as $j | (1,2) as $k | (1,2) as $l | \
         (1,2) as $m | (1,2) as $n | (1,2) as $o | (1,2) as $p | (1,2) as $q | (1,2) as $r | \
         (1,2) as $s | (1,2) as $t | (1,2) as $u | (1,2) as $v | (1,2) as $w | (1,2) as $x | \
         (1,2) as $y | (1,2) as $z | (1,2) as $aa | (1,2) as $ab | (1,2) as $ac | (try empty)?",
        "try last(range(1e18)) catch 0",
        "[range(1e18)?]",
        "[range(3000)] as $a | [range(3000) | $a] | add | length",
        "[range(1e6)] | combinations(3) | empty",
        ".[] |= last(range(1e18))",
        "\"x\" * 1000000000",
        "\"x\" * 1e9",
        "(\"x\" * 1000000) * 1000",
        "\"x\" | .[0:0] as $x | [range(1e9) | \"a\"] | add",
    ] {
        let started = Instant::now();
        let err = stops(program, within);
        assert!(
            matches!(
                err,
                ProjectionError::Exhausted(_) | ProjectionError::Runtime { .. }
            ),
            "{program}: {err}"
        );
        eprintln!("{:>8.1?} {err}: {program:.60}", started.elapsed());
    }
}

#[test]
fn a_string_repeated_past_the_output_budget_is_refused_before_it_is_built() {
    let err = stops("\"x\" * 1000000000", Duration::from_secs(5));
    assert_eq!(err, ProjectionError::Exhausted(Exhaustion::Output));
}

#[test]
fn the_time_budget_stops_a_long_run() {
    let limits = Limits {
        time: Duration::from_millis(20),
        ..Limits::default()
    };
    let projection = Projection::compile("last(range(1e18))", limits).unwrap();
    let started = Instant::now();
    let err = projection.run(Value::Null).unwrap_err();
    assert_eq!(err, ProjectionError::Exhausted(Exhaustion::Time));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn outputs_past_the_output_budget_are_refused() {
    let limits = Limits {
        output_bytes: 1000,
        ..Limits::default()
    };
    let projection = Projection::compile(".[]", limits).unwrap();
    assert_eq!(
        projection.run(pulls(10)).unwrap_err(),
        ProjectionError::Exhausted(Exhaustion::Output)
    );
    assert!(projection.run(pulls(1)).is_ok());
}

fn pulls_schema() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "number": {"type": "integer"},
                "title": {"type": "string"},
                "state": {"type": "string", "enum": ["open", "closed"]},
                "user": {"type": "object", "properties": {
                    "login": {"type": "string"}, "id": {"type": "integer"}}},
                "labels": {"type": "array", "items": {"type": "object",
                    "properties": {"name": {"type": "string"}}}}
            },
            "required": ["number", "title", "user", "labels"]
        }
    })
}

fn schema(program: &str) -> SchemaOutcome {
    Projection::compile(program, Limits::default())
        .unwrap()
        .output_schema(Some(&pulls_schema()))
}

#[test]
fn the_output_schema_follows_the_projection() {
    let summary = json!({
        "type": "object",
        "properties": {
            "number": {"type": "integer"},
            "title": {"type": "string"},
            // `login` is not required: jq gives `null` where it is missing.
            "user": {"anyOf": [{"type": "string"}, {"type": "null"}]}
        },
        "required": ["number", "title", "user"]
    });
    assert_eq!(
        schema("[.[] | {number, title, user: .user.login}]"),
        SchemaOutcome::Derived(json!({"type": "array", "items": summary}))
    );
    assert_eq!(
        schema("map({number, title, user: .user.login})"),
        SchemaOutcome::Derived(json!({"type": "array", "items": summary}))
    );
    // Several outputs become an array, one output stays bare, none is null.
    assert_eq!(
        schema(".[] | {number, title, user: .user.login}"),
        SchemaOutcome::Derived(json!({"anyOf": [
            {"type": "array", "items": summary}, summary, {"type": "null"}]}))
    );
    assert_eq!(schema("."), SchemaOutcome::Derived(pulls_schema()));
    // An index past the end gives `null`, and so does every member of it.
    let string_or_null = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    assert_eq!(
        schema(".[0].user.login"),
        SchemaOutcome::Derived(string_or_null.clone())
    );
    assert_eq!(
        schema(".[0] | .labels | [.[] | .name]"),
        SchemaOutcome::Derived(json!({"type": "array", "items": string_or_null}))
    );
}

#[test]
fn the_output_schema_is_dropped_outside_the_subset() {
    for (program, reason) in [
        ("length", "a call to `length`"),
        (".[] | select(.number > 1)", "a call to `select`"),
        (".[0].nope", "no property `nope`"),
        ("{(.[0].title): 1}", "computed key"),
        (
            ".[0] | {l: .labels[]}",
            "member `l` may give several values",
        ),
        (".[1:]", "a slice"),
    ] {
        match schema(program) {
            SchemaOutcome::Dropped { reason: got } => {
                assert!(got.contains(reason), "{program}: {got}");
            }
            derived @ SchemaOutcome::Derived(_) => panic!("{program}: {derived:?}"),
        }
    }
    let projection = Projection::compile(".", Limits::default()).unwrap();
    assert!(matches!(
        projection.output_schema(None),
        SchemaOutcome::Dropped { .. }
    ));
}
