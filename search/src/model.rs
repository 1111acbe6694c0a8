//! The sentence-embedding model of the semantic ranker: a BERT encoder (all-MiniLM-L6-v2, or any
//! model of that architecture) run on the CPU with candle, mean-pooled and normalised, as the
//! sentence-transformers models it comes from are used.
//!
//! Built from bytes, not from a path: reading the files is the caller's (the bridge reads them
//! through its bounded reader); this crate does no I/O. Why candle: pure Rust, reads the
//! safetensors the registry packages ship; tract could not analyse the one ONNX export packaged,
//! and ort needs an onnxruntime library Debian does not ship (bench/search/README.md).

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// The most tokens read of one text. Tools average about 48 tokens in the development catalog;
/// the cap bounds the time of a long description and of a request.
pub const MAX_TOKENS: usize = 128;
/// Texts embedded together: fewer calls, and texts sorted by length waste little padding.
const BATCH: usize = 32;

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
    bert: BertModel,
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
        let mut tokenizer =
            Tokenizer::from_bytes(tokenizer).map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
        let device = Device::Cpu;
        let weights = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| ModelError::Run(e.to_string()))?;
        let bert = BertModel::load(weights, &config).map_err(|e| ModelError::Run(e.to_string()))?;
        let model = Self {
            bert,
            tokenizer,
            dims: config.hidden_size,
            id,
        };
        // A model that loads but cannot run (weights of another shape) fails here, at start-up.
        model.embed(&["a check"])?;
        Ok(model)
    }

    /// The length of its vectors.
    pub fn dims(&self) -> usize {
        self.dims
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
        for batch in order.chunks(BATCH) {
            let inputs: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in batch.iter().zip(self.embed_batch(&inputs)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let run = |e: candle_core::Error| ModelError::Run(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| ModelError::Tokenizer(e.to_string()))?;
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
        let hidden = self.bert.forward(&ids, &types, Some(&mask)).map_err(run)?;
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
        let mut vectors = pooled.to_vec2::<f32>().map_err(run)?;
        for vector in &mut vectors {
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                vector.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(vectors)
    }
}
