//! `lucid view`: a page over one or more runs, served by this process (every asset in the binary,
//! nothing from the internet) or exported as static files that open from disk.
//!
//! The page ([`assets`]) holds every episode's table row (a few hundred bytes each) and filters,
//! sorts and pairs them itself; an episode's body (its task, memories, model calls, votes) is
//! fetched when opened — from the server, or from the export's chunk files.
//!
//! # Who may read the server ([`server`], [`guard`])
//!
//! The runs are the user's; the server must answer the user's own page and nothing else: not
//! another site's page open in the same browser (cross-site reads, DNS rebinding), and, served
//! beyond loopback, nobody without the launch's token.
//!
//! - **Token, never a cookie.** Each launch draws a token of 128 bits from `/dev/urandom`. Beyond
//!   loopback every `/api/` request needs it as the header `X-Lucid-Token`; it is delivered out
//!   of band, printed once in the URL's fragment, `http://HOST:PORT/#token=T` (a fragment is
//!   never sent to a server, nor in a Referer). The page's script moves it into the tab's
//!   `sessionStorage` (kept per origin, and an origin is scheme, host *and port*; per tab; gone
//!   when the tab closes), takes it out of the address bar and sends it with each API request.
//!   A cookie was what leaked it: cookies are not split by port, so the browser sent
//!   `lucid_view_<port>=T` to every other service of the same host, in clear over http, and no
//!   attribute prevents that. Nothing the browser sends by itself carries the token now, so a
//!   service on another port of the host receives it only if the user types it there. The page's
//!   own files (`/`, `/app.js`, `/style.css`) are the binary's and hold no run's data; they are
//!   served to any request with this server's Host. A run's report, opened as a tab, cannot send
//!   a header: the page asks `POST /api/ticket` (with the token) for a ticket good for
//!   [`guard::TICKET_LIFE`] and opens `/report/~TICKET/<run>/<file>` (the files it loads resolve
//!   under the same ticket). A `?token=` in an address is refused. On loopback the API needs no
//!   token (the server opens at `http://127.0.0.1:PORT/`).
//! - **Host and Origin.** Every request's Host must be `127.0.0.1:PORT`, `localhost:PORT`,
//!   `[::1]:PORT` or the IP address the client connected to (the bound address; bound to
//!   `0.0.0.0`, the interface's), whatever else it carries: a page of another site that rebinds
//!   its name to this address sends its own name (403). An Origin, when sent, must be
//!   `http://` and that Host.
//! - **The data is not a script.** The rows are `GET /api/data` (JSON; there is no `/data.js` on
//!   the server), and every `/api/` request must carry the header `X-Lucid-View: S`, where S is a
//!   second random value of the launch, written into the served page only
//!   (`<meta name="lucid-view" content="S">`). Another site's page cannot read the page (no CORS
//!   header is ever sent; a rebound name fails the Host check), a `<script>` or `<img>` load
//!   cannot add a header, and a cross-site `fetch` with one needs a CORS preflight, which is
//!   refused (`OPTIONS` answers 403). Beyond loopback S alone is not enough: the API needs the token.
//! - **Headers on every answer:** `Cross-Origin-Resource-Policy: same-origin`,
//!   `X-Content-Type-Options: nosniff`, `Cache-Control: no-store`, `Referrer-Policy: no-referrer`,
//!   `X-Frame-Options: DENY`, and `Content-Security-Policy: default-src 'self'; script-src 'self';
//!   style-src 'self'; img-src 'self' data:; frame-ancestors 'none'` (the page's script sets no
//!   inline style: `style=` attributes would need `'unsafe-inline'`, which is not given). A run's
//!   report files get a policy of their own: their inline styles, and no script at all, so a
//!   report of someone else's run cannot read the server as the page does.
//!
//! # Many requests at once
//!
//! Each connection is answered on a thread of its own (at most [`server::MAX_CONNECTIONS`]; past
//! them, 503 at once) and must send its whole request within [`server::REQUEST_WAIT`], so an idle
//! connection holds up nothing. The SQL box ([`sql_box`]) runs each query on a thread of its own
//! with a time limit, stops it when its page goes away, and reads only its first rows.
//!
//! # The page's data
//!
//! [`page`] writes [`assets::INDEX`] with its data's tag where [`DATA_SLOT`] is: the server's
//! page gets the secret's `<meta>` (its script fetches `api/data`), the export's
//! `<script src="data.js"></script>` ([`data_script`]: `window.LUCID_DATA = ...`, read from disk).

pub mod assets;
pub mod data;
pub mod export;
pub mod guard;
pub mod server;
pub mod sql_box;

use serde_json::{Value, json};

use data::Catalog;
pub use server::Server;

/// Where [`assets::INDEX`] takes its data's tag.
pub const DATA_SLOT: &str = "<!--lucid-data-->";

/// The page's HTML with `data_tag` in [`DATA_SLOT`]: the server's `<meta name="lucid-view" ...>`
/// ([`guard::Gate::meta`]), or the export's `<script src="data.js"></script>`.
pub fn page(data_tag: &str) -> String {
    assets::INDEX.replace(DATA_SLOT, data_tag)
}

/// The page's data: the runs, their rows, the comparison, and whether a server answers (the SQL
/// box and the search of model text).
pub fn data_json(c: &Catalog, served: bool) -> Value {
    let runs: Vec<Value> = c
        .runs
        .iter()
        .map(|r| json!({"name": r.name, "artifact": r.artifact, "report": r.path.join("report/report.html").is_file()}))
        .collect();
    json!({"runs": runs, "rows": c.rows, "verifiers": c.verifiers, "compare": c.compare,
           "served": served, "compare_sql": data::COMPARE_SQL,
           "harm_sql": data::HARM_SQL, "no_memory": data::NO_MEMORY, "sql_bounds": sql_box::memory::bounds(),
           "sql_limits": {"rows": sql_box::ROWS, "seconds": sql_box::TIMEOUT.as_secs(),
                          "answer_mib": sql_box::MAX_ANSWER >> 20, "value_kib": sql_box::bounded::MAX_VALUE >> 10,
                          "sql_kib": sql_box::MAX_SQL >> 10, "at_once": sql_box::AT_ONCE}})
}

/// The page's data as the export's script (`window.LUCID_DATA = {...}`), for a page opened from
/// disk; the server never serves it.
pub fn data_script(c: &Catalog, served: bool) -> String {
    format!("window.LUCID_DATA = {};\n", data_json(c, served))
}
