-- MCP tasks a server with a journal answers (the SDK's TaskStore): a task's own facts.
-- Its call is the row of toolhost_calls keyed 'task:<task_id>', whose state and outcome
-- the task's status and result follow until a result is stored here.
CREATE TABLE toolhost_tasks (
  task_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  status_message TEXT,
  ttl BIGINT,
  poll_interval BIGINT,
  created_at BIGINT NOT NULL,
  last_updated BIGINT NOT NULL,
  result TEXT
);
