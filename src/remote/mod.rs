//! The shared run store: one URL (`file:///shared/runs` on NFS or Lustre, `s3://bucket/prefix`
//! on any S3-compatible server) that several machines read and write at once. Every object is
//! written once with a create-if-absent put: content-addressed data that already exists is
//! success, and whatever must change (a run's listing, a claim's holder) is a new object with a
//! higher epoch, newest wins. No object is ever overwritten.
//!
//! S3 endpoint and credentials come from the usual AWS environment variables
//! (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, ...); they are
//! never stored, printed or part of a key. The URL itself holds none.
//!
//! Layout under the prefix: `objects/<hh>/<hash>.parquet` (stage outputs), `stages/<key>.json`
//! (finished instances), `work/<key>/e<epoch>/part-…` (checkpoints of unfinished instances),
//! `claims/<key>/…` ([`claims`]), `runs/<name>/listing-<epoch>.json` ([`listing`]),
//! `responses/<hh>/<hash>.json` (the shared response-cache tier, [`responses`]).

pub mod claims;
pub mod listing;
pub mod responses;

use std::sync::Arc;

use futures::TryStreamExt;
use object_store::path::Path as OPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::{Error, Result};

/// A store URL opened for blocking use (lucid's pipeline is threads, not tasks).
pub struct Remote {
    url: String,
    store: Arc<dyn ObjectStore>,
    prefix: OPath,
    base: url_base::Base,
    rt: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Remote({})", self.url)
    }
}

/// One listed object: its key relative to the listed folder and the store's time of writing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Key relative to the folder listed.
    pub name: String,
    /// The store's own timestamp of the write, milliseconds since the epoch.
    pub written_ms: i64,
    /// Bytes.
    pub size: u64,
}

mod url_base {
    /// The scheme-and-authority part DataFusion registers the store under, and the path prefix.
    #[derive(Clone, Debug)]
    pub struct Base {
        /// `s3://bucket` or `file://`.
        pub store_url: String,
        /// The prefix inside the store, without slashes at either end.
        pub prefix: String,
    }
}

impl Remote {
    /// Open `url`: `file:///absolute/folder` or `s3://bucket[/prefix]`, S3 settings from the
    /// environment.
    pub fn open(url: &str) -> Result<Remote> {
        Remote::open_with(url, &[])
    }

