-- MCP tasks a server with a journal answers (the SDK's TaskStore): a task's own facts.
-- Its call is the row of toolhost_calls keyed 'task:<task_id>', whose state and outcome
-- the task's status and result follow until a result is stored here.
CREATE TABLE toolhost_tasks (
  task_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  status_message TEXT,
  ttl INTEGER,
  poll_interval INTEGER,
  created_at INTEGER NOT NULL,
  last_updated INTEGER NOT NULL,
  result TEXT
);
