use anyhow::Result;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

fn words(id: &str) -> String {
    let mut s = String::new();
    for (i, c) in id.chars().enumerate() {
        if c == '.' { s.push_str(": "); continue; }
        if c.is_uppercase() && i > 0 && !s.ends_with(' ') { s.push(' '); }
        s.push(c.to_ascii_lowercase());
    }
    s
}

struct Emb { model: BertModel, tok: Tokenizer, dev: Device }
impl Emb {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut all = vec![];
        for chunk in texts.chunks(32) {
            let enc = self.tok.encode_batch(chunk.to_vec(), true).map_err(anyhow::Error::msg)?;
            let ids: Vec<Tensor> = enc.iter().map(|e| Tensor::new(e.get_ids(), &self.dev)).collect::<Result<_, _>>()?;
            let mask: Vec<Tensor> = enc.iter().map(|e| Tensor::new(e.get_attention_mask(), &self.dev)).collect::<Result<_, _>>()?;
            let ids = Tensor::stack(&ids, 0)?;
            let mask = Tensor::stack(&mask, 0)?;
            let types = ids.zeros_like()?;
            let out = self.model.forward(&ids, &types, Some(&mask))?;
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let pooled = (out.broadcast_mul(&m)?.sum(1)?.broadcast_div(&m.sum(1)?))?;
            for mut v in pooled.to_vec2::<f32>()? {
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= n);
                all.push(v);
            }
        }
        Ok(all)
    }
}

/// Usage: search-embedding-experiment MODEL_DIR TOOLS_TSV QUERIES_JSON OUT_DIR
/// MODEL_DIR holds config.json, tokenizer.json and model.safetensors; TOOLS_TSV is
/// `search_eval --dump`; writes OUT_DIR/{docs,queries}.json (unit vectors) and prints the
/// embedding-only hit rates.
fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(args.len() == 5, "usage: MODEL_DIR TOOLS_TSV QUERIES_JSON OUT_DIR");
    let dir = std::path::Path::new(&args[1]);
    let out_dir = std::path::Path::new(&args[4]);
    let dev = Device::Cpu;
    let config: Config = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json"))?)?;
    let mut tok = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(anyhow::Error::msg)?;
    tok.with_padding(Some(PaddingParams::default()));
    let maxlen: usize = std::env::var("MAXLEN").ok().and_then(|s| s.parse().ok()).unwrap_or(64);
    tok.with_truncation(Some(TruncationParams { max_length: maxlen, ..Default::default() })).map_err(anyhow::Error::msg)?;
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &dev)? };
    let e = Emb { model: BertModel::load(vb, &config)?, tok, dev };
    let tsv = std::fs::read_to_string(&args[2])?;
    let rows: Vec<(String, String)> = tsv.lines().map(|l| { let mut p = l.splitn(3, '\t'); let id = p.next().unwrap().to_string(); let _op = p.next(); let d = p.next().unwrap_or("").to_string(); (id, d) }).collect();
    let cache = out_dir.join(format!("docs-{maxlen}.json"));
    let docs: Vec<Vec<f32>> = if let Ok(s) = std::fs::read_to_string(&cache) { serde_json::from_str(&s)? } else {
        let texts: Vec<String> = rows.iter().map(|(id, d)| format!("{}. {}", words(id), d)).collect();
        let t = std::time::Instant::now();
        let v = e.embed(&texts)?;
        eprintln!("embedded {} in {:?}", texts.len(), t.elapsed());
        std::fs::write(&cache, serde_json::to_string(&v)?)?; v };
    let q: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&args[3])?)?;
    let qs = q["queries"].as_array().unwrap();
    let texts: Vec<String> = qs.iter().map(|x| x["query"].as_str().unwrap().to_string()).collect();
    let t = std::time::Instant::now();
    let qv = e.embed(&texts)?;
    eprintln!("queries {:?}/q", t.elapsed() / texts.len() as u32);
    std::fs::write(out_dir.join("queries.json"), serde_json::to_string(&qv)?)?;
    let (mut h1, mut h5, mut n) = (0, 0, 0);
    let mut out = String::new();
    for (x, v) in qs.iter().zip(&qv) {
        let mut s: Vec<(f32, usize)> = docs.iter().enumerate().map(|(i, d)| (d.iter().zip(v).map(|(a, b)| a * b).sum::<f32>(), i)).collect();
        s.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
        let top: Vec<(&str, f32)> = s.iter().take(20).map(|(sc, i)| (rows[*i].0.as_str(), *sc)).collect();
        let exp: Vec<&str> = x["expect"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
        out.push_str(&serde_json::to_string(&serde_json::json!({"query": x["query"], "kind": x["kind"], "style": x["style"], "top": top}))?); out.push('\n');
        if x["kind"] == "match" { n += 1; if exp.contains(&top[0].0) { h1 += 1 } if top[..5].iter().any(|t| exp.contains(&t.0)) { h5 += 1 } }
    }
    std::fs::write(out_dir.join("ranks.jsonl"), out)?;
    println!("embedding only: hit@1 {h1}/{n} hit@5 {h5}/{n}");
    Ok(())
}
