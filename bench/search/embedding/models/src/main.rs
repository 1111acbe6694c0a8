//! embed-bench: embeds lines of text with a BERT-style sentence model, mean-pooled and
//! L2-normalised, and reports speed.
//!
//! embed-bench MODEL_DIR TEXTS_FILE OUT_F32 [QUERIES_FILE QOUT_F32]
//! env: MAXLEN (default 128), BATCH (default 32), SORT=1 (batch texts of similar length),
//!      THREADS (worker threads, default 2; candle: rayon pool size, tract: one plan per thread)
//! MODEL_DIR has tokenizer.json and either config.json + model.safetensors (candle) or
//! model.onnx (tract). Writes n*dim little-endian f32. Prints one summary line per phase.
use anyhow::{Context, Result};
use std::time::Instant;
use tokenizers::{Encoding, PaddingParams, Tokenizer, TruncationParams};

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d)
}

/// ids, mask for one padded batch -> pooled unit vectors
trait Backend: Sync {
    fn run(&self, enc: &[Encoding]) -> Result<Vec<Vec<f32>>>;
}

#[cfg(feature = "candle")]
mod cb {
    use super::*;
    use candle_core::{DType, Device, Tensor};
    use candle_nn::VarBuilder;
    use candle_transformers::models::bert::{BertModel, Config};
    pub struct C { model: BertModel, dev: Device }
    pub fn load(dir: &std::path::Path) -> Result<C> {
        let dev = Device::Cpu;
        let config: Config = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json"))?)?;
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &dev)? };
        Ok(C { model: BertModel::load(vb, &config)?, dev })
    }
    impl Backend for C {
        fn run(&self, enc: &[Encoding]) -> Result<Vec<Vec<f32>>> {
            let ids: Vec<Tensor> = enc.iter().map(|e| Tensor::new(e.get_ids(), &self.dev)).collect::<Result<_, _>>()?;
            let mask: Vec<Tensor> = enc.iter().map(|e| Tensor::new(e.get_attention_mask(), &self.dev)).collect::<Result<_, _>>()?;
            let ids = Tensor::stack(&ids, 0)?;
            let mask = Tensor::stack(&mask, 0)?;
            let types = ids.zeros_like()?;
            let out = self.model.forward(&ids, &types, Some(&mask))?;
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let pooled = out.broadcast_mul(&m)?.sum(1)?.broadcast_div(&m.sum(1)?)?;
            Ok(pooled.to_vec2::<f32>()?)
        }
    }
}

#[cfg(feature = "tract")]
mod tb {
    use super::*;
    use tract_onnx::prelude::*;
    pub struct T { plan: TypedRunnableModel<TypedModel> }
    pub fn load(dir: &std::path::Path) -> Result<T> {
        let mut model = tract_onnx::onnx().model_for_path(dir.join("model.onnx"))?;
        let s = model.symbols.sym("batch");
        let l = model.symbols.sym("sequence");
        for i in 0..3 {
            model.set_input_fact(i, i64::fact(&[s.to_dim(), l.to_dim()]).into())?;
        }
        let plan = model.into_optimized()?.into_runnable()?;
        Ok(T { plan })
    }
    impl Backend for T {
        fn run(&self, enc: &[Encoding]) -> Result<Vec<Vec<f32>>> {
            let b = enc.len();
            let l = enc[0].get_ids().len();
            let ids: Vec<i64> = enc.iter().flat_map(|e| e.get_ids().iter().map(|&x| x as i64)).collect();
            let mask: Vec<i64> = enc.iter().flat_map(|e| e.get_attention_mask().iter().map(|&x| x as i64)).collect();
            let ids = tract_ndarray::Array2::from_shape_vec((b, l), ids)?;
            let maskv = tract_ndarray::Array2::from_shape_vec((b, l), mask)?;
            let types = tract_ndarray::Array2::<i64>::zeros((b, l));
            let out = self.plan.run(tvec!(ids.into_tvalue(), maskv.clone().into_tvalue(), types.into_tvalue()))?;
            let h = out[0].to_array_view::<f32>()?.into_dimensionality::<tract_ndarray::Ix3>()?;
            let d = h.shape()[2];
            let mut res = vec![];
            for i in 0..b {
                let mut v = vec![0f32; d];
                let mut n = 0f32;
                for j in 0..l {
                    if maskv[[i, j]] == 1 { n += 1.0; for k in 0..d { v[k] += h[[i, j, k]]; } }
                }
                v.iter_mut().for_each(|x| *x /= n);
                res.push(v);
            }
            Ok(res)
        }
    }
}

