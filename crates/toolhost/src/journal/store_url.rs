//! Opening a journal from the URL a manager is given: `sqlite:<path>` or `postgres://…`.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::postgres::PostgresStore;
use super::sqlite::{SqliteStore, Synchronous};
use super::{JournalPolicy, JournalStore};
use crate::error::{RegistryError, RegistryErrorCode};

/// An open journal store.
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(Box<PostgresStore>),
}

impl Store {
    pub fn as_store(&mut self) -> &mut dyn JournalStore {
        match self {
            Self::Sqlite(s) => s,
            Self::Postgres(s) => &mut **s,
        }
    }
}

fn invalid(message: impl Into<String>) -> RegistryError {
    RegistryError::new(RegistryErrorCode::InvalidConfig, message)
}

const EXPECTED: &str = "journal must be 'sqlite:<path>' (SQLite, embedded) or 'postgres://user@host:port/database' (Postgres)";

/// Where a `sqlite:` URL points, and how it syncs.
fn sqlite_target(rest: &str) -> Result<(PathBuf, Synchronous), RegistryError> {
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    // `sqlite://relative/path`, `sqlite:///absolute/path`, `sqlite:path`, `sqlite:/abs`.
    let path = path.strip_prefix("//").unwrap_or(path);
    if path.is_empty() {
        return Err(invalid(format!("{EXPECTED}: the SQLite URL names no file")));
    }
    // Each connection would have a database of its own: nothing outlives the process or
    // is shared with another manager, so the journal would promise what it cannot keep.
    if path == ":memory:" || path.starts_with("file::memory:") {
        return Err(invalid(format!("{EXPECTED}: a journal in memory ('{path}') keeps nothing past the process and shares nothing with another manager; name a file")));
    }
    let mut synchronous = Synchronous::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "synchronous" => {
                synchronous = match value.to_ascii_lowercase().as_str() {
                    "normal" => Synchronous::Normal,
                    "full" => Synchronous::Full,
                    _ => return Err(invalid(format!("journal: synchronous must be 'normal' (the default) or 'full', got '{value}'"))),
                }
            }
            _ => {
                return Err(invalid(format!(
                    "journal: {}",
                    crate::host::options::unknown_option(name, &["synchronous"], "the SQLite journal URL")
                )))
            }
        }
    }
    Ok((PathBuf::from(path), synchronous))
}

/// The parameters a Postgres URL may carry (tokio-postgres reads these).
const POSTGRES_PARAMETERS: &[&str] = &[
    "user", "password", "dbname", "options", "application_name", "sslmode", "sslnegotiation", "host", "hostaddr", "port",
    "connect_timeout", "tcp_user_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_retries",
    "target_session_attrs", "channel_binding", "load_balance_hosts",
];

/// What is wrong with a Postgres URL: the driver's "invalid connection string" says
/// which part only in its source, and a misspelt parameter gets a did-you-mean.
fn postgres_url_error(e: &tokio_postgres::Error) -> String {
    let Some(detail) = std::error::Error::source(e).map(ToString::to_string) else { return e.to_string() };
    match detail.strip_prefix("unknown option `").and_then(|d| d.strip_suffix('`')) {
        Some(key) => crate::host::options::unknown_option(key, POSTGRES_PARAMETERS, "the Postgres journal URL"),
        None => format!("{e}: {detail}"),
    }
}

/// Opens the journal a URL names, bringing its schema up to date.
///
/// # Errors
/// `INVALID_CONFIG` for a malformed URL; `JOURNAL_UNAVAILABLE` for one that cannot be
/// opened or reached (a missing directory, a locked or corrupt file, a server that
/// refuses); `JOURNAL_SCHEMA_NEWER` for a database a newer toolhost wrote.
pub fn open(url: &str) -> Result<Store, RegistryError> {
    open_with(url, &JournalPolicy::default())
}

