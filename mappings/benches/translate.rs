//! Translation speed of a large real document: GitHub's REST description from the installed
//! corpus (`OTC_CORPUS_DIR`, see `scripts/fetch-corpus.sh`), else a small built-in document so
//! the bench always runs.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use otc_mappings::openapi::{MapOptions, NoFetch, map_document};

const SMALL: &str = r##"{"openapi": "3.0.3", "info": {"title": "Pets", "version": "1.0.0"},
  "paths": {"/pets/{id}": {"get": {"operationId": "getPet",
    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}}}},
  "components": {"schemas": {"Pet": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string", "nullable": true}}}}}}"##;

fn document() -> (String, String) {
    let github = std::env::var_os("OTC_CORPUS_DIR").map(|dir| {
        PathBuf::from(dir).join("node_modules/@octokit/openapi/generated/api.github.com.json")
    });
    match github.and_then(|p| std::fs::read_to_string(p).ok()) {
        Some(text) => ("github".to_owned(), text),
        None => ("small".to_owned(), SMALL.to_owned()),
    }
}

fn translate(c: &mut Criterion) {
    let (name, text) = document();
    let mut group = c.benchmark_group("map_document");
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| {
            let mapped = map_document(black_box(&text), &MapOptions::default(), &NoFetch);
            black_box(mapped.map(|m| m.tools.len()).unwrap_or_default())
        });
    });
    group.finish();
}

criterion_group!(benches, translate);
criterion_main!(benches);
