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

use std::time::Duration;

use postgres::{Client, NoTls, Row};

use super::migrations;
use super::rows::{approval_json, decided_approval, existing, stored_approval, too_late, Existing};
use super::{
    denied_outcome, task_call_key, task_json, Claim, ClaimAnswer, DecideAnswer, Decision, DueCursor, Effect, JournalError, JournalStore, Record,
    RecordAnswer, RowKey, RowState, StoredApproval, TaskOp, TaskRow, Verdict,
};
use serde_json::Value;
use crate::error::ToolError;

/// The channel writes notify on.
pub const CHANNEL: &str = "toolhost_journal";

/// A journal in a Postgres database.
pub struct PostgresStore {
    config: postgres::Config,
    client: Option<Client>,
    label: String,
}

fn unavailable(label: &str, e: &postgres::Error) -> JournalError {
    let mut why = e.to_string();
    if let Some(db) = e.as_db_error() {
        why = format!("{}: {}", db.code().code(), db.message());
    } else if let Some(source) = std::error::Error::source(e) {
        why = format!("{why}: {source}");
    }
    JournalError::unavailable(format!("the Postgres journal {label}: {why}"))
}

/// `postgres://user@host:port/db` without the password, for messages.
fn label_of(config: &postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("at postgres://{}@{host}:{port}/{}", config.get_user().unwrap_or(""), config.get_dbname().unwrap_or(""))
}

impl PostgresStore {
    /// Connects and brings the schema up to date.
    ///
    /// # Errors
    /// `JOURNAL_UNAVAILABLE` when the server cannot be reached or refuses; `JOURNAL_SCHEMA_NEWER`.
    pub fn open(mut config: postgres::Config) -> Result<Self, JournalError> {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("toolhost");
        let label = label_of(&config);
        let mut store = Self { config, client: None, label };
        store.connect()?;
        store.migrate()?;
        Ok(store)
    }

    /// How it connects (the worker's listener opens a connection of its own with it).
    pub fn config(&self) -> &postgres::Config {
        &self.config
    }

