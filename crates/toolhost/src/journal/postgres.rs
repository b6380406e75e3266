//! The journal on Postgres, for many processes on many machines.
//!
//! Every write is one statement that checks what it changes (an insert that does nothing
//! when the key exists, updates guarded by the row's fencing token), so the common path
//! costs one round trip per claim and one per outcome, with no explicit transaction.
//! A write that callers may be waiting for (an outcome, an approval decision, a released
//! key) sends `NOTIFY toolhost_journal`: the worker listens on its own connection and
//! looks at what it waits for at once instead of at its next poll.
//!
//! A lost connection fails the calls that needed it (`JOURNAL_UNAVAILABLE`); the next
//! request reconnects, and the worker retries outcomes until they are written.
//!
//! Nothing waits on the server unbounded: the store runs `tokio-postgres` on a
//! current-thread runtime of its own, connecting (TCP and the startup handshake) within
//! the connect timeout and every operation within [`PostgresStore::deadline`]. A server
//! that accepts connections but never answers (stopped, frozen, a proxy with nothing
//! behind it) fails the operation `JOURNAL_UNAVAILABLE`; the connection is dropped, its
//! state being unknown, and the next operation connects again.

use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls, Row};

use super::migrations;
use super::rows::{approval_json, decided_approval, existing, stored_approval, too_late, Existing};
use super::{
    denied_outcome, task_call_key, task_json, Claim, ClaimAnswer, DecideAnswer, Decision, DueCursor, Effect, JournalError, JournalStore, Record,
    RecordAnswer, RowKey, RowState, StoredApproval, TakeOver, TaskOp, TaskRow, Verdict,
};
use serde_json::Value;
use crate::error::ToolError;

/// The channel writes notify on.
pub const CHANNEL: &str = "toolhost_journal";

/// How long connecting may take when the URL does not say (`connect_timeout`).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an operation (a statement, or the few of a batch) may take by default.
///
/// Healthy operations take milliseconds; the longest are a batch of claims on a busy
/// server, pruning (10,000 rows at most) and opening a new database while another
/// process migrates it (they take turns on a lock). 30 s leaves those room on a loaded
/// server, and a caller waiting on a server that stopped answering hears of it within
/// 30 s (plus the connect timeout, when its request is the first after the loss).
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A current-thread runtime that is shut down without waiting when dropped: a store may
/// be dropped inside another runtime (a failed `ToolExecutor::with_journal`), where a
/// runtime cannot wait for its blocking threads (a name lookup).
struct Rt(Option<Runtime>);

impl Rt {
    fn get(&self) -> &Runtime {
        self.0.as_ref().expect("the runtime lives as long as the store")
    }
}

impl Drop for Rt {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// A current-thread runtime with timers and sockets, for a connection of the journal's.
pub(super) fn runtime() -> std::io::Result<Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()
}

/// After connecting timed out, how long operations fail at once instead of trying again:
/// the journal thread's operations of one turn (a batch of claims, renewing, listing,
/// pruning) then wait out one connect timeout together, not one each.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

/// A journal in a Postgres database.
pub struct PostgresStore {
    config: tokio_postgres::Config,
    /// The connection: its client, and the task that drives it on `rt`.
    client: Option<(Client, JoinHandle<()>)>,
    label: String,
    connect_timeout: Duration,
    deadline: Duration,
    /// When connecting last timed out, and its error (see [`RECONNECT_PAUSE`]).
    unanswered: Option<(std::time::Instant, JournalError)>,
    rt: Rt,
}

fn unavailable(label: &str, e: &tokio_postgres::Error) -> JournalError {
    let mut why = e.to_string();
    if let Some(db) = e.as_db_error() {
        why = format!("{}: {}", db.code().code(), db.message());
    } else if let Some(source) = std::error::Error::source(e) {
        why = format!("{why}: {source}");
    }
    JournalError::unavailable(format!("the Postgres journal {label}: {why}"))
}

/// `postgres://user@host:port/db` without the password, for messages.
fn label_of(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("at postgres://{}@{host}:{port}/{}", config.get_user().unwrap_or(""), config.get_dbname().unwrap_or(""))
}

impl PostgresStore {
    /// Connects and brings the schema up to date, each operation bounded by [`DEADLINE`].
    ///
    /// # Errors
    /// `JOURNAL_UNAVAILABLE` when the server cannot be reached, refuses, or does not
    /// answer within the connect timeout; `JOURNAL_SCHEMA_NEWER`.
    pub fn open(config: tokio_postgres::Config) -> Result<Self, JournalError> {
        Self::open_with_deadline(config, DEADLINE)
    }