/// [`open`], with the policy's [`operation_timeout_ms`](JournalPolicy::operation_timeout_ms)
/// when it sets one.
///
/// # Errors
/// As [`open`].
pub fn open_with(url: &str, policy: &JournalPolicy) -> Result<Store, RegistryError> {
    let timeout = policy.operation_timeout_ms.map(Duration::from_millis);
    if let Some(rest) = url.strip_prefix("sqlite:") {
        let (path, synchronous) = sqlite_target(rest)?;
        let busy = timeout.unwrap_or(super::sqlite::BUSY_TIMEOUT);
        return Ok(Store::Sqlite(SqliteStore::open_with_busy_timeout(&path, synchronous, busy)?));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let config = tokio_postgres::Config::from_str(url).map_err(|e| invalid(format!("journal: not a valid Postgres URL: {}", postgres_url_error(&e))))?;
        // The driver says so only when it connects, as JOURNAL_UNAVAILABLE.
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(invalid(format!("journal: the Postgres URL names no host: {EXPECTED}")));
        }
        if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require {
            return Err(invalid("journal: sslmode=require is not supported yet (toolhost connects without TLS): reach the server over a private network or a local TLS tunnel"));
        }
        return Ok(Store::Postgres(Box::new(PostgresStore::open_with_deadline(config, timeout.unwrap_or(super::postgres::DEADLINE))?)));
    }
    let shown: String = url.chars().take(40).collect();
    Err(invalid(format!("{EXPECTED}, got '{shown}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls() {
        assert_eq!(sqlite_target("./a.db").unwrap().0, PathBuf::from("./a.db"));
        assert_eq!(sqlite_target("//rel/a.db").unwrap().0, PathBuf::from("rel/a.db"));
        assert_eq!(sqlite_target("///abs/a.db").unwrap().0, PathBuf::from("/abs/a.db"));
        assert_eq!(sqlite_target("a.db?synchronous=full").unwrap().1, Synchronous::Full);
        assert!(sqlite_target("").unwrap_err().message.contains("names no file"));
        assert!(sqlite_target("a.db?sync=full").unwrap_err().message.contains("did you mean `synchronous`?"));
        assert!(sqlite_target("a.db?synchronous=off").unwrap_err().message.contains("'normal' (the default) or 'full'"));
        for memory in [":memory:", "file::memory:?cache=shared"] {
            let e = sqlite_target(memory).unwrap_err();
            assert_eq!(e.code, RegistryErrorCode::InvalidConfig);
            assert!(e.message.contains("keeps nothing past the process"), "{}", e.message);
        }
    }

    #[test]
    fn other_schemes_and_malformed_urls_are_refused_by_name() {
        let e = open("mysql://x").err().unwrap();
        assert_eq!(e.code, RegistryErrorCode::InvalidConfig);
        assert!(e.message.contains("got 'mysql://x'"), "{}", e.message);
        let e = open("postgres://a:b@host:notaport/db").err().unwrap();
        assert_eq!(e.code, RegistryErrorCode::InvalidConfig);
        assert!(e.message.contains("not a valid Postgres URL"), "{}", e.message);
        // Which part is wrong, and a misspelt parameter's likely name.
        let e = open("postgres://u@127.0.0.1/db?connect_timout=2").err().unwrap();
        assert_eq!(e.message, "journal: not a valid Postgres URL: unknown option `connect_timout` in the Postgres journal URL; did you mean `connect_timeout`?");
        let e = open("postgres://u@127.0.0.1/db?keepalives=maybe").err().unwrap();
        assert_eq!(e.message, "journal: not a valid Postgres URL: invalid connection string: invalid value for option `keepalives`");
        assert!(open("postgres://u@127.0.0.1/db?sslmode=require").err().unwrap().message.contains("sslmode=require"));
        for no_host in ["postgres://", "postgresql:///db"] {
            let e = open(no_host).err().unwrap();
            assert_eq!(e.code, RegistryErrorCode::InvalidConfig, "{no_host}");
            assert!(e.message.contains("names no host"), "{}", e.message);
        }
    }

    #[test]
    fn a_file_that_is_not_a_database_is_refused_not_replaced() {
        let dir = std::env::temp_dir().join(format!("toolhost-journal-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("not-a-db.db");
        std::fs::write(&file, "this is not sqlite, it is text, and long enough to have a header............................................").unwrap();
        let e = open(&format!("sqlite:{}", file.display())).err().unwrap();
        assert_eq!(e.code, RegistryErrorCode::JournalUnavailable);
        assert!(e.message.contains("not a SQLite database"), "{}", e.message);
        assert!(std::fs::read_to_string(&file).unwrap().starts_with("this is not sqlite"), "the file is left as it was");
        let e = open(&format!("sqlite:{}", dir.join("missing-dir/x.db").display())).err().unwrap();
        assert_eq!(e.code, RegistryErrorCode::JournalUnavailable);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn another_programs_tables_or_an_edited_version_are_refused_by_what_they_are() {
        // The refusal quoted the migration's SQL comment ("already exists in -- One row
        // per idempotency key..."), or read a version that is not a number as 0.
        let dir = std::env::temp_dir().join(format!("toolhost-journal-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let foreign = dir.join("foreign.db");
        rusqlite::Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE toolhost_calls (id INTEGER)").unwrap();
        let e = open(&format!("sqlite:{}", foreign.display())).err().unwrap();
        assert_eq!(e.code, RegistryErrorCode::JournalUnavailable);
        assert!(e.message.ends_with("its schema could not be brought to version 1: table toolhost_calls already exists (tables of these names that toolhost did not make?)"), "{}", e.message);
        let edited = dir.join("edited.db");
        rusqlite::Connection::open(&edited)
            .unwrap()
            .execute_batch("CREATE TABLE toolhost_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO toolhost_meta VALUES ('schema_version', 'abc')")
            .unwrap();
        let e = open(&format!("sqlite:{}", edited.display())).err().unwrap();
        assert!(e.message.contains("its toolhost_meta schema_version is \"abc\", not a number"), "{}", e.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
