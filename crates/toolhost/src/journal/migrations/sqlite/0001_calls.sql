-- One row per idempotency key (scoped by session): who holds it, its state, and its
-- outcome once finished. Times are milliseconds since the Unix epoch.
--
-- Every index is written by every claim and outcome, so there are few: the key, unfinished
-- rows by lease (recovery; renewal by owner scans these), finished rows by time (pruning),
-- and approval ids.
-- WITHOUT ROWID: the table is the key's b-tree, one page write less per commit.
CREATE TABLE toolhost_calls (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  tool TEXT NOT NULL,
  effect TEXT NOT NULL,
  state TEXT NOT NULL,
  owner TEXT NOT NULL,
  fence INTEGER NOT NULL,
  lease_until INTEGER NOT NULL,
  args TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  tool_call_id TEXT,
  approval_id TEXT,
  approval TEXT,
  outcome TEXT,
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID;
CREATE UNIQUE INDEX toolhost_calls_approval ON toolhost_calls (approval_id) WHERE approval_id IS NOT NULL;
CREATE INDEX toolhost_calls_lease ON toolhost_calls (lease_until) WHERE state <> 'done';
CREATE INDEX toolhost_calls_finished ON toolhost_calls (finished_at) WHERE state = 'done';