    fn connect(&mut self) -> Result<&mut Client, JournalError> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            self.client = None;
            let client = self.config.connect(NoTls).map_err(|e| unavailable(&self.label, &e))?;
            self.client = Some(client);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    fn migrate(&mut self) -> Result<(), JournalError> {
        let label = self.label.clone();
        let err = |e: postgres::Error| unavailable(&label, &e);
        let client = self.connect()?;
        let mut tx = client.transaction().map_err(err)?;
        // Processes opening a new database at the same moment take turns.
        tx.execute("SELECT pg_advisory_xact_lock(727174007)", &[]).map_err(err)?;
        tx.batch_execute(migrations::META_TABLE).map_err(err)?;
        let current: i64 = match tx.query_opt("SELECT value FROM toolhost_meta WHERE name = 'schema_version'", &[]).map_err(err)? {
            None => 0,
            Some(row) => {
                let v: String = row.get(0);
                v.parse().map_err(|_| {
                    JournalError::unavailable(format!("the Postgres journal {label}: its toolhost_meta schema_version is {v:?}, not a number: the database was edited, or another program uses these tables"))
                })?
            }
        };
        let todo = migrations::pending(migrations::POSTGRES, current, &label)?;
        for m in todo {
            tx.batch_execute(m.sql).map_err(err)?;
        }
        if !todo.is_empty() {
            tx.execute(
                "INSERT INTO toolhost_meta (name, value) VALUES ('schema_version', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                &[&migrations::latest(migrations::POSTGRES).to_string()],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// Runs `f` on the connection, connecting first if it was lost.
    fn with<T>(&mut self, f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>) -> Result<T, JournalError> {
        let label = self.label.clone();
        let client = self.connect()?;
        f(client).map_err(|e| unavailable(&label, &e))
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

fn notify(c: &mut Client) -> Result<(), postgres::Error> {
    c.batch_execute(&format!("NOTIFY {CHANNEL}"))
}

fn select_row(c: &mut Client, row: &RowKey) -> Result<Option<RowState>, postgres::Error> {
    Ok(c.query_opt(&format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE scope = $1 AND key = $2"), &[&row.scope, &row.key])?.map(|r| read_row(&r)))
}

fn claim_one(c: &mut Client, owner: &str, lease_until: i64, now: i64, claim: &Claim) -> Result<ClaimAnswer, postgres::Error> {
    let (state, approval_id, approval) = match &claim.approval {
        Some(a) => ("awaiting", Some(a.approval_id.as_str()), Some(to_json(&approval_json(&a.approval_id, a.requested_at, a.expires_at)))),
        None => ("running", None, None),
    };
    let insert = c.prepare(
        "INSERT INTO toolhost_calls (scope, key, fingerprint, tool, effect, state, owner, fence, lease_until, args, execution_id, tool_call_id, approval_id, approval, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (scope, key) DO NOTHING",
    )?;
    let inserted = c.execute(
        &insert,
        &[
            &claim.row.scope, &claim.row.key, &claim.fingerprint, &claim.tool, &claim.effect.as_str(), &state, &owner, &lease_until, &claim.args,
            &claim.execution_id, &claim.tool_call_id, &approval_id, &approval, &now,
        ],
    )?;
    if inserted == 1 {
        return Ok(ClaimAnswer::Claimed { fence: 1, taken_over: None });
    }
    // The key exists: decide from the row; a write on it is a compare-and-set on its
    // fence, read again when another process changed it first.
    loop {
        let Some(r) = c.query_opt(&format!("SELECT fingerprint, {ROW_COLUMNS} FROM toolhost_calls WHERE scope = $1 AND key = $2"), &[&claim.row.scope, &claim.row.key])? else {
            // Released meanwhile: claim it afresh.
            return claim_one(c, owner, lease_until, now, claim);
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
                    "UPDATE toolhost_calls SET owner = $1, fence = fence + 1, lease_until = $2 WHERE scope = $3 AND key = $4 AND fence = $5",
                    &[&owner, &lease_until, &claim.row.scope, &claim.row.key, &row.fence],
                )?;
                if n == 1 {
                    return Ok(ClaimAnswer::Claimed { fence: row.fence + 1, taken_over: Some(Box::new(row)) });
                }
            }
            Existing::End(outcome) => {
                let n = c.execute(
                    "UPDATE toolhost_calls SET state = 'done', outcome = $1, finished_at = $2, lease_until = 0, fence = fence + 1 WHERE scope = $3 AND key = $4 AND fence = $5",
                    &[&to_json(&outcome), &now, &claim.row.scope, &claim.row.key, &row.fence],
                )?;
                if n == 1 {
                    notify(c)?;
                    return Ok(ClaimAnswer::Finished(outcome));
                }
            }
        }
    }
}

impl JournalStore for PostgresStore {
    fn claim(&mut self, owner: &str, lease_until: i64, now: i64, claims: &[Claim]) -> Result<Vec<ClaimAnswer>, JournalError> {
        self.with(|c| claims.iter().map(|claim| claim_one(c, owner, lease_until, now, claim)).collect())
    }

    fn record(&mut self, now: i64, records: &[Record]) -> Result<Vec<RecordAnswer>, JournalError> {
        self.with(|c| {
            let update = c.prepare(
                "UPDATE toolhost_calls SET state = 'done', outcome = $1, finished_at = $2, lease_until = 0 WHERE scope = $3 AND key = $4 AND fence = $5 AND state <> 'done'",
            )?;
            let mut answers = Vec::with_capacity(records.len());
            for r in records {
                if c.execute(&update, &[&to_json(&r.outcome), &now, &r.row.scope, &r.row.key, &r.fence])? == 1 {
                    answers.push(RecordAnswer::Recorded);
                } else {
                    answers.push(RecordAnswer::Fenced(select_row(c, &r.row)?.and_then(|row| row.outcome)));
                }
            }
            if !records.is_empty() {
                notify(c)?;
            }
            Ok(answers)
        })
    }

    fn release(&mut self, rows: &[(RowKey, i64)]) -> Result<(), JournalError> {
        self.with(|c| {
            for (row, fence) in rows {
                c.execute("DELETE FROM toolhost_calls WHERE scope = $1 AND key = $2 AND fence = $3 AND state <> 'done'", &[&row.scope, &row.key, fence])?;
            }
            if !rows.is_empty() {
                notify(c)?;
            }
            Ok(())
        })
    }

    fn start(&mut self, owner: &str, lease_until: i64, rows: &[(RowKey, i64)]) -> Result<Vec<bool>, JournalError> {
        self.with(|c| {
            rows.iter()
                .map(|(row, fence)| {
                    Ok(c.execute(
                        "UPDATE toolhost_calls SET state = 'running', owner = $1, lease_until = $2 WHERE scope = $3 AND key = $4 AND fence = $5 AND state IN ('approved', 'running')",
                        &[&owner, &lease_until, &row.scope, &row.key, fence],
                    )? == 1)
                })
                .collect()
        })
    }

    fn decide(&mut self, decision: &Decision, check: &dyn Fn(&StoredApproval) -> Result<(), ToolError>) -> Result<DecideAnswer, JournalError> {
        self.with(|c| {
            let Some(r) = c.query_opt(
                &format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE approval_id = $1 AND state = 'awaiting'"),
                &[&decision.approval_id],
            )?
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
                )?,
                Verdict::Deny { reason } => {
                    let outcome = denied_outcome(&row.tool, &row.execution_id, reason, approval.clone(), decision.now_ms);
                    c.execute(
                        "UPDATE toolhost_calls SET state = 'done', approval = $1, outcome = $2, finished_at = $3, lease_until = 0 WHERE approval_id = $4 AND state = 'awaiting'",
                        &[&to_json(&approval), &to_json(&outcome), &(decision.now_ms as i64), &decision.approval_id],
                    )?
                }
            };
            if n == 0 {
                return Ok(DecideAnswer::NotFound);
            }
            notify(c)?;
            Ok(DecideAnswer::Decided(stored))
        })
    }

    fn approvals(&mut self) -> Result<Vec<StoredApproval>, JournalError> {
        self.with(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE state = 'awaiting' \
                     AND COALESCE((approval::jsonb ->> 'expiresAt')::float8 > $1, true) ORDER BY created_at, key"
                ),
                &[&crate::record::now_ms()],
            )?;
            Ok(rows.iter().map(|r| stored_approval(&read_row(r))).collect())
        })
    }

