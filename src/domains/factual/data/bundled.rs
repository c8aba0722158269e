//! The bundled offline factual set, built on first use from the pinned PyPI data packages
//! ([`super::wheels`]): templated questions with their gold from `countryinfo` (251 countries:
//! capital, currency code, calling code, demonym, region, number of land borders) and from
//! `mendeleev`'s `elements.db` (118 elements: symbol, atomic number, the element of a number,
//! discovery year, discoverer), read with rusqlite. Within a topic, questions are ordered by a
//! hash of their id, so the first N of a topic are a spread of countries or elements, the same
//! on every machine.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use crate::datasets::qa::{FactBench, SourceRow};
use crate::error::{Error, Result};

/// The topics, in order, with the answer type each asks for.
pub const TOPICS: &[(&str, &str)] = &[
    ("capital", "name"),
    ("currency_code", "code"),
    ("calling_code", "number"),
    ("demonym", "name"),
    ("region", "name"),
    ("land_borders", "number"),
    ("element_symbol", "symbol"),
    ("atomic_number", "number"),
    ("element_of_number", "name"),
    ("discovery_year", "year"),
    ("discoverer", "name"),
];

/// Spellings of element names that the gold's (American) spelling should also accept.
const ELEMENT_ALIASES: &[(&str, &str)] = &[("Aluminum", "Aluminium"), ("Cesium", "Caesium"), ("Sulfur", "Sulphur")];

/// Build the set from the unpacked packages under `facts`.
pub fn build(facts: &Path) -> Result<FactBench> {
    let mut by_topic: BTreeMap<usize, Vec<SourceRow>> = BTreeMap::new();
    let mut add = |topic: &str, id: String, question: String, answer: String, aliases: Vec<String>| {
        let (t, ty) =
            TOPICS.iter().enumerate().find(|(_, (n, _))| *n == topic).map(|(i, (_, ty))| (i, ty)).expect("a topic");
        by_topic.entry(t).or_default().push(SourceRow {
            line: 0,
            id: format!("{topic}/{id}"),
            question,
            answer,
            aliases,
            topic: Some(topic.to_string()),
            answer_type: Some(ty.to_string()),
        });
    };
    for (iso, c) in countries(&super::wheels::require(facts, "countryinfo")?)? {
        let name = text(&c["name"]);
        let list = |k: &str| -> Vec<String> {
            c[k].as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).map(str::to_string).collect())
                .unwrap_or_default()
        };
        if let Some(capital) = c["capital"].as_str().filter(|s| !s.trim().is_empty()) {
            add("capital", iso.clone(), format!("What is the capital of {name}?"), capital.trim().into(), vec![]);
        }
        if let Some((first, rest)) = list("currencies").split_first() {
            let q = format!("What is the ISO 4217 code of the currency of {name}?");
            add("currency_code", iso.clone(), q, first.clone(), rest.to_vec());
        }
        if let Some((first, rest)) = list("callingCodes").split_first().filter(|(f, _)| !f.is_empty()) {
            let q = format!("What is the international calling code of {name}?");
            add("calling_code", iso.clone(), q, first.clone(), rest.to_vec());
        }
        if let Some(d) = c["demonym"].as_str().filter(|s| !s.trim().is_empty()) {
            add(
                "demonym",
                iso.clone(),
                format!("What is the demonym for people from {name}?"),
                d.trim().into(),
                vec![],
            );
        }
        if let Some(r) = c["region"].as_str().filter(|s| !s.trim().is_empty()) {
            let q = format!("In which world region is {name}?");
            add("region", iso.clone(), q, r.trim().into(), vec![]);
        }
        if let Some(b) = c["borders"].as_array() {
            let q = format!("How many countries share a land border with {name}?");
            add("land_borders", iso.clone(), q, b.len().to_string(), vec![]);
        }
    }
    for e in elements(&super::wheels::require(facts, "mendeleev")?.join("mendeleev/elements.db"))? {
        let z = e.number.to_string();
        let mut names = vec![];
        if let Some((_, alt)) = ELEMENT_ALIASES.iter().find(|(a, _)| *a == e.name) {
            names.push(alt.to_string());
        }
        add(
            "element_symbol",
            z.clone(),
            format!("What is the chemical symbol of {}?", e.name),
            e.symbol.clone(),
            vec![],
        );
        add("atomic_number", z.clone(), format!("What is the atomic number of {}?", e.name), z.clone(), vec![]);
        let q = format!("Which chemical element has atomic number {z}?");
        add("element_of_number", z.clone(), q, e.name.clone(), names);
        if let Some(y) = e.year {
            add(
                "discovery_year",
                z.clone(),
                format!("In which year was {} discovered?", e.name),
                y.to_string(),
                vec![],
            );
        }
        if !e.discoverers.to_lowercase().starts_with("known to the ancients") {
            let people: Vec<String> = e
                .discoverers
                .split([',', ';'])
                .flat_map(|p| p.split(" and "))
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            let q = format!("Who discovered {}?", e.name);
            add(
                "discoverer",
                z.clone(),
                q,
                e.discoverers.trim().into(),
                if people.len() > 1 { people } else { vec![] },
            );
        }
    }
    let mut rows = Vec::new();
    for (_, mut topic) in by_topic {
        topic.sort_by_cached_key(|r| blake3::hash(r.id.as_bytes()).to_hex().to_string());
        rows.extend(topic);
    }
    for (i, r) in rows.iter_mut().enumerate() {
        r.line = i + 1;
    }
    FactBench::from_rows(&facts.join("countryinfo+mendeleev"), rows)
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().trim().to_string()
}

/// countryinfo's countries by ISO alpha-2 code (one file per country under `countryinfo/data/`;
/// where two files share a code, the first by file name).
pub fn countries(pkg: &Path) -> Result<BTreeMap<String, Value>> {
    let data = pkg.join("countryinfo/data");
    let mut files: Vec<_> = std::fs::read_dir(&data)
        .map_err(|source| Error::Read { path: data.clone(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = BTreeMap::new();
    for f in files {
        let raw = std::fs::read_to_string(&f).map_err(|source| Error::Read { path: f.clone(), source })?;
        let v: Value = serde_json::from_str(&raw).map_err(|e| Error::input_from(&f, "", e))?;
        let Some(iso) = v["ISO"]["alpha2"].as_str().map(str::to_string) else { continue };
        if text(&v["name"]).is_empty() {
            continue;
        }
        out.entry(iso).or_insert(v);
    }
    if out.is_empty() {
        return Err(Error::input(data, "no country files"));
    }
    Ok(out)
}

/// One element of mendeleev's table.
pub struct Element {
    /// Atomic number.
    pub number: i64,
    /// Symbol.
    pub symbol: String,
    /// Name.
    pub name: String,
    /// Discoverers, as one string.
    pub discoverers: String,
    /// Discovery year (None: known to the ancients).
    pub year: Option<i64>,
}

/// The elements of mendeleev's `elements.db`, by atomic number.
pub fn elements(db: &Path) -> Result<Vec<Element>> {
    let err = |source| Error::Sqlite { path: db.into(), source };
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(err)?;
    let mut stmt = conn
        .prepare(
            "SELECT atomic_number, symbol, name, coalesce(discoverers, ''), discovery_year FROM elements \
             ORDER BY atomic_number",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(Element {
                number: r.get(0)?,
                symbol: r.get(1)?,
                name: r.get(2)?,
                discoverers: r.get(3)?,
                year: r.get(4)?,
            })
        })
        .map_err(err)?;
    rows.collect::<std::result::Result<Vec<_>, _>>().map_err(err)
}
