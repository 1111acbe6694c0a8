//! Semantic tool search for the served catalog (DESIGN.md §13): the sentence-embedding model the
//! user installed (`search: {model: DIR}`, `--search-model DIR`), the catalog's tool vectors,
//! and what `/health` says of them.
//!
//! - The model is read once at start-up, on a blocking thread while the sources start; a missing
//!   or broken model directory is a start-up error naming the path (or, with `optional: true`,
//!   a warning and lexical search).
//! - Tools are embedded in the background, never on the way to readiness or inside a request:
//!   search is lexical until every tool of the current catalog has a vector, then fused. Each
//!   new catalog (a refresh, a reload) embeds only the tools it has not seen.
//! - Vectors are cached on disk, one file per model, keyed by the model and the text the model
//!   reads of each tool (its toolkit, name and description): a restart or a reload embeds
//!   nothing whose text did not change. The file holds vectors only (no secret); a broken file
//!   is ignored and rewritten.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use otc_search::{Model, Quantized, Vectors};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::registry::{Catalog, SharedCatalog};

/// `search:` in the configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// A sentence-embedding model's directory, as `scripts/install-search-model.sh` installs it:
    /// int8 ONNX (`model.onnx`, `tokenizer.json`, `libonnxruntime.so`) or f32 safetensors
    /// (`config.json`, `tokenizer.json`, `model.safetensors`). Without one, search is lexical.
    pub model: Option<PathBuf>,
    /// A model that cannot be loaded is a warning (search stays lexical), not a start-up error.
    pub optional: bool,
    /// Where tool vectors are cached (default: `$XDG_CACHE_HOME/otc-bridge`, else
    /// `~/.cache/otc-bridge`; none when neither is known).
    pub cache: Option<PathBuf>,
}

/// The largest model file read (the weights of a small sentence encoder are under 100 MB).
const MAX_MODEL_BYTES: u64 = 512 * 1024 * 1024;
/// Tools embedded per batch of the background task (progress is reported between batches).
const BATCH: usize = 64;

/// Why the model cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("search model {path}: {reason}")]
pub struct ModelLoadError {
    /// The model's directory.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: ModelProblem,
}

/// What is wrong with a model's directory. Each cause is in its variant's message, so it is not
/// also the source (an error chain would print it twice).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelProblem {
    /// One of its files cannot be read.
    #[error("{name}: {error}")]
    Unreadable {
        /// The file's name.
        name: &'static str,
        /// Why.
        error: otc_adapters::file::FileError,
    },
    /// Its files are read but make no model.
    #[error("{0}")]
    Model(otc_search::ModelError),
    /// It holds an ONNX export but not the onnxruntime library that runs it.
    #[error("{0} is missing beside model.onnx (scripts/install-search-model.sh installs it)")]
    NoRuntime(String),
}

/// The model and the vectors of the tools it embedded, shared by every catalog it serves.
#[derive(Debug)]
pub struct Semantic {
    model: Model,
    path: PathBuf,
    cache: Option<PathBuf>,
    /// Vectors by key ([`key`]), for every tool embedded so far (bounded by the tools served:
    /// each new catalog keeps only its own when it is done).
    known: Mutex<HashMap<[u8; 32], Quantized>>,
    progress: Mutex<Progress>,
}

/// How far embedding the current catalog is.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Progress {
    /// Tools of the current catalog with a vector.
    pub embedded: usize,
    /// Tools of the current catalog.
    pub tools: usize,
}