    /// [`Remote::open`] with S3 settings given here over the environment's (`aws_endpoint`,
    /// `aws_access_key_id`, ...: object_store's configuration keys).
    pub fn open_with(url: &str, s3_config: &[(&str, &str)]) -> Result<Remote> {
        let usage = |why: &str| Error::usage(format!("--store {url}: {why}"));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Error::environment_from("cannot start the store's I/O runtime", e))?;
        let (store, base): (Arc<dyn ObjectStore>, url_base::Base) = if let Some(path) = url.strip_prefix("file://") {
            let dir = std::path::Path::new(path);
            if !dir.is_absolute() {
                return Err(usage("a file:// store needs an absolute path (file:///shared/runs)"));
            }
            std::fs::create_dir_all(dir).map_err(|source| Error::Write { path: dir.into(), source })?;
            let fs = object_store::local::LocalFileSystem::new_with_prefix(dir).map_err(|source| Error::Store {
                url: url.into(),
                key: String::new(),
                source,
            })?;
            (Arc::new(fs), url_base::Base { store_url: "file://".into(), prefix: path.trim_matches('/').into() })
        } else if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(usage("no bucket (s3://bucket/prefix)"));
            }
            (
                s3(url, bucket, s3_config)?,
                url_base::Base { store_url: format!("s3://{bucket}"), prefix: prefix.trim_matches('/').into() },
            )
        } else {
            return Err(usage("a store is file:///folder or s3://bucket/prefix"));
        };
        // LocalFileSystem already roots keys at its folder; S3 keys carry the prefix.
        let prefix = if url.starts_with("file://") { OPath::default() } else { OPath::from(base.prefix.as_str()) };
        Ok(Remote { url: url.trim_end_matches('/').into(), store, prefix, base, rt })
    }

    /// The URL as given (no credentials).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The object store and the URL DataFusion registers it under (`s3://bucket`, `file://`).
    pub fn for_datafusion(&self) -> (String, Arc<dyn ObjectStore>) {
        (self.base.store_url.clone(), self.store.clone())
    }

    /// The URL DataFusion reads object `key` at.
    pub fn object_url(&self, key: &str) -> String {
        if self.base.prefix.is_empty() {
            format!("{}/{key}", self.base.store_url)
        } else {
            format!("{}/{}/{key}", self.base.store_url, self.base.prefix)
        }
    }

    fn path(&self, key: &str) -> OPath {
        key.split('/').fold(self.prefix.clone(), |p, part| p.join(part))
    }

    fn err(&self, key: &str) -> impl FnOnce(object_store::Error) -> Error + '_ {
        let key = key.to_string();
        move |source| Error::Store { url: self.url.clone(), key, source }
    }

    /// Write `bytes` at `key` only if nothing is there: true when this call created it, false
    /// when the object already existed (for content-addressed data, that is success).
    pub fn create(&self, key: &str, bytes: Vec<u8>) -> Result<bool> {
        let opts = PutOptions { mode: PutMode::Create, ..Default::default() };
        let path = self.path(key);
        match self.rt.block_on(self.store.put_opts(&path, PutPayload::from(bytes), opts)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(self.err(key)(e)),
        }
    }

    /// The object at `key`, None when absent.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path(key);
        let got = self.rt.block_on(async {
            match self.store.get(&path).await {
                Ok(r) => r.bytes().await.map(|b| Some(b.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        got.map_err(self.err(key))
    }

    /// Every object under folder `dir` (recursively), names relative to it, sorted.
    pub fn list(&self, dir: &str) -> Result<Vec<Listed>> {
        let path = self.path(dir);
        let metas: Vec<object_store::ObjectMeta> =
            self.rt.block_on(self.store.list(Some(&path)).try_collect()).map_err(self.err(dir))?;
        let mut out: Vec<Listed> = metas
            .into_iter()
            .filter_map(|m| {
                let name =
                    m.location.prefix_match(&path)?.map(|p| p.as_ref().to_string()).collect::<Vec<_>>().join("/");
                Some(Listed { name, written_ms: m.last_modified.timestamp_millis(), size: m.size })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The store's clock now: a probe object's write time as the store records it, so leases are
    /// judged by one clock (the store's), never by comparing machines' clocks.
    pub fn now_ms(&self) -> Result<i64> {
        let key = format!("clock/{}", unique_name());
        self.create(&key, Vec::new())?;
        let path = self.path(&key);
        let meta = self.rt.block_on(self.store.head(&path)).map_err(self.err(&key))?;
        // The probe is this worker's own and read by nobody: removing it changes no shared state.
        let _ = self.rt.block_on(self.store.delete(&path));
        Ok(meta.last_modified.timestamp_millis())
    }
}

/// A name no other process or thread will produce: host, process, time, counter.
pub fn unique_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{}-{t:x}-{}", host(), std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// This machine's name (for claim holders), or `host` when it cannot be read.
pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().replace(['/', ' '], "_"))
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into())
}

#[cfg(feature = "s3")]
fn s3(url: &str, bucket: &str, config: &[(&str, &str)]) -> Result<Arc<dyn ObjectStore>> {
    let mut b = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
    let mut endpoint = std::env::var("AWS_ENDPOINT_URL").or_else(|_| std::env::var("AWS_ENDPOINT")).unwrap_or_default();
    for (k, v) in config {
        let key = k.parse::<object_store::aws::AmazonS3ConfigKey>().map_err(|source| Error::Store {
            url: url.into(),
            key: (*k).into(),
            source,
        })?;
        if matches!(key, object_store::aws::AmazonS3ConfigKey::Endpoint) {
            endpoint = (*v).into();
        }
        b = b.with_config(key, *v);
    }
    if endpoint.starts_with("http://") {
        b = b.with_allow_http(true);
    }
    let s = b.build().map_err(|source| Error::Store { url: url.into(), key: String::new(), source })?;
    Ok(Arc::new(s))
}

#[cfg(not(feature = "s3"))]
fn s3(url: &str, _bucket: &str, _config: &[(&str, &str)]) -> Result<Arc<dyn ObjectStore>> {
    Err(Error::usage(format!("--store {url}: this lucid was built without the `s3` feature")))
}