    fn rows(&mut self, rows: &[RowKey]) -> Result<Vec<RowState>, JournalError> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        self.with(|c| {
            let scopes: Vec<&str> = rows.iter().map(|r| r.scope.as_str()).collect();
            let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
            let found = c.query(
                &format!("SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE (scope, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))"),
                &[&scopes, &keys],
            )?;
            Ok(found.iter().map(read_row).collect())
        })
    }

    fn renew(&mut self, owner: &str, lease_until: i64) -> Result<(), JournalError> {
        self.with(|c| c.execute("UPDATE toolhost_calls SET lease_until = $1 WHERE owner = $2 AND state <> 'done'", &[&lease_until, &owner]).map(drop))
    }

    fn due(&mut self, now: i64, after: Option<&DueCursor>, limit: usize) -> Result<Vec<RowState>, JournalError> {
        let (lease, scope, key) = match after {
            Some((lease, row)) => (*lease, row.scope.as_str(), row.key.as_str()),
            None => (i64::MIN, "", ""),
        };
        self.with(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {ROW_COLUMNS} FROM toolhost_calls WHERE state <> 'done' AND lease_until < $1 \
                     AND NOT (state = 'awaiting' AND COALESCE((approval::jsonb ->> 'expiresAt')::float8 > $6, true)) \
                     AND (lease_until, scope, key) > ($3, $4, $5) ORDER BY lease_until, scope, key LIMIT $2"
                ),
                &[&now, &(limit as i64), &lease, &scope, &key, &(now as f64)],
            )?;
            Ok(rows.iter().map(read_row).collect())
        })
    }

    fn take_over(&mut self, owner: &str, lease_until: i64, now: i64, row: &RowKey, fence: i64, state: &str) -> Result<Option<i64>, JournalError> {
        self.with(|c| {
            let n = c.execute(
                "UPDATE toolhost_calls SET owner = $1, fence = fence + 1, lease_until = $2, state = $3 \
                 WHERE scope = $4 AND key = $5 AND fence = $6 AND lease_until < $7 AND state <> 'done'",
                &[&owner, &lease_until, &state, &row.scope, &row.key, &fence, &now],
            )?;
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
        self.with(|c| match op {
            TaskOp::Create(t) => {
                c.execute(
                    "INSERT INTO toolhost_tasks (task_id, status, status_message, ttl, poll_interval, created_at, last_updated, result) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)",
                    &[&t.task_id, &t.status, &t.status_message, &t.ttl, &t.poll_interval, &t.created_at, &t.last_updated],
                )?;
                Ok(serde_json::to_value(t).unwrap_or(Value::Null))
            }
            TaskOp::Get { task_id } => {
                let task = c.query_opt(&format!("SELECT {COLUMNS} FROM toolhost_tasks WHERE task_id = $1"), &[task_id])?.map(|r| read(&r));
                let call = if task.is_some() { select_row(c, &task_call_key(task_id))? } else { None };
                Ok(task_json(task, call))
            }
            TaskOp::Update { task_id, status, status_message, result, now } => {
                let n = c.execute(
                    "UPDATE toolhost_tasks SET status = $1, status_message = COALESCE($2, status_message), result = COALESCE($3, result), last_updated = $4 WHERE task_id = $5 AND status NOT IN ('completed', 'failed', 'cancelled')",
                    &[status, status_message, &result.as_ref().map(|r| r.to_string()), now, task_id],
                )?;
                if n == 1 {
                    notify(c)?;
                }
                Ok(Value::Bool(n == 1))
            }
            TaskOp::List { cursor, limit } => {
                let rows = c.query(
                    &format!("SELECT {COLUMNS} FROM toolhost_tasks WHERE task_id > $1 ORDER BY task_id LIMIT $2"),
                    &[&cursor.as_deref().unwrap_or(""), &(*limit as i64)],
                )?;
                Ok(serde_json::to_value(rows.iter().map(read).collect::<Vec<_>>()).unwrap_or(Value::Null))
            }
        })
    }

    fn prune(&mut self, done_before: i64, stale_before: i64) -> Result<u64, JournalError> {
        self.with(|c| {
            c.execute("DELETE FROM toolhost_tasks WHERE ttl IS NOT NULL AND created_at + ttl < $1", &[&(crate::record::now_ms() as i64)])?;
            c.execute(
                "DELETE FROM toolhost_calls WHERE ctid IN (SELECT ctid FROM toolhost_calls \
                 WHERE (state = 'done' AND finished_at < $1) OR (state = 'running' AND effect <> 'once' AND lease_until < $2) LIMIT 10000)",
                &[&done_before, &stale_before],
            )
        })
    }
}