    /// [`PostgresStore::open`], every operation after connecting bounded by `deadline`
    /// (opening's own migration included).
    ///
    /// # Errors
    /// As [`PostgresStore::open`].
    pub fn open_with_deadline(mut config: tokio_postgres::Config, deadline: Duration) -> Result<Self, JournalError> {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("toolhost");
        let connect_timeout = config.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT);
        let label = label_of(&config);
        let rt = runtime().map_err(|e| JournalError::unavailable(format!("the Postgres journal {label}: its runtime could not start: {e}")))?;
        let mut store = Self { config, client: None, label, connect_timeout, deadline, unanswered: None, rt: Rt(Some(rt)) };
        store.connect()?;
        store.migrate()?;
        Ok(store)
    }

    /// How it connects (the worker's listener opens a connection of its own with it).
    pub fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    /// How long an operation may take before it fails `JOURNAL_UNAVAILABLE` and the
    /// connection is dropped ([`DEADLINE`] unless set).
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Sets [`PostgresStore::deadline`] for the operations after this one.
    pub fn set_deadline(&mut self, deadline: Duration) {
        self.deadline = deadline;
    }

    /// How long connecting may take (the URL's `connect_timeout`, else [`CONNECT_TIMEOUT`]).
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// Connects if there is no connection, within the connect timeout: TCP and the startup
    /// handshake, which the driver's own `connect_timeout` does not bound.
    fn connect(&mut self) -> Result<(), JournalError> {
        if self.client.as_ref().is_some_and(|(c, _)| !c.is_closed()) {
            return Ok(());
        }
        self.disconnect();
        if let Some((at, e)) = &self.unanswered {
            if at.elapsed() < RECONNECT_PAUSE {
                return Err(e.clone());
            }
        }
        let (config, within) = (&self.config, self.connect_timeout);
        let connected = self.rt.get().block_on(async {
            let connected = tokio::time::timeout(within, config.connect(NoTls)).await;
            connected.map(|c| {
                c.map(|(client, connection)| {
                    let task = tokio::spawn(async move {
                        let _ = connection.await;
                    });
                    (client, task)
                })
            })
        });
        match connected {
            Ok(Ok(client)) => {
                self.unanswered = None;
                self.client = Some(client);
                Ok(())
            }
            Ok(Err(e)) => Err(unavailable(&self.label, &e)),
            Err(_) => {
                let e = JournalError::unavailable(format!(
                    "the Postgres journal {}: connecting timed out after {} ms (the server accepts connections but does not answer)",
                    self.label,
                    within.as_millis()
                ));
                self.unanswered = Some((std::time::Instant::now(), e.clone()));
                Err(e)
            }
        }
    }

    /// Forgets the connection, ending its task at once: after a timeout its state is
    /// unknown, and a frozen server would keep the task waiting.
    fn disconnect(&mut self) {
        if let Some((_, task)) = self.client.take() {
            task.abort();
        }
    }

    fn migrate(&mut self) -> Result<(), JournalError> {
        let label = self.label.clone();
        self.with(async |client| {
            let tx = client.transaction().await?;
            // Processes opening a new database at the same moment take turns.
            tx.execute("SELECT pg_advisory_xact_lock(727174007)", &[]).await?;
            tx.batch_execute(migrations::META_TABLE).await?;
            let current: i64 = match tx.query_opt("SELECT value FROM toolhost_meta WHERE name = 'schema_version'", &[]).await? {
                None => 0,
                Some(row) => {
                    let v: String = row.get(0);
                    match v.parse() {
                        Ok(n) => n,
                        Err(_) => {
                            return Ok(Err(JournalError::unavailable(format!(
                                "the Postgres journal {label}: its toolhost_meta schema_version is {v:?}, not a number: the database was edited, or another program uses these tables"
                            ))))
                        }
                    }
                }
            };
            let todo = match migrations::pending(migrations::POSTGRES, current, &label) {
                Ok(todo) => todo,
                Err(e) => return Ok(Err(e)),
            };
            for m in todo {
                tx.batch_execute(m.sql).await?;
            }
            if !todo.is_empty() {
                tx.execute(
                    "INSERT INTO toolhost_meta (name, value) VALUES ('schema_version', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    &[&migrations::latest(migrations::POSTGRES).to_string()],
                )
                .await?;
            }
            tx.commit().await.map(Ok)
        })?
    }

    /// Runs `f` on the connection, connecting first if it was lost, within the deadline.
    /// An operation past it fails and drops the connection: what the server made of it
    /// is unknown (a write may land later), so the next operation starts afresh.
    fn with<T>(&mut self, f: impl AsyncFnOnce(&mut Client) -> Result<T, tokio_postgres::Error>) -> Result<T, JournalError> {
        self.connect()?;
        let deadline = self.deadline;
        let (client, _) = self.client.as_mut().expect("connected above");
        // The timer is made inside the runtime, which it needs.
        // Failing once connected, the request may have been written (its answer lost).
        match self.rt.get().block_on(async { tokio::time::timeout(deadline, f(client)).await }) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(JournalError { maybe_written: true, ..unavailable(&self.label, &e) }),
            Err(_) => {
                self.disconnect();
                Err(JournalError {
                    maybe_written: true,
                    ..JournalError::unavailable(format!(
                        "the Postgres journal {}: timed out after {} ms with no answer from the server; the connection is dropped and the next request connects again",
                        self.label,
                        deadline.as_millis()
                    ))
                })
            }
        }
    }
}

