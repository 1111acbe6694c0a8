//! The sentence-embedding model of the semantic ranker: a BERT encoder (all-MiniLM-L6-v2, or any
//! model of that architecture) run on the CPU, mean-pooled and normalised, as the
//! sentence-transformers models it comes from are used. Two runtimes, chosen by what the model
//! directory holds:
//!
//! - **int8 ONNX through onnxruntime** (`ort`, the library loaded at run time from the path the
//!   caller gives): a request embeds in about 4 ms instead of 10 on 2 cores, the catalog about
//!   twice as fast, for a point of quality at most (bench/search/README.md).
//! - **f32 safetensors through candle**: pure Rust, nothing to load beside the weights.
//!
//! Built from bytes, not from a path: reading the files is the caller's (the bridge reads them
//! through its bounded reader); this crate does no I/O but for loading onnxruntime's library.
//! Why not tract: it could not analyse the ONNX exports packaged (bench/search/README.md).

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Encoding, PaddingParams, Tokenizer, TruncationParams};

/// The most tokens read of one text. Tools average about 48 tokens in the development catalog;
/// the cap bounds the time of a long description and of a request.
pub const MAX_TOKENS: usize = 128;
/// Texts embedded together by candle: fewer calls, and texts sorted by length waste little
/// padding.
const BATCH: usize = 32;
/// Texts embedded together by onnxruntime, whose kernels gain little from larger batches while
/// attention and padding cost more: 640 tool texts sorted by length, 2 threads, in batches of
/// 8 / 16 / 32 / 64 took 6.8 / 6.9 / 7.3 / 9.6 s (bench/search/README.md).
const ONNX_BATCH: usize = 8;

/// The environment setting that spares candle from counting the machine's cores before every
/// matrix product: `RAYON_NUM_THREADS`, set to the physical core count candle would find, or
/// `None` when it is already set.
///
/// Why: unless that variable is set, candle asks `num_cpus::get_physical()` on every product,
/// which reads and parses `/proc/cpuinfo`; that was about a fifth of a request's embedding time
/// (search p50 17 ms → 13 ms on 2 cores, bench/search/README.md). The value is what candle uses
/// anyway (except on processors with performance and efficiency cores, where candle would count
/// the performance cores only: `RAYON_NUM_THREADS` set by the user is left alone), and only
/// candle uses rayon's pool, so nothing else changes. Changing the environment
/// is only sound while one thread runs, so the caller sets it, first thing in `main`.
pub fn threads_setting() -> Option<(&'static str, String)> {
    const VARIABLE: &str = "RAYON_NUM_THREADS";
    match std::env::var_os(VARIABLE) {
        Some(_) => None,
        None => Some((VARIABLE, num_cpus::get_physical().to_string())),
    }
}

/// A loaded model.
pub struct Model {
    encoder: Encoder,
    tokenizer: Tokenizer,
    dims: usize,
    /// What the model is, for cache keys: a digest of its weights and tokenizer.
    id: String,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("dims", &self.dims)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Why a model cannot be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// `config.json` is not a BERT configuration.
    #[error("config.json is not a BERT model configuration: {0}")]
    Config(String),
    /// `tokenizer.json` cannot be read.
    #[error("tokenizer.json cannot be read: {0}")]
    Tokenizer(String),
    /// The weights do not fit the configuration, or inference failed.
    #[error("the model cannot run: {0}")]
    Run(String),
    /// onnxruntime's library cannot be loaded (missing, not onnxruntime, or older than 1.22).
    #[error("onnxruntime cannot be loaded: {0}")]
    Runtime(String),
}

/// What runs the encoder.
enum Encoder {
    /// Boxed: candle's model is 280 bytes beside a session's few.
    Candle(Box<BertModel>),
    /// A session runs one batch at a time (`Session::run` takes `&mut`); its own threads
    /// parallelise each batch.
    Onnx(Mutex<ort::session::Session>),
}

fn tokenizer(bytes: &[u8]) -> Result<Tokenizer, ModelError> {
    let mut tokenizer =
        Tokenizer::from_bytes(bytes).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
    tokenizer.with_padding(Some(PaddingParams::default()));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..Default::default()
        }))
        .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
    Ok(tokenizer)
}