fn norm(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn embed_all(be: &dyn Backend, tok: &Tokenizer, texts: &[String], batch: usize, sort: bool, threads: usize) -> Result<(Vec<Vec<f32>>, usize)> {
    // tokenize without padding, group by length, pad per batch
    let enc = tok.encode_batch(texts.to_vec(), true).map_err(anyhow::Error::msg)?;
    let real: usize = enc.iter().map(|e| e.get_ids().len()).sum();
    let mut order: Vec<usize> = (0..enc.len()).collect();
    if sort { order.sort_by_key(|&i| enc[i].get_ids().len()); }
    let batches: Vec<Vec<usize>> = order.chunks(batch).map(|c| c.to_vec()).collect();
    let pad = |idx: &[usize]| -> Vec<Encoding> {
        let mut es: Vec<Encoding> = idx.iter().map(|&i| enc[i].clone()).collect();
        let l = es.iter().map(|e| e.get_ids().len()).max().unwrap();
        for e in es.iter_mut() { e.pad(l, 0, 0, "[PAD]", tokenizers::PaddingDirection::Right); }
        es
    };
    let mut out: Vec<Vec<f32>> = vec![vec![]; enc.len()];
    let results: Vec<Result<Vec<(usize, Vec<f32>)>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads).map(|t| {
            let batches = &batches; let pad = &pad;
            s.spawn(move || -> Result<Vec<(usize, Vec<f32>)>> {
                let mut r = vec![];
                for b in batches.iter().skip(t).step_by(threads) {
                    let es = pad(b);
                    for (i, v) in b.iter().zip(be.run(&es)?) { r.push((*i, norm(v))); }
                }
                Ok(r)
            })
        }).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in results { for (i, v) in r? { out[i] = v; } }
    Ok((out, real))
}

fn write(path: &str, v: &[Vec<f32>]) -> Result<()> {
    let mut b = Vec::with_capacity(v.len() * v[0].len() * 4);
    for r in v { for x in r { b.extend_from_slice(&x.to_le_bytes()); } }
    std::fs::write(path, b)?;
    Ok(())
}

fn main() -> Result<()> {
    let a: Vec<String> = std::env::args().collect();
    anyhow::ensure!(a.len() == 4 || a.len() == 6, "usage: MODEL_DIR TEXTS OUT [QUERIES QOUT]");
    let dir = std::path::Path::new(&a[1]);
    let maxlen: usize = env("MAXLEN", 128);
    let batch: usize = env("BATCH", 32);
    let sort = env("SORT", 1) == 1;
    let threads: usize = env("THREADS", 2);
    let mut tok = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(anyhow::Error::msg)?;
    tok.with_padding(None::<PaddingParams>);
    tok.with_truncation(Some(TruncationParams { max_length: maxlen, ..Default::default() })).map_err(anyhow::Error::msg)?;
    let t0 = Instant::now();
    #[cfg(feature = "candle")]
    let be = cb::load(dir)?;
    #[cfg(feature = "tract")]
    let be = tb::load(dir)?;
    let be: &dyn Backend = &be;
    let load = t0.elapsed();
    let texts: Vec<String> = std::fs::read_to_string(&a[2]).context("texts")?.lines().map(String::from).collect();
    // warm-up
    be.run(&tok.encode_batch(vec![texts[0].clone()], true).map_err(anyhow::Error::msg)?)?;
    let t = Instant::now();
    let (v, real) = embed_all(be, &tok, &texts, batch, sort, threads)?;
    let s = t.elapsed().as_secs_f64();
    println!("docs n={} maxlen={maxlen} batch={batch} sort={sort} threads={threads} load={:.2}s embed={:.1}s tokens={} tok/s={:.0}", texts.len(), load.as_secs_f64(), s, real, real as f64 / s);
    write(&a[3], &v)?;
    if a.len() == 6 {
        let qs: Vec<String> = std::fs::read_to_string(&a[4])?.lines().map(String::from).collect();
        let mut lat = vec![];
        let mut qv = vec![];
        for q in &qs {
            let t = Instant::now();
            let e = tok.encode_batch(vec![q.clone()], true).map_err(anyhow::Error::msg)?;
            let v = norm(be.run(&e)?.remove(0));
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
            qv.push(v);
        }
        let mut l = lat.clone();
        l.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("queries n={} p50={:.2}ms p90={:.2}ms p99={:.2}ms max={:.2}ms", l.len(), l[l.len() / 2], l[l.len() * 9 / 10], l[(l.len() * 99 / 100).min(l.len() - 1)], l[l.len() - 1]);
        write(&a[5], &qv)?;
    }
    Ok(())
}