impl Drop for PostgresStore {
    /// Closes the connection as the server expects (a `Terminate` message), waiting a
    /// moment at most; inside another runtime it is only dropped.
    fn drop(&mut self) {
        if let Some((client, task)) = self.client.take() {
            drop(client);
            if tokio::runtime::Handle::try_current().is_err() {
                let _ = self.rt.get().block_on(async { tokio::time::timeout(Duration::from_millis(100), task).await });
            }
        }
    }
}

const ROW_COLUMNS: &str = "scope, key, state, owner, fence, lease_until, effect, tool, args, execution_id, tool_call_id, approval_id, approval, outcome";

fn read_row(r: &Row) -> RowState {
    let approval: Option<String> = r.get(12);
    let outcome: Option<String> = r.get(13);
    RowState {
        row: RowKey { scope: r.get(0), key: r.get(1) },
        state: r.get(2),
        owner: r.get(3),
        fence: r.get(4),
        lease_until: r.get(5),
        effect: Effect::parse(r.get::<_, &str>(6)).unwrap_or_default(),
        tool: r.get(7),
        args: r.get(8),
        execution_id: r.get(9),
        tool_call_id: r.get(10),
        approval_id: r.get(11),
        approval: approval.and_then(|a| serde_json::from_str(&a).ok()),
        outcome: outcome.and_then(|o| serde_json::from_str(&o).ok()),
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

async fn notify(c: &Client) -> Result<(), tokio_postgres::Error> {
    c.batch_execute(&format!("NOTIFY {CHANNEL}")).await
}

async fn select_row(c: &Client, row: &RowKey) -> Result<Option<RowState>, tokio_postgres::Error> {
    Ok(c.query_opt(&format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE scope = $1 AND key = $2"), &[&row.scope, &row.key]).await?.map(|r| read_row(&r)))
}

async fn claim_one(c: &Client, owner: &str, lease_until: i64, now: i64, claim: &Claim) -> Result<ClaimAnswer, tokio_postgres::Error> {
    let (state, approval_id, approval) = match &claim.approval {
        Some(a) => ("awaiting", Some(a.approval_id.as_str()), Some(to_json(&approval_json(&a.approval_id, a.requested_at, a.expires_at)))),
        None => ("running", None, None),
    };
    let insert = c.prepare(
        "INSERT INTO toolhost_calls (scope, key, fingerprint, tool, effect, state, owner, fence, lease_until, args, execution_id, tool_call_id, approval_id, approval, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (scope, key) DO NOTHING",
    ).await?;
    let inserted = c.execute(
        &insert,
        &[
            &claim.row.scope, &claim.row.key, &claim.fingerprint, &claim.tool, &claim.effect.as_str(), &state, &owner, &lease_until, &claim.args,
            &claim.execution_id, &claim.tool_call_id, &approval_id, &approval, &now,
        ],
    ).await?;
    if inserted == 1 {
        return Ok(ClaimAnswer::Claimed { fence: 1, taken_over: None });
    }
    // The key exists: decide from the row; a write on it is a compare-and-set on its
    // fence, read again when another process changed it first.
    loop {
        let Some(r) = c.query_opt(&format!("SELECT fingerprint, {ROW_COLUMNS} FROM toolhost_calls WHERE scope = $1 AND key = $2"), &[&claim.row.scope, &claim.row.key]).await? else {
            // Released meanwhile: claim it afresh.
            return Box::pin(claim_one(c, owner, lease_until, now, claim)).await;
        };
        let fingerprint: String = r.get(0);
        let row = RowState {
            row: RowKey { scope: r.get(1), key: r.get(2) },
            state: r.get(3),
            owner: r.get(4),
            fence: r.get(5),
            lease_until: r.get(6),
            effect: Effect::parse(r.get::<_, &str>(7)).unwrap_or_default(),
            tool: r.get(8),
            args: r.get(9),
            execution_id: r.get(10),
            tool_call_id: r.get(11),
            approval_id: r.get(12),
            approval: r.get::<_, Option<String>>(13).and_then(|a| serde_json::from_str(&a).ok()),
            outcome: r.get::<_, Option<String>>(14).and_then(|o| serde_json::from_str(&o).ok()),
        };
        if fingerprint != claim.fingerprint {
            return Ok(ClaimAnswer::Conflict { tool: row.tool });
        }
        match existing(&row, now) {
            Existing::Answer(a) => return Ok(a),
            Existing::TakeOver => {
                let n = c.execute(
                    "UPDATE toolhost_calls SET owner = $1, fence = fence + 1, lease_until = $2, execution_id = $3 WHERE scope = $4 AND key = $5 AND fence = $6",
                    &[&owner, &lease_until, &claim.execution_id, &claim.row.scope, &claim.row.key, &row.fence],
                ).await?;
                if n == 1 {
                    return Ok(ClaimAnswer::Claimed { fence: row.fence + 1, taken_over: Some(Box::new(row)) });
                }
            }
            Existing::End(outcome, action) => {
                let n = c.execute(
                    "UPDATE toolhost_calls SET state = 'done', outcome = $1, finished_at = $2, lease_until = 0, fence = fence + 1 WHERE scope = $3 AND key = $4 AND fence = $5",
                    &[&to_json(&outcome), &now, &claim.row.scope, &claim.row.key, &row.fence],
                ).await?;
                if n == 1 {
                    notify(c).await?;
                    return Ok(ClaimAnswer::Ended { outcome, action });
                }
            }
        }
    }
}

impl JournalStore for PostgresStore {
    fn claim(&mut self, owner: &str, lease_until: i64, now: i64, claims: &[Claim]) -> Result<Vec<ClaimAnswer>, JournalError> {
        self.with(async |c| {
            let mut answers = Vec::with_capacity(claims.len());
            for claim in claims {
                answers.push(claim_one(c, owner, lease_until, now, claim).await?);
            }
            Ok(answers)
        })
    }

    fn record(&mut self, now: i64, records: &[Record]) -> Result<Vec<RecordAnswer>, JournalError> {
        self.with(async |c| {
            let update = c.prepare(
                "UPDATE toolhost_calls SET state = 'done', outcome = $1, finished_at = $2, lease_until = 0 WHERE scope = $3 AND key = $4 AND fence = $5 AND state <> 'done'",
            ).await?;
            let mut answers = Vec::with_capacity(records.len());
            for r in records {
                if c.execute(&update, &[&to_json(&r.outcome), &now, &r.row.scope, &r.row.key, &r.fence]).await? == 1 {
                    answers.push(RecordAnswer::Recorded);
                } else {
                    answers.push(RecordAnswer::Fenced(select_row(c, &r.row).await?.and_then(|row| row.outcome).map(Box::new)));
                }
            }
            if !records.is_empty() {
                notify(c).await?;
            }
            Ok(answers)
        })
    }

    fn release(&mut self, rows: &[(RowKey, i64)]) -> Result<(), JournalError> {
        self.with(async |c| {
            for (row, fence) in rows {
                c.execute("DELETE FROM toolhost_calls WHERE scope = $1 AND key = $2 AND fence = $3 AND state <> 'done'", &[&row.scope, &row.key, fence]).await?;
            }
            if !rows.is_empty() {
                notify(c).await?;
            }
            Ok(())
        })
    }

    fn forget(&mut self, owner: &str, rows: &[(RowKey, String)]) -> Result<(), JournalError> {
        self.with(async |c| {
            let mut changed = 0;
            for (row, execution_id) in rows {
                changed += c
                    .execute(
                        "DELETE FROM toolhost_calls WHERE scope = $1 AND key = $2 AND owner = $3 AND execution_id = $4 AND fence = 1 AND state <> 'done'",
                        &[&row.scope, &row.key, &owner, execution_id],
                    )
                    .await?;
                changed += c
                    .execute(
                        "UPDATE toolhost_calls SET owner = '', lease_until = 0 WHERE scope = $1 AND key = $2 AND owner = $3 AND execution_id = $4 AND fence > 1 AND state <> 'done'",
                        &[&row.scope, &row.key, &owner, execution_id],
                    )
                    .await?;
            }
            // A caller elsewhere may wait on the key.
            if changed > 0 {
                notify(c).await?;
            }
            Ok(())
        })
    }

    fn start(&mut self, owner: &str, lease_until: i64, rows: &[(RowKey, i64)]) -> Result<Vec<bool>, JournalError> {
        self.with(async |c| {
            let mut started = Vec::with_capacity(rows.len());
            for (row, fence) in rows {
                let n = c.execute(
                    "UPDATE toolhost_calls SET state = 'running', owner = $1, lease_until = $2 WHERE scope = $3 AND key = $4 AND fence = $5 AND state IN ('approved', 'running')",
                    &[&owner, &lease_until, &row.scope, &row.key, fence],
                ).await?;
                started.push(n == 1);
            }
            Ok(started)
        })
    }

    fn decide(&mut self, decision: &Decision, check: &dyn Fn(&StoredApproval) -> Result<(), ToolError>) -> Result<DecideAnswer, JournalError> {
        self.with(async |c| {
            let Some(r) = c.query_opt(
                &format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE approval_id = $1 AND state = 'awaiting'"),
                &[&decision.approval_id],
            ).await?
            else {
                return Ok(DecideAnswer::NotFound);
            };
            let row = read_row(&r);
            if too_late(&row, decision) {
                return Ok(DecideAnswer::NotFound);
            }
            let stored = stored_approval(&row);
            if let Err(e) = check(&stored) {
                return Ok(DecideAnswer::Refused(e));
            }
            let approval = decided_approval(row.approval.as_ref(), decision, &row.args);
            // The state in the WHERE clause makes exactly one decision win.
            let n = match &decision.verdict {
                Verdict::Approve { args } => c.execute(
                    "UPDATE toolhost_calls SET state = 'approved', approval = $1, args = COALESCE($2, args) WHERE approval_id = $3 AND state = 'awaiting'",
                    &[&to_json(&approval), args, &decision.approval_id],
                ).await?,
                Verdict::Deny { reason } => {
                    let outcome = denied_outcome(&row.tool, &row.execution_id, reason, approval.clone(), decision.now_ms);
                    c.execute(
                        "UPDATE toolhost_calls SET state = 'done', approval = $1, outcome = $2, finished_at = $3, lease_until = 0 WHERE approval_id = $4 AND state = 'awaiting'",
                        &[&to_json(&approval), &to_json(&outcome), &(decision.now_ms as i64), &decision.approval_id],
                    ).await?
                }
            };
            if n == 0 {
                return Ok(DecideAnswer::NotFound);
            }
            notify(c).await?;
            Ok(DecideAnswer::Decided(stored))
        })
    }

    fn approvals(&mut self) -> Result<Vec<StoredApproval>, JournalError> {
        self.with(async |c| {
            let rows = c.query(
                &format!(
                    "SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE state = 'awaiting' \
                     AND COALESCE((approval::jsonb ->> 'expiresAt')::float8 > $1, true) ORDER BY created_at, key"
                ),
                &[&crate::record::now_ms()],
            ).await?;
            Ok(rows.iter().map(|r| stored_approval(&read_row(r))).collect())
        })
    }

    fn rows(&mut self, rows: &[RowKey]) -> Result<Vec<RowState>, JournalError> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        self.with(async |c| {
            let scopes: Vec<&str> = rows.iter().map(|r| r.scope.as_str()).collect();
            let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
            let found = c.query(
                &format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE (scope, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))"),
                &[&scopes, &keys],
            ).await?;
            Ok(found.iter().map(read_row).collect())
        })
    }

    fn renew(&mut self, owner: &str, lease_until: i64) -> Result<(), JournalError> {
        self.with(async |c| c.execute("UPDATE toolhost_calls SET lease_until = $1 WHERE owner = $2 AND state <> 'done'", &[&lease_until, &owner]).await.map(drop))
    }

    fn due(&mut self, now: i64, after: Option<&DueCursor>, limit: usize) -> Result<Vec<RowState>, JournalError> {
        let (lease, scope, key) = match after {
            Some((lease, row)) => (*lease, row.scope.as_str(), row.key.as_str()),
            None => (i64::MIN, "", ""),
        };
        self.with(async |c| {
            let rows = c.query(
                &format!(
                    "SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE state <> 'done' AND lease_until < $1 \
                     AND NOT (state = 'awaiting' AND COALESCE((approval::jsonb ->> 'expiresAt')::float8 > $6, true)) \
                     AND (lease_until, scope, key) > ($3, $4, $5) ORDER BY lease_until, scope, key LIMIT $2"
                ),
                &[&now, &(limit as i64), &lease, &scope, &key, &(now as f64)],
            ).await?;
            Ok(rows.iter().map(read_row).collect())
        })
    }

    fn take_over(&mut self, owner: &str, lease_until: i64, now: i64, take: &TakeOver) -> Result<Option<i64>, JournalError> {
        let TakeOver { row, fence, state, execution_id } = take;
        self.with(async |c| {
            let n = c.execute(
                "UPDATE toolhost_calls SET owner = $1, fence = fence + 1, lease_until = $2, state = $3, execution_id = $4 \
                 WHERE scope = $5 AND key = $6 AND fence = $7 AND lease_until < $8 AND state <> 'done'",
                &[&owner, &lease_until, state, execution_id, &row.scope, &row.key, fence, &now],
            ).await?;
            Ok((n == 1).then_some(fence + 1))
        })
    }

    fn task(&mut self, op: &TaskOp) -> Result<Value, JournalError> {
        const COLUMNS: &str = "task_id, status, status_message, ttl, poll_interval, created_at, last_updated, result";
        let read = |r: &Row| TaskRow {
            task_id: r.get(0),
            status: r.get(1),
            status_message: r.get(2),
            ttl: r.get(3),
            poll_interval: r.get(4),
            created_at: r.get(5),
            last_updated: r.get(6),
            result: r.get::<_, Option<String>>(7).and_then(|t| serde_json::from_str(&t).ok()),
        };
        self.with(async |c| match op {
            TaskOp::Create(t) => {
                c.execute(
                    "INSERT INTO toolhost_tasks (task_id, status, status_message, ttl, poll_interval, created_at, last_updated, result) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)",
                    &[&t.task_id, &t.status, &t.status_message, &t.ttl, &t.poll_interval, &t.created_at, &t.last_updated],
                ).await?;
                Ok(serde_json::to_value(t).unwrap_or(Value::Null))
            }
            TaskOp::Get { task_id } => {
                let task = c.query_opt(&format!("SELECT {COLUMNS} FROM toolhost_tasks WHERE task_id = $1"), &[task_id]).await?.map(|r| read(&r));
                let call = if task.is_some() { select_row(c, &task_call_key(task_id)).await? } else { None };
                Ok(task_json(task, call))
            }
            TaskOp::Update { task_id, status, status_message, result, now } => {
                let n = c.execute(
                    "UPDATE toolhost_tasks SET status = $1, status_message = COALESCE($2, status_message), result = COALESCE($3, result), last_updated = $4 WHERE task_id = $5 AND status NOT IN ('completed', 'failed', 'cancelled')",
                    &[status, status_message, &result.as_ref().map(|r| r.to_string()), now, task_id],
                ).await?;
                if n == 1 {
                    notify(c).await?;
                }
                Ok(Value::Bool(n == 1))
            }
            TaskOp::List { cursor, limit } => {
                let rows = c.query(
                    &format!("SELECT {COLUMNS} FROM toolhost_tasks WHERE task_id > $1 ORDER BY task_id LIMIT $2"),
                    &[&cursor.as_deref().unwrap_or(""), &(*limit as i64)],
                ).await?;
                Ok(serde_json::to_value(rows.iter().map(read).collect::<Vec<_>>()).unwrap_or(Value::Null))
            }
        })
    }

    fn prune(&mut self, done_before: i64, stale_before: i64) -> Result<u64, JournalError> {
        self.with(async |c| {
            c.execute("DELETE FROM toolhost_tasks WHERE ttl IS NOT NULL AND created_at + ttl < $1", &[&(crate::record::now_ms() as i64)]).await?;
            c.execute(
                "DELETE FROM toolhost_calls WHERE ctid IN (SELECT ctid FROM toolhost_calls \
                 WHERE (state = 'done' AND finished_at < $1) OR (state = 'running' AND effect <> 'once' AND lease_until < $2) LIMIT 10000)",
                &[&done_before, &stale_before],
            )
            .await
        })
    }
}