impl Model {
    /// The model from its three files' contents: `config.json`, `tokenizer.json` and
    /// `model.safetensors`. `id` names it in cache keys (a digest of the files).
    pub fn from_bytes(
        config: &[u8],
        tokenizer: &[u8],
        weights: Vec<u8>,
        id: String,
    ) -> Result<Self, ModelError> {
        let config: Config =
            serde_json::from_slice(config).map_err(|e| ModelError::Config(e.to_string()))?;
        let tokenizer = self::tokenizer(tokenizer)?;
        let device = Device::Cpu;
        let weights = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| ModelError::Run(e.to_string()))?;
        let bert = BertModel::load(weights, &config).map_err(|e| ModelError::Run(e.to_string()))?;
        Self {
            encoder: Encoder::Candle(Box::new(bert)),
            tokenizer,
            dims: config.hidden_size,
            id,
        }
        .checked()
    }

    /// The model from an ONNX export (`model.onnx`, whose inputs are `input_ids`,
    /// `attention_mask` and `token_type_ids` and whose first output is the last hidden state)
    /// and its `tokenizer.json`, run by the onnxruntime library at `runtime` (loaded once per
    /// process: a later model runs on the library loaded first). A batch runs on as many
    /// threads as the machine has physical cores, as candle's does.
    pub fn from_onnx(
        tokenizer: &[u8],
        onnx: &[u8],
        runtime: &Path,
        id: String,
    ) -> Result<Self, ModelError> {
        let threads = num_cpus::get_physical();
        let tokenizer = self::tokenizer(tokenizer)?;
        let environment = onnx_environment(runtime)?;
        let run = |e: &dyn std::fmt::Display| ModelError::Run(e.to_string());
        let session = ort::session::Session::builder(&environment)
            .map_err(|e| run(&e))?
            .with_intra_threads(threads.max(1))
            .map_err(|e| run(&e))?
            .with_log_level(ort::logging::LogLevel::Warning)
            .map_err(|e| run(&e))?
            .with_inter_threads(1)
            .map_err(|e| run(&e))?
            // Threads that spin after each batch would hold both cores while the bridge serves.
            .with_intra_op_spinning(false)
            .map_err(|e| run(&e))?
            .commit_from_memory(onnx)
            .map_err(|e| run(&e))?;
        let mut model = Self {
            encoder: Encoder::Onnx(Mutex::new(session)),
            tokenizer,
            dims: 0,
            id,
        };
        // The export says its width only by running: one run gives it and checks the model.
        model.dims = model.embed_batch(&["a check"])?.first().map_or(0, Vec::len);
        if model.dims == 0 {
            return Err(ModelError::Run("its vectors are empty".to_owned()));
        }
        Ok(model)
    }

    /// A model that loads but cannot run (weights of another shape) fails here, at start-up.
    fn checked(self) -> Result<Self, ModelError> {
        let vectors = self.embed(&["a check"])?;
        match vectors.first() {
            Some(v) if v.len() == self.dims && self.dims > 0 => Ok(self),
            _ => Err(ModelError::Run(format!(
                "its vectors have {} values, not {}",
                vectors.first().map_or(0, Vec::len),
                self.dims
            ))),
        }
    }

    /// The length of its vectors.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// What runs it: `onnxruntime` or `candle`.
    pub fn runtime(&self) -> &'static str {
        match self.encoder {
            Encoder::Candle(_) => "candle",
            Encoder::Onnx(_) => "onnxruntime",
        }
    }

    /// What the model is (for cache keys).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Unit vectors of `texts`, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        // Sorted by length so each batch pads little; answered in the order asked.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let size = match self.encoder {
            Encoder::Candle(_) => BATCH,
            Encoder::Onnx(_) => ONNX_BATCH,
        };
        for batch in order.chunks(size) {
            let inputs: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in batch.iter().zip(self.embed_batch(&inputs)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        let mut vectors = match &self.encoder {
            Encoder::Candle(bert) => candle_pooled(bert, &encodings)?,
            Encoder::Onnx(session) => onnx_pooled(session, &encodings)?,
        };
        for vector in &mut vectors {
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                vector.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(vectors)
    }
}

/// Mean-pooled hidden states of one padded batch, by candle.
fn candle_pooled(bert: &BertModel, encodings: &[Encoding]) -> Result<Vec<Vec<f32>>, ModelError> {
    let run = |e: candle_core::Error| ModelError::Run(e.to_string());
    let device = Device::Cpu;
    let ids: Vec<Tensor> = encodings
        .iter()
        .map(|e| Tensor::new(e.get_ids(), &device))
        .collect::<Result<_, _>>()
        .map_err(run)?;
    let masks: Vec<Tensor> = encodings
        .iter()
        .map(|e| Tensor::new(e.get_attention_mask(), &device))
        .collect::<Result<_, _>>()
        .map_err(run)?;
    let ids = Tensor::stack(&ids, 0).map_err(run)?;
    let mask = Tensor::stack(&masks, 0).map_err(run)?;
    let types = ids.zeros_like().map_err(run)?;
    let hidden = bert.forward(&ids, &types, Some(&mask)).map_err(run)?;
    // Mean over the real tokens (not the padding).
    let weights = mask
        .to_dtype(DType::F32)
        .and_then(|m| m.unsqueeze(2))
        .map_err(run)?;
    let summed = hidden
        .broadcast_mul(&weights)
        .and_then(|t| t.sum(1))
        .map_err(run)?;
    let counts = weights.sum(1).map_err(run)?;
    let pooled = summed.broadcast_div(&counts).map_err(run)?;
    pooled.to_vec2::<f32>().map_err(run)
}

/// onnxruntime's environment, made once per process (onnxruntime allows one) with the library
/// at `runtime`; a later call gets the first one, whatever its path. A failure is not kept, so a
/// reload with the library fixed loads it.
fn onnx_environment(runtime: &Path) -> Result<ort::environment::Environment, ModelError> {
    static ENVIRONMENT: Mutex<Option<ort::environment::Environment>> = Mutex::new(None);
    let mut environment = ENVIRONMENT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(environment) = environment.as_ref() {
        return Ok(environment.clone());
    }
    let built = ort::init_from(runtime)
        .map_err(|e| {
            // The loader's message ("… dlopen failed") says why only in its error's sources.
            let cause = match &e {
                ort::LoadDynamicError::Dlopen { error, .. } => std::error::Error::source(error),
                _ => None,
            };
            ModelError::Runtime(with_causes(e.to_string(), cause))
        })?
        .with_name("otc-search")
        .build()
        .map_err(|e| ModelError::Runtime(e.to_string()))?;
    // onnxruntime's own messages (each graph rewrite, each session option) are not the
    // bridge's information; its warnings and errors are.
    built.set_log_level(ort::logging::LogLevel::Warning);
    Ok(environment.insert(built).clone())
}

/// `message`, then `cause` and each of its own sources.
fn with_causes(mut message: String, mut cause: Option<&dyn std::error::Error>) -> String {
    while let Some(error) = cause {
        message = format!("{message}: {error}");
        cause = error.source();
    }
    message
}

/// Mean-pooled hidden states of one padded batch, by onnxruntime.
fn onnx_pooled(
    session: &Mutex<ort::session::Session>,
    encodings: &[Encoding],
) -> Result<Vec<Vec<f32>>, ModelError> {
    let run = |e: ort::Error| ModelError::Run(e.to_string());
    let rows = encodings.len();
    let width = encodings.first().map_or(0, |e| e.get_ids().len());
    let column = |get: fn(&Encoding) -> &[u32]| -> Vec<i64> {
        encodings
            .iter()
            .flat_map(|e| get(e).iter().map(|&v| i64::from(v)))
            .collect()
    };
    let ids = column(Encoding::get_ids);
    let mask = column(Encoding::get_attention_mask);
    let types = vec![0i64; ids.len()];
    let tensor = |values: Vec<i64>| ort::value::Tensor::from_array(([rows, width], values));
    let inputs = ort::inputs![
        "input_ids" => tensor(ids).map_err(run)?,
        "attention_mask" => tensor(mask.clone()).map_err(run)?,
        "token_type_ids" => tensor(types).map_err(run)?,
    ];
    let mut session = session.lock().unwrap_or_else(PoisonError::into_inner);
    let outputs = session.run(inputs).map_err(run)?;
    let (shape, hidden) = outputs[0].try_extract_tensor::<f32>().map_err(run)?;
    let dims = match **shape {
        [r, w, d] if r as usize == rows && w as usize == width => d as usize,
        _ => {
            return Err(ModelError::Run(format!(
                "its output has the shape {shape:?}, not [{rows}, {width}, dims]"
            )));
        }
    };
    // Mean over the real tokens (not the padding).
    Ok((0..rows)
        .map(|row| {
            let mut sum = vec![0f32; dims];
            let mut count = 0f32;
            for token in 0..width {
                if mask[row * width + token] == 0 {
                    continue;
                }
                count += 1.0;
                let at = (row * width + token) * dims;
                sum.iter_mut()
                    .zip(&hidden[at..at + dims])
                    .for_each(|(s, h)| *s += h);
            }
            sum.iter_mut().for_each(|s| *s /= count.max(1.0));
            sum
        })
        .collect())
}
