//! The journal on SQLite, embedded: the default way to make a manager durable, with no
//! server to run.
//!
//! WAL mode, `synchronous = NORMAL` by default: a commit survives the process being
//! killed (`kill -9`) but may be lost to a power cut or an OS crash; `?synchronous=full`
//! syncs every commit to disk (slower: see the README's figures). Several processes may
//! share one file: every write transaction is `BEGIN IMMEDIATE` with a busy timeout, and
//! the schema is created under the same lock, so processes opening a new file at the same
//! moment do not race on it.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension, Row, Transaction, TransactionBehavior};

use super::migrations::{self, Migration};
use super::rows::{approval_json, decided_approval, existing, stored_approval, too_late, Existing};
use super::{
    denied_outcome, task_call_key, task_json, Claim, ClaimAnswer, DecideAnswer, Decision, DueCursor, Effect, JournalError, JournalStore, Record,
    RecordAnswer, RowKey, RowState, StoredApproval, TakeOver, TaskOp, TaskRow, Verdict,
};
use serde_json::Value;
use crate::error::ToolError;

/// How long a connection waits for another process's lock before it gives up, unless
/// the policy says otherwise ([`JournalPolicy::operation_timeout_ms`](super::JournalPolicy::operation_timeout_ms)).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How a commit reaches the disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// Survives a killed process, not a power cut (WAL's `NORMAL`).
    #[default]
    Normal,
    /// Every commit synced to disk.
    Full,
}

/// A journal in one SQLite file.
pub struct SqliteStore {
    conn: Connection,
    label: String,
    /// The file it opened, and its identity then (device, inode): a journal deleted or
    /// replaced while open is noticed at the next write, not written on unseen.
    file: Option<(std::path::PathBuf, (u64, u64))>,
    /// How long it waits for another process's lock.
    busy: Duration,
}

/// A file's identity: (device, inode) on Unix.
fn identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

fn unavailable(label: &str, e: &rusqlite::Error) -> JournalError {
    let why = match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            format!("{e} (another process holds a lock on it past the busy timeout)")
        }
        Some(rusqlite::ErrorCode::NotADatabase) => format!("{e}: the file is not a SQLite database, or it is corrupt"),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => format!("{e}: the database is corrupt"),
        _ => e.to_string(),
    };
    let lasting = matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::ReadOnly));
    JournalError { lasting, ..JournalError::unavailable(format!("the SQLite journal {label}: {why}")) }
}

impl SqliteStore {
    /// Opens (creating it if needed) the journal at `path` and brings its schema up to
    /// date.
    ///
    /// # Errors
    /// `JOURNAL_UNAVAILABLE` for a file that cannot be opened, is locked, is not a SQLite
    /// database or is corrupt; `JOURNAL_SCHEMA_NEWER` for one a newer toolhost wrote.
    pub fn open(path: &Path, synchronous: Synchronous) -> Result<Self, JournalError> {
        Self::open_with_busy_timeout(path, synchronous, BUSY_TIMEOUT)
    }