impl Semantic {
    /// Loads the model in `config` (a blocking read of about 90 MB: run it off the runtime).
    /// `Ok(None)`: no model configured, or an optional one that failed (logged).
    pub fn load(config: &SearchConfig) -> Result<Option<Self>, ModelLoadError> {
        let Some(path) = &config.model else {
            return Ok(None);
        };
        match load_model(path) {
            Ok(model) => {
                let cache = config
                    .cache
                    .clone()
                    .or_else(default_cache)
                    .map(|dir| dir.join(format!("search-vectors-{}.bin", &model.id()[..16])));
                let known = cache.as_deref().map(read_cache).unwrap_or_default();
                Ok(Some(Self {
                    model,
                    path: path.clone(),
                    cache,
                    known: Mutex::new(known),
                    progress: Mutex::new(Progress::default()),
                }))
            }
            Err(error) if config.optional => {
                tracing::warn!(path = %path.display(), reason = %error.reason, "The search model cannot be loaded; search is lexical.");
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// What runs the model (`onnxruntime` or `candle`).
    pub fn runtime(&self) -> &'static str {
        self.model.runtime()
    }

    /// The model's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How far embedding the current catalog is.
    pub fn progress(&self) -> Progress {
        *self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request's parts' vectors, in one pass of the model (a few milliseconds of CPU).
    pub(crate) fn embed_query(&self, parts: &[&str]) -> Option<Vec<Vec<f32>>> {
        self.model.embed(parts).ok()
    }

    /// Embeds every catalog `shared` serves, now and after each change, in the background.
    pub fn spawn(self: &Arc<Self>, shared: SharedCatalog) {
        let semantic = Arc::clone(self);
        let mut changes = shared.changes();
        tokio::spawn(async move {
            loop {
                let catalog = shared.current();
                let worker = Arc::clone(&semantic);
                let job = tokio::task::spawn_blocking(move || worker.embed_catalog(&catalog));
                if let Err(error) = job.await {
                    tracing::warn!(%error, "Embedding the catalog's tools failed; search is lexical.");
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Gives `catalog` its vectors, embedding the tools not seen before.
    fn embed_catalog(&self, catalog: &Catalog) {
        if catalog.vectors().is_some() {
            return;
        }
        let started = std::time::Instant::now();
        let latest = catalog.latest();
        let texts: Vec<String> = latest
            .iter()
            .map(|e| otc_search::tool_text(&e.tool))
            .collect();
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| key(self.model.id(), t)).collect();
        let mut vectors = Vectors::new(self.model.dims(), latest.len());
        let mut missing = Vec::new();
        {
            let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
            for (position, key) in keys.iter().enumerate() {
                match known.get(key) {
                    Some(vector) => vectors.set(position, vector),
                    None => missing.push(position),
                }
            }
        }
        let cached = latest.len() - missing.len();
        self.set_progress(cached, latest.len());
        // Shortest first, so each batch holds texts of about one length: the model pads a batch
        // to its longest text, and batches of tools in catalog order spent much of their time
        // on padding (bench/search/README.md).
        let mut missing: Vec<(usize, &str)> = missing.iter().map(|&p| (p, &*texts[p])).collect();
        missing.sort_by_key(|(_, text)| text.len());
        for batch in missing.chunks(BATCH) {
            let refs: Vec<&str> = batch.iter().map(|(_, text)| *text).collect();
            match self.model.embed(&refs) {
                Ok(embedded) => {
                    let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
                    for (&(position, _), vector) in batch.iter().zip(embedded) {
                        let quantized = Quantized::of(&vector);
                        vectors.set(position, &quantized);
                        known.insert(keys[position], quantized);
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "The search model failed on a batch of tools; search stays lexical.");
                    return;
                }
            }
            self.set_progress(vectors.present(), latest.len());
        }
        // Only the tools served now are kept, in memory and on disk.
        let kept: HashMap<[u8; 32], Quantized> = {
            let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
            let kept = keys
                .iter()
                .filter_map(|k| known.get(k).map(|v| (*k, v.clone())))
                .collect::<HashMap<_, _>>();
            *known = kept.clone();
            kept
        };
        if !missing.is_empty()
            && let Some(file) = &self.cache
            && let Err(error) = write_cache(file, &kept)
        {
            tracing::warn!(file = %file.display(), %error, "Cannot write the search vectors' cache.");
        }
        catalog.set_vectors(vectors);
        tracing::info!(
            tools = latest.len(),
            cached,
            embedded = missing.len(),
            seconds = started.elapsed().as_secs_f64(),
            "Semantic search ready."
        );
    }

    fn set_progress(&self, embedded: usize, tools: usize) {
        *self.progress.lock().unwrap_or_else(PoisonError::into_inner) =
            Progress { embedded, tools };
    }
}

/// A tool's vector key: the model and the text the model reads of the tool
/// ([`otc_search::tool_text`]), which is all its vector depends on. Why not the lockfile's
/// fingerprint: it covers what the model never reads (output schemas), so a change there would
/// embed a tool again for the same vector, and computing it for every tool of a large catalog
/// (canonical forms of every schema) took 1.9 s of a restart on the 5,245-tool development
/// catalog, against 0.02 s for the texts (bench/search/README.md).
fn key(model: &str, text: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(model.as_bytes());
    hash.update([0]);
    hash.update(text.as_bytes());
    hash.finalize().into()
}

fn default_cache() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        })
        .map(|dir| dir.join("otc-bridge"))
}

/// The model in `dir`: an ONNX export run by onnxruntime when the directory has `model.onnx`
/// (with `tokenizer.json` and the runtime's library, `libonnxruntime.so`), else f32 weights run
/// by candle (`config.json`, `tokenizer.json`, `model.safetensors`), as
/// `scripts/install-search-model.sh` installs each. The library is loaded from the directory the
/// configuration names, as the configuration's MCP commands are run: it is trusted like them.
pub fn load_model(dir: &Path) -> Result<Model, ModelLoadError> {
    let problem = |reason| ModelLoadError {
        path: dir.to_path_buf(),
        reason,
    };
    let read = |name: &'static str| -> Result<Vec<u8>, ModelLoadError> {
        otc_adapters::file::read(&dir.join(name), MAX_MODEL_BYTES)
            .map_err(|error| problem(ModelProblem::Unreadable { name, error }))
    };
    let digest = |files: &[&[u8]]| {
        let mut hash = Sha256::new();
        files.iter().for_each(|file| hash.update(file));
        otc_mappings::hex::hex(&hash.finalize())
    };
    let tokenizer = read("tokenizer.json")?;
    if dir.join(ONNX_MODEL).exists() {
        let onnx = read(ONNX_MODEL)?;
        let id = digest(&[&tokenizer, &onnx]);
        // Absolute: ort looks for a relative path beside the executable first.
        let runtime = std::path::absolute(dir.join(onnx_runtime_file()))
            .unwrap_or_else(|_| dir.join(onnx_runtime_file()));
        if !runtime.is_file() {
            return Err(problem(ModelProblem::NoRuntime(onnx_runtime_file())));
        }
        return Model::from_onnx(&tokenizer, &onnx, &runtime, id)
            .map_err(|e| problem(ModelProblem::Model(e)));
    }
    let config = read("config.json")?;
    let weights = read("model.safetensors")?;
    let id = digest(&[&config, &tokenizer, &weights]);
    Model::from_bytes(&config, &tokenizer, weights, id).map_err(|e| problem(ModelProblem::Model(e)))
}

/// The ONNX export's file in a model directory.
const ONNX_MODEL: &str = "model.onnx";

/// onnxruntime's library in a model directory, named as this platform names libraries
/// (`libonnxruntime.so` on Linux).
fn onnx_runtime_file() -> String {
    format!(
        "{}onnxruntime{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Record: key (32 bytes), scale (f32, little-endian), values (dims bytes).
fn read_cache(file: &Path) -> HashMap<[u8; 32], Quantized> {
    let Ok(bytes) = otc_adapters::file::read(file, otc_adapters::file::MAX_CATALOG_BYTES) else {
        return HashMap::new();
    };
    let Some((dims, rest)) = bytes.split_first_chunk::<4>() else {
        return HashMap::new();
    };
    let dims = u32::from_le_bytes(*dims) as usize;
    let record = 32 + 4 + dims;
    if dims == 0 || rest.len() % record != 0 {
        tracing::warn!(file = %file.display(), "The search vectors' cache is not readable; it will be rewritten.");
        return HashMap::new();
    }
    rest.chunks_exact(record)
        .map(|r| {
            let mut key = [0u8; 32];
            key.copy_from_slice(&r[..32]);
            let scale = f32::from_le_bytes([r[32], r[33], r[34], r[35]]);
            let values = r[36..].iter().map(|b| i8::from_le_bytes([*b])).collect();
            (key, Quantized { values, scale })
        })
        .collect()
}

fn write_cache(file: &Path, vectors: &HashMap<[u8; 32], Quantized>) -> std::io::Result<()> {
    let dims = vectors.values().next().map_or(0, |v| v.values.len());
    let mut bytes = Vec::with_capacity(4 + vectors.len() * (36 + dims));
    bytes.extend_from_slice(&(dims as u32).to_le_bytes());
    for (key, vector) in vectors {
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(&vector.scale.to_le_bytes());
        bytes.extend(vector.values.iter().map(|v| v.to_le_bytes()[0]));
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Written whole under a new random name (never following a link planted there), then
    // renamed: a reader never sees half a file.
    let temporary = file.with_extension(format!("tmp-{}", uuid::Uuid::new_v4()));
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)?;
    std::io::Write::write_all(&mut out, &bytes)?;
    drop(out);
    std::fs::rename(&temporary, file)
}
