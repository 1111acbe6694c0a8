//! Translates OpenAPI documents given as file paths and prints, per document, the time
//! `map_document` took, the tools produced and the diagnostics. For measuring with
//! `/usr/bin/time -v` (peak memory) on real documents:
//!
//! ```sh
//! cargo build --release -p otc-mappings --example translate
//! /usr/bin/time -v target/release/examples/translate .corpus/node_modules/@octokit/openapi/generated/api.github.com.json
//! ```
#![allow(clippy::print_stdout, missing_docs)]

use std::time::Instant;

use otc_mappings::openapi::{MapOptions, NoFetch, map_document};

fn main() {
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                println!("{path}: {e}");
                continue;
            }
        };
        // Relative `$ref`s resolve against an absolute path only.
        let base_uri =
            std::path::absolute(&path).map_or_else(|_| path.clone(), |p| p.display().to_string());
        let options = MapOptions {
            base_uri: Some(base_uri),
            ..MapOptions::default()
        };
        let started = Instant::now();
        let result = map_document(&text, &options, &NoFetch);
        let elapsed = started.elapsed();
        match result {
            Ok(mapped) => println!(
                "{:>9.3} s {:>6} tools {:>6} diagnostics  {path}",
                elapsed.as_secs_f64(),
                mapped.tools.len(),
                mapped.diagnostics.len()
            ),
            Err(e) => println!("{:>9.3} s unusable: {e}  {path}", elapsed.as_secs_f64()),
        }
    }
}