    /// [`SqliteStore::open`], waiting up to `busy` for another process's lock (SQLite
    /// counts it in whole milliseconds, at most `i32::MAX`).
    ///
    /// # Errors
    /// As [`SqliteStore::open`].
    pub fn open_with_busy_timeout(path: &Path, synchronous: Synchronous, busy: Duration) -> Result<Self, JournalError> {
        let label = format!("at {}", path.display());
        let conn = Connection::open(path).map_err(|e| unavailable(&label, &e))?;
        // SQLite opens a file it may not write read-only, without an error; a journal
        // whose schema is already there would then fail every call, not its opening.
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(JournalError {
                lasting: true,
                ..JournalError::unavailable(format!("the SQLite journal {label}: the file is read-only to this process, and a journal must be written"))
            });
        }
        let busy = busy.min(Duration::from_millis(i32::MAX as u64));
        let mut store = Self { conn, label, file: None, busy };
        store.configure(synchronous).map_err(|e| unavailable(&store.label, &e))?;
        store.migrate(migrations::SQLITE)?;
        store.file = identity(path).map(|id| (path.to_path_buf(), id));
        Ok(store)
    }

    fn configure(&mut self, synchronous: Synchronous) -> rusqlite::Result<()> {
        self.conn.busy_timeout(self.busy)?;
        let mode = self.wal_mode()?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode stayed {mode}")));
        }
        let sync = match synchronous {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        };
        // A checkpoint syncs the database file: every 1,000 pages (SQLite's default) was
        // a sync every ~100 calls, most of a call's cost on a virtual disk.
        self.conn.execute_batch(&format!("PRAGMA synchronous = {sync}; PRAGMA wal_autocheckpoint = 20000"))?;
        Ok(())
    }

    /// `PRAGMA journal_mode = WAL`, which also reads the header: a file that is not a
    /// database fails here, not later.
    ///
    /// Switching a new file to WAL takes a read lock, then upgrades it to a write lock;
    /// SQLite answers `SQLITE_BUSY` to that upgrade at once instead of calling the busy
    /// handler (waiting while holding a read lock could deadlock). So connections opening
    /// a new file together retry here, for as long as the busy timeout allows.
    fn wal_mode(&self) -> rusqlite::Result<String> {
        let deadline = Instant::now() + self.busy;
        let mut pause = Duration::from_millis(1);
        loop {
            match self.conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)) {
                Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) && Instant::now() + pause < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                answer => return answer,
            }
        }
    }

    fn migrate(&mut self, set: &'static [Migration]) -> Result<(), JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
        tx.execute_batch(migrations::META_TABLE).map_err(err)?;
        let current: i64 = match tx
            .query_row("SELECT value FROM toolhost_meta WHERE name = 'schema_version'", [], |r| r.get::<_, String>(0))
            .optional()
            .map_err(err)?
        {
            None => 0,
            Some(v) => v.parse().map_err(|_| {
                JournalError::unavailable(format!("the SQLite journal {label}: its toolhost_meta schema_version is {v:?}, not a number: the database was edited, or another program uses these tables"))
            })?,
        };
        let todo = migrations::pending(set, current, &label)?;
        for m in todo {
            tx.execute_batch(m.sql).map_err(|e| {
                // The statement's text is not the news (it quoted the migration's comment).
                let why = match &e {
                    rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
                    other => other.to_string(),
                };
                JournalError::unavailable(format!(
                    "the SQLite journal {label}: its schema could not be brought to version {}: {why} (tables of these names that toolhost did not make?)",
                    m.version
                ))
            })?;
        }
        if !todo.is_empty() {
            tx.execute(
                "INSERT INTO toolhost_meta (name, value) VALUES ('schema_version', ?1) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                params![migrations::latest(set).to_string()],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    fn write(&mut self) -> Result<Transaction<'_>, JournalError> {
        // Deleted (a cleanup job, a redeploy wiping the folder) or replaced: writing on
        // to the unlinked file let a process started afterwards make a new journal there
        // and run a 'once' key again. One stat per write transaction.
        if let Some((path, id)) = &self.file {
            if identity(path) != Some(*id) {
                return Err(JournalError {
                    lasting: true,
                    ..JournalError::unavailable(format!(
                        "the SQLite journal {}: the file was deleted or replaced while this manager had it open; this manager refuses every call from now on",
                        self.label
                    ))
                });
            }
        }
        let label = self.label.clone();
        self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| unavailable(&label, &e))
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> JournalError + '_ {
        move |e| unavailable(&self.label, &e)
    }
}

const ROW_COLUMNS: &str = "scope, key, state, owner, fence, lease_until, effect, tool, args, execution_id, tool_call_id, approval_id, approval, outcome";

fn read_row(r: &Row<'_>) -> rusqlite::Result<RowState> {
    let approval: Option<String> = r.get(12)?;
    let outcome: Option<String> = r.get(13)?;
    Ok(RowState {
        row: RowKey { scope: r.get(0)?, key: r.get(1)? },
        state: r.get(2)?,
        owner: r.get(3)?,
        fence: r.get(4)?,
        lease_until: r.get(5)?,
        effect: Effect::parse(&r.get::<_, String>(6)?).unwrap_or_default(),
        tool: r.get(7)?,
        args: r.get(8)?,
        execution_id: r.get(9)?,
        tool_call_id: r.get(10)?,
        approval_id: r.get(11)?,
        approval: approval.and_then(|a| serde_json::from_str(&a).ok()),
        outcome: outcome.and_then(|o| serde_json::from_str(&o).ok()),
    })
}

fn select_row(tx: &Connection, row: &RowKey) -> rusqlite::Result<Option<RowState>> {
    tx.query_row(&format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE scope = ?1 AND key = ?2"), params![row.scope, row.key], read_row)
        .optional()
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl JournalStore for SqliteStore {
    fn claim(&mut self, owner: &str, lease_until: i64, now: i64, claims: &[Claim]) -> Result<Vec<ClaimAnswer>, JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        let mut answers = Vec::with_capacity(claims.len());
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO toolhost_calls (scope, key, fingerprint, tool, effect, state, owner, fence, lease_until, args, execution_id, tool_call_id, approval_id, approval, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT (scope, key) DO NOTHING",
                )
                .map_err(err)?;
            for c in claims {
                let (state, approval_id, approval) = match &c.approval {
                    Some(a) => ("awaiting", Some(a.approval_id.as_str()), Some(to_json(&approval_json(&a.approval_id, a.requested_at, a.expires_at)))),
                    None => ("running", None, None),
                };
                let inserted = insert
                    .execute(params![
                        c.row.scope, c.row.key, c.fingerprint, c.tool, c.effect.as_str(), state, owner, lease_until, c.args, c.execution_id,
                        c.tool_call_id, approval_id, approval, now
                    ])
                    .map_err(err)?;
                if inserted == 1 {
                    answers.push(ClaimAnswer::Claimed { fence: 1, taken_over: None });
                    continue;
                }
                let fingerprint: String = tx
                    .query_row("SELECT fingerprint FROM toolhost_calls WHERE scope = ?1 AND key = ?2", params![c.row.scope, c.row.key], |r| r.get(0))
                    .map_err(err)?;
                let row = select_row(&tx, &c.row).map_err(err)?.expect("the row the insert conflicted with");
                if fingerprint != c.fingerprint {
                    answers.push(ClaimAnswer::Conflict { tool: row.tool });
                    continue;
                }
                answers.push(match existing(&row, now) {
                    Existing::Answer(a) => a,
                    Existing::TakeOver => {
                        tx.execute(
                            "UPDATE toolhost_calls SET owner = ?1, fence = fence + 1, lease_until = ?2, execution_id = ?3 WHERE scope = ?4 AND key = ?5 AND fence = ?6",
                            params![owner, lease_until, c.execution_id, c.row.scope, c.row.key, row.fence],
                        )
                        .map_err(err)?;
                        ClaimAnswer::Claimed { fence: row.fence + 1, taken_over: Some(Box::new(row)) }
                    }
                    Existing::End(outcome, action) => {
                        tx.execute(
                            "UPDATE toolhost_calls SET state = 'done', outcome = ?1, finished_at = ?2, lease_until = 0, fence = fence + 1 WHERE scope = ?3 AND key = ?4 AND fence = ?5",
                            params![to_json(&outcome), now, c.row.scope, c.row.key, row.fence],
                        )
                        .map_err(err)?;
                        ClaimAnswer::Ended { outcome, action }
                    }
                });
            }
        }
        tx.commit().map_err(err)?;
        Ok(answers)
    }

    fn record(&mut self, now: i64, records: &[Record]) -> Result<Vec<RecordAnswer>, JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        let mut answers = Vec::with_capacity(records.len());
        {
            let mut update = tx
                .prepare_cached(
                    "UPDATE toolhost_calls SET state = 'done', outcome = ?1, finished_at = ?2, lease_until = 0 WHERE scope = ?3 AND key = ?4 AND fence = ?5 AND state <> 'done'",
                )
                .map_err(err)?;
            for r in records {
                if update.execute(params![to_json(&r.outcome), now, r.row.scope, r.row.key, r.fence]).map_err(err)? == 1 {
                    answers.push(RecordAnswer::Recorded);
                } else {
                    let row = select_row(&tx, &r.row).map_err(err)?;
                    answers.push(RecordAnswer::Fenced(row.and_then(|row| row.outcome).map(Box::new)));
                }
            }
        }
        tx.commit().map_err(err)?;
        Ok(answers)
    }

    fn release(&mut self, rows: &[(RowKey, i64)]) -> Result<(), JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        for (row, fence) in rows {
            tx.execute("DELETE FROM toolhost_calls WHERE scope = ?1 AND key = ?2 AND fence = ?3 AND state <> 'done'", params![row.scope, row.key, fence])
                .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    fn forget(&mut self, owner: &str, rows: &[(RowKey, String)]) -> Result<(), JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        for (row, execution_id) in rows {
            tx.execute(
                "DELETE FROM toolhost_calls WHERE scope = ?1 AND key = ?2 AND owner = ?3 AND execution_id = ?4 AND fence = 1 AND state <> 'done'",
                params![row.scope, row.key, owner, execution_id],
            )
            .map_err(err)?;
            tx.execute(
                "UPDATE toolhost_calls SET owner = '', lease_until = 0 WHERE scope = ?1 AND key = ?2 AND owner = ?3 AND execution_id = ?4 AND fence > 1 AND state <> 'done'",
                params![row.scope, row.key, owner, execution_id],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    fn start(&mut self, owner: &str, lease_until: i64, rows: &[(RowKey, i64)]) -> Result<Vec<bool>, JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        let mut out = Vec::with_capacity(rows.len());
        for (row, fence) in rows {
            let n = tx
                .execute(
                    "UPDATE toolhost_calls SET state = 'running', owner = ?1, lease_until = ?2 WHERE scope = ?3 AND key = ?4 AND fence = ?5 AND state IN ('approved', 'running')",
                    params![owner, lease_until, row.scope, row.key, fence],
                )
                .map_err(err)?;
            out.push(n == 1);
        }
        tx.commit().map_err(err)?;
        Ok(out)
    }

    fn decide(&mut self, decision: &Decision, check: &dyn Fn(&StoredApproval) -> Result<(), ToolError>) -> Result<DecideAnswer, JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        let row = tx
            .query_row(
                &format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE approval_id = ?1 AND state = 'awaiting'"),
                params![decision.approval_id],
                read_row,
            )
            .optional()
            .map_err(err)?;
        let Some(row) = row else { return Ok(DecideAnswer::NotFound) };
        if too_late(&row, decision) {
            return Ok(DecideAnswer::NotFound);
        }
        let stored = stored_approval(&row);
        if let Err(e) = check(&stored) {
            return Ok(DecideAnswer::Refused(e));
        }
        let approval = decided_approval(row.approval.as_ref(), decision, &row.args);
        match &decision.verdict {
            Verdict::Approve { args } => {
                tx.execute(
                    "UPDATE toolhost_calls SET state = 'approved', approval = ?1, args = COALESCE(?2, args) WHERE scope = ?3 AND key = ?4 AND fence = ?5",
                    params![to_json(&approval), args, row.row.scope, row.row.key, row.fence],
                )
                .map_err(err)?;
            }
            Verdict::Deny { reason } => {
                let outcome = denied_outcome(&row.tool, &row.execution_id, reason, approval.clone(), decision.now_ms);
                tx.execute(
                    "UPDATE toolhost_calls SET state = 'done', approval = ?1, outcome = ?2, finished_at = ?3, lease_until = 0 WHERE scope = ?4 AND key = ?5 AND fence = ?6",
                    params![to_json(&approval), to_json(&outcome), decision.now_ms as i64, row.row.scope, row.row.key, row.fence],
                )
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok(DecideAnswer::Decided(stored))
    }

    fn approvals(&mut self) -> Result<Vec<StoredApproval>, JournalError> {
        let err = self.err();
        let mut q = self
            .conn
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE state = 'awaiting' \
                 AND COALESCE(json_extract(approval, '$.expiresAt') > ?1, 1) ORDER BY created_at, key"
            ))
            .map_err(&err)?;
        let rows = q.query_map(params![crate::record::now_ms()], read_row).map_err(&err)?.collect::<rusqlite::Result<Vec<_>>>().map_err(&err)?;
        Ok(rows.iter().map(stored_approval).collect())
    }

    fn rows(&mut self, rows: &[RowKey]) -> Result<Vec<RowState>, JournalError> {
        let err = self.err();
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            if let Some(r) = select_row(&self.conn, row).map_err(&err)? {
                out.push(r);
            }
        }
        Ok(out)
    }

    fn renew(&mut self, owner: &str, lease_until: i64) -> Result<(), JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        tx.execute("UPDATE toolhost_calls SET lease_until = ?1 WHERE owner = ?2 AND state <> 'done'", params![lease_until, owner]).map_err(err)?;
        tx.commit().map_err(err)
    }

    fn due(&mut self, now: i64, after: Option<&DueCursor>, limit: usize) -> Result<Vec<RowState>, JournalError> {
        let err = self.err();
        let mut q = self
            .conn
            .prepare_cached(&format!(
                "SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE state <> 'done' AND lease_until < ?1 \
                 AND NOT (state = 'awaiting' AND COALESCE(json_extract(approval, '$.expiresAt') > ?1, 1)) \
                 AND (lease_until, scope, key) > (?3, ?4, ?5) ORDER BY lease_until, scope, key LIMIT ?2"
            ))
            .map_err(&err)?;
        let (lease, scope, key) = match after {
            Some((lease, row)) => (*lease, row.scope.as_str(), row.key.as_str()),
            None => (i64::MIN, "", ""),
        };
        let rows = q
            .query_map(params![now, limit as i64, lease, scope, key], read_row)
            .map_err(&err)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(&err)?;
        Ok(rows)
    }

    fn take_over(&mut self, owner: &str, lease_until: i64, now: i64, take: &TakeOver) -> Result<Option<i64>, JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        let TakeOver { row, fence, state, execution_id } = take;
        let n = tx
            .execute(
                "UPDATE toolhost_calls SET owner = ?1, fence = fence + 1, lease_until = ?2, state = ?3, execution_id = ?4 \
                 WHERE scope = ?5 AND key = ?6 AND fence = ?7 AND lease_until < ?8 AND state <> 'done'",
                params![owner, lease_until, state, execution_id, row.scope, row.key, fence, now],
            )
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok((n == 1).then_some(fence + 1))
    }

    fn task(&mut self, op: &TaskOp) -> Result<Value, JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let read = |r: &Row<'_>| -> rusqlite::Result<TaskRow> {
            let result: Option<String> = r.get(7)?;
            Ok(TaskRow {
                task_id: r.get(0)?,
                status: r.get(1)?,
                status_message: r.get(2)?,
                ttl: r.get(3)?,
                poll_interval: r.get(4)?,
                created_at: r.get(5)?,
                last_updated: r.get(6)?,
                result: result.and_then(|t| serde_json::from_str(&t).ok()),
            })
        };
        const COLUMNS: &str = "task_id, status, status_message, ttl, poll_interval, created_at, last_updated, result";
        match op {
            TaskOp::Create(t) => {
                let tx = self.write()?;
                tx.execute(
                    "INSERT INTO toolhost_tasks (task_id, status, status_message, ttl, poll_interval, created_at, last_updated, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL)",
                    params![t.task_id, t.status, t.status_message, t.ttl, t.poll_interval, t.created_at, t.last_updated],
                )
                .map_err(err)?;
                tx.commit().map_err(err)?;
                Ok(serde_json::to_value(t).unwrap_or(Value::Null))
            }
            TaskOp::Get { task_id } => {
                let task = self
                    .conn
                    .query_row(&format!("SELECT {COLUMNS} FROM toolhost_tasks WHERE task_id = ?1"), params![task_id], read)
                    .optional()
                    .map_err(err)?;
                let call = if task.is_some() { select_row(&self.conn, &task_call_key(task_id)).map_err(err)? } else { None };
                Ok(task_json(task, call))
            }
            TaskOp::Update { task_id, status, status_message, result, now } => {
                let tx = self.write()?;
                let n = tx
                    .execute(
                        "UPDATE toolhost_tasks SET status = ?1, status_message = COALESCE(?2, status_message), result = COALESCE(?3, result), last_updated = ?4 WHERE task_id = ?5 AND status NOT IN ('completed', 'failed', 'cancelled')",
                        params![status, status_message, result.as_ref().map(|r| r.to_string()), now, task_id],
                    )
                    .map_err(err)?;
                tx.commit().map_err(err)?;
                Ok(Value::Bool(n == 1))
            }
            TaskOp::List { cursor, limit } => {
                let mut q = self
                    .conn
                    .prepare_cached(&format!("SELECT {COLUMNS} FROM toolhost_tasks WHERE task_id > ?1 ORDER BY task_id LIMIT ?2"))
                    .map_err(err)?;
                let rows = q.query_map(params![cursor.as_deref().unwrap_or(""), *limit as i64], read).map_err(err)?;
                let tasks = rows.collect::<rusqlite::Result<Vec<_>>>().map_err(err)?;
                Ok(serde_json::to_value(tasks).unwrap_or(Value::Null))
            }
        }
    }

    fn prune(&mut self, done_before: i64, stale_before: i64) -> Result<u64, JournalError> {
        let label = self.label.clone();
        let err = |e: rusqlite::Error| unavailable(&label, &e);
        let tx = self.write()?;
        let tasks = tx
            .execute("DELETE FROM toolhost_tasks WHERE ttl IS NOT NULL AND created_at + ttl < ?1", params![crate::record::now_ms() as i64])
            .map_err(err)?;
        let n = tasks
            + tx
            .execute(
                "DELETE FROM toolhost_calls WHERE (scope, key) IN (SELECT scope, key FROM toolhost_calls \
                 WHERE (state = 'done' AND finished_at < ?1) OR (state = 'running' AND effect <> 'once' AND lease_until < ?2) LIMIT 10000)",
                params![done_before, stale_before],
            )
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policy's `operation_timeout_ms` is how long a write waits for another
    /// connection's lock (5 s without it).
    #[test]
    fn the_operation_timeout_bounds_a_wait_for_another_connections_lock() {
        let dir = std::env::temp_dir().join(format!("toolhost-sqlite-busy-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("j.db");
        let url = format!("sqlite:{}", path.display());
        let policy = crate::journal::JournalPolicy { operation_timeout_ms: Some(300), ..Default::default() };
        let mut store = crate::journal::open_with(&url, &policy).unwrap();
        let super::super::Store::Sqlite(s) = &mut store else { panic!("not SQLite") };
        assert_eq!(s.busy, Duration::from_millis(300));
        s.renew("me", 1).unwrap();
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let started = Instant::now();
        let e = s.renew("me", 2).unwrap_err();
        let waited = started.elapsed();
        assert!(e.message.contains("past the busy timeout"), "{e:?}");
        assert!(waited >= Duration::from_millis(250) && waited < Duration::from_millis(4_000), "{waited:?}");
        other.execute_batch("COMMIT").unwrap();
        s.renew("me", 3).unwrap();
        // Past what SQLite can count: the most it can, not a panic.
        let most = SqliteStore::open_with_busy_timeout(&path, Synchronous::Normal, Duration::MAX).unwrap();
        assert_eq!(most.busy, Duration::from_millis(i32::MAX as u64));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Deleting the journal while a manager has it open went unnoticed: it wrote on to the
    /// unlinked file, and a process started afterwards made a new, empty journal at the
    /// same path (a 'once' key ran again). Every write now refuses, for good.
    #[test]
    fn a_journal_deleted_while_open_refuses_every_write() {
        let dir = std::env::temp_dir().join(format!("toolhost-sqlite-deleted-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("j.db");
        let mut s = SqliteStore::open(&path, Synchronous::Normal).unwrap();
        s.renew("me", 1).unwrap();
        for f in ["j.db", "j.db-wal", "j.db-shm"] {
            let _ = std::fs::remove_file(dir.join(f));
        }
        let e = s.renew("me", 2).unwrap_err();
        assert!(e.lasting && e.message.contains("deleted or replaced"), "{e:?}");
        // Replaced by a new file at the same path: refused too.
        drop(SqliteStore::open(&path, Synchronous::Normal).unwrap());
        assert!(s.renew("me", 3).unwrap_err().lasting);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
